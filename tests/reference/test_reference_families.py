"""The reference layer finds each family by its spec class, and refuses a CPU problem that would not fit in host
memory before allocating anything."""

from __future__ import annotations

import math

import pytest
import torch

import cudnn_lab.reference as ref
from cudnn_lab.errors import ResourceError, SpecError
from cudnn_lab.reference.common import (HOST_MEMORY_SHARE, REFERENCE_BYTES_PER_ELEMENT, available_host_memory,
                                        check_host_memory)
from cudnn_lab.specs import ConvSpec, MatmulSpec, NormSpec, PoolSpec, SdpaSpec, Spec, spec_classes
from cudnn_lab.specs.base import MAX_ELEMENTS

FAMILIES = list(spec_classes().values())
SMALL = {ConvSpec: dict(n=1, c=4, h=5, w=5, k=4), MatmulSpec: dict(m=4, n=5, k=3),
         SdpaSpec: dict(batch=1, heads=2, seq_q=8, seq_kv=8, head_dim=64), NormSpec: dict(rows=4, features=8),
         PoolSpec: dict(n=1, c=2, h=6, w=6)}


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_every_family_has_a_registered_reference(cls: type[Spec]) -> None:
    fam = ref.REFERENCES[cls]
    spec = cls(**SMALL.get(cls, {}))
    inputs = ref.make_inputs(spec)
    assert tuple(inputs) == fam.input_names(spec) == ref.input_names(spec)
    outputs = ref.make_outputs(spec)
    expected = ref.reference_outputs(spec, inputs)
    assert list(expected) == list(outputs)
    for name, t in outputs.items():
        assert t.isnan().all() and t.stride() == ref.tensor_strides(spec, name)
        assert expected[name].dtype == torch.float64 and expected[name].shape == t.shape
    main = next(iter(outputs))
    assert torch.equal(ref.reference(spec, inputs), expected[main])
    assert ref.torch_eager(spec, inputs).shape == outputs[main].shape


@pytest.mark.parametrize("call", [ref.make_inputs, ref.make_outputs, ref.make_output, ref.input_names])
def test_an_unregistered_family_is_named(call, unregistered_spec: Spec) -> None:
    with pytest.raises(SpecError) as info:
        call(unregistered_spec)
    assert info.value.value == "NewSpec" and "PyTorch reference" in str(info.value)


def test_non_specs_are_refused() -> None:
    with pytest.raises(SpecError, match="must be a cudnn_lab spec"):
        ref.make_inputs("conv")


def test_host_memory_guard_states_the_estimate_and_the_share() -> None:
    free = available_host_memory()
    assert free is not None and free > 0  # /proc/meminfo or sysconf on every CI machine
    check_host_memory(1, "nothing")
    with pytest.raises(ResourceError) as info:
        check_host_memory(free, "all of it")
    assert "host memory" in str(info.value) and f"{HOST_MEMORY_SHARE:.0%}" in str(info.value)
    assert info.value.needed_bytes == free


def test_a_problem_at_the_element_limit_is_refused_before_allocating() -> None:
    spec = MatmulSpec(batch=1, m=1 << 15, n=1 << 16, k=1, dtype="fp16")  # C holds exactly MAX_ELEMENTS
    assert math.prod(spec.tensor_shapes()["C"]) == MAX_ELEMENTS
    need = MAX_ELEMENTS * (2 + REFERENCE_BYTES_PER_ELEMENT)
    if need <= HOST_MEMORY_SHARE * available_host_memory():
        pytest.skip("this machine has room for the reference of a problem at the element limit")
    inputs = ref.make_inputs(spec)  # A and B are small
    with pytest.raises(ResourceError) as info:
        ref.reference_outputs(spec, inputs)
    assert "host memory" in str(info.value) and spec.label() in str(info.value)
    if MAX_ELEMENTS * 2 > HOST_MEMORY_SHARE * available_host_memory():
        with pytest.raises(ResourceError):
            ref.make_outputs(spec)
    ref.make_outputs(spec, device="meta")  # only the host is guarded


def test_inputs_are_guarded_whatever_the_device() -> None:
    spec = ConvSpec(n=1 << 10, c=64, h=128, w=256, k=1, r=1, s=1, padding=0, dtype="fp32")  # X at the limit
    need = MAX_ELEMENTS * (4 + 4)
    if need <= HOST_MEMORY_SHARE * available_host_memory():
        pytest.skip("this machine has room for inputs at the element limit")
    for device in ("cpu", "meta"):  # inputs are drawn on the host, then moved
        with pytest.raises(ResourceError, match="inputs"):
            ref.make_inputs(spec, device=device)
