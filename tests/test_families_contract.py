"""The op-family contract, complete for every registered family: each registry of each layer has the family, and each
hook a layer calls on a spec (declared on ``Spec``) answers for the family's default spec with a value of the right
type. README's "Adding an op family" lists exactly these steps; a family that misses one fails here, naming it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest

import cudnn_lab.gpu  # noqa: F401 - registers the plan sources
from cudnn_lab.gpu.explain import explain
from cudnn_lab.gpu.plans import PLAN_SOURCES
from cudnn_lab.graph import DRAWINGS, RECIPES, REFERENCE_CODE, SafeDigraph, drawing
from cudnn_lab.graph.families import reference_code
from cudnn_lab.numerics import TOLERANCES, band_args, tolerance_bands
from cudnn_lab.reference.families import REFERENCES, Reference
from cudnn_lab.registry import FamilyRegistry
from cudnn_lab.specs import Spec, spec_classes
from cudnn_lab.specs.base import DTYPE_BYTES
from cudnn_lab.specs.fp8 import GpuRequirement
from cudnn_lab.specs.tolerance import ToleranceBand
from cudnn_lab.sweeps import sweep_fields
from cudnn_lab.ui.fields import OPS

FAMILIES = list(spec_classes().values())
NO_ENGINE = "cudnnGraphNotSupportedError: No valid engine configs for this graph"
#: Registries every family must be in (a family's own entry, or the registry's default for it).
REQUIRED: tuple[FamilyRegistry, ...] = (RECIPES, REFERENCE_CODE, DRAWINGS, REFERENCES, PLAN_SOURCES)


def _names(x: object) -> bool:
    return isinstance(x, tuple) and all(isinstance(n, str) and n for n in x)


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_step1_spec_class_declares_what_a_family_is(cls: type[Spec]) -> None:
    assert cls.op and spec_classes()[cls.op] is cls
    assert isinstance(cls.title, str) and cls.title and isinstance(cls.description, str) and cls.description
    fields = {f.name for f in dataclasses.fields(cls)}
    assert set(cls.field_order) <= fields and len(set(cls.field_order)) == len(cls.field_order)
    assert isinstance(cls.menu_order, int) and cls.menu_order > 0
    spec = cls()
    assert spec_classes()[cls.op].from_dict(spec.to_dict()) == spec
    assert isinstance(spec.label(), str) and spec.label()
    assert isinstance(spec.flops(), int) and spec.flops() >= 0
    assert isinstance(spec.min_bytes(), int) and spec.min_bytes() > 0
    values = {"op": cls.op, **{f: getattr(spec, f) for f in fields}}
    assert all(isinstance(v, tuple) for v in cls.field_choices().values())
    assert all(len(r) == 2 for r in cls.field_limits(values).values())
    assert isinstance(cls.hidden_fields(values), frozenset) and cls.hidden_fields(values) <= fields
    assert all(isinstance(t, str) for t in cls.field_hints(values).values())


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_step1_every_tensor_hook_answers_for_the_same_tensors(cls: type[Spec]) -> None:
    spec = cls()
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    assert shapes and set(shapes) == set(strides) == set(dtypes)
    for name, dims in shapes.items():
        assert all(isinstance(d, int) and d > 0 for d in dims), name
        assert len(strides[name]) == len(dims) and all(isinstance(s, int) for s in strides[name]), name
        assert dtypes[name] in DTYPE_BYTES, name
    ins, out = spec.io_names()
    assert _names(ins) and set(ins) <= set(shapes) and spec.input_names() == ins
    outs = spec.output_names()
    assert _names(outs) and outs[0] == out and set(outs) <= set(shapes) and not set(outs) & set(ins)
    assert cls.tensor_axes is None or (isinstance(cls.tensor_axes, str) and cls.tensor_axes)


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_step1_gpu_requirements_and_refusal_hint_answer(cls: type[Spec]) -> None:
    spec = cls()
    reqs = spec.gpu_requirements()
    assert isinstance(reqs, tuple) and all(isinstance(r, GpuRequirement) for r in reqs)
    hint = spec.support_hint()
    assert isinstance(hint, str)
    assert explain(NO_ENGINE, spec).endswith(hint)  # explain() adds the family's own hint


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_step1_tolerances_are_the_familys_replacements_of_its_dtype_bands(cls: type[Spec]) -> None:
    args = band_args(cls())
    assert set(args) == {"dtype", "op", "out_dtype"} and args["dtype"] == cls().dtype
    assert args["op"] == cls.op or args["op"] in cls.tolerances
    for key, by_dtype in cls.tolerances.items():
        assert isinstance(by_dtype, Mapping) and key.startswith(cls.op)
        for dtype, bands in by_dtype.items():
            assert dtype in TOLERANCES and set(bands) <= {"torch", "cudnn"}
            assert all(isinstance(b, ToleranceBand) for b in bands.values())
            assert {n: tolerance_bands(dtype, key)[n] for n in bands} == dict(bands)  # numerics applies them


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_step1_sweep_axes_are_fields_a_sweep_varies(cls: type[Spec]) -> None:
    assert isinstance(cls.sweep_axes, tuple) and len(cls.sweep_axes) <= 2
    assert set(cls.sweep_axes) <= set(sweep_fields(cls))


def test_step1_menu_order_is_unique_and_is_the_labs_menu() -> None:
    orders = [cls.menu_order for cls in FAMILIES]
    assert len(set(orders)) == len(orders) and orders == sorted(orders)
    assert list(OPS.values()) == FAMILIES


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_steps2_to_4_every_layer_registry_has_the_family(cls: type[Spec]) -> None:
    for registry in REQUIRED:
        assert cls in registry, (registry.what, cls.__name__)
    spec = cls()
    assert isinstance(drawing(spec), SafeDigraph)
    assert reference_code(spec)[-1] == "return y"
    ref = REFERENCES[cls]
    assert isinstance(ref, Reference) and ref.input_names(spec) == spec.input_names()


def test_registries_hold_only_registered_families() -> None:
    families = set(FAMILIES) | {Spec}  # a default for every family is registered on Spec itself
    for registry in REQUIRED:
        stale = [c.__name__ for c in registry if c not in families]
        assert not stale, (registry.what, stale)


def test_the_contracts_hooks_are_declared_on_spec() -> None:
    for hook in ("tensor_shapes", "tensor_strides", "tensor_dtypes", "io_names", "input_names", "output_names",
                 "gpu_requirements", "support_hint", "tolerance_args", "flops", "min_bytes", "label"):
        assert callable(getattr(Spec, hook)), hook
    for attr in ("op", "title", "description", "field_order", "menu_order", "tensor_axes", "sweep_axes",
                 "tolerances"):
        assert attr in Spec.__dict__, attr


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_step1_the_what_if_and_plot_hooks_answer(cls: type[Spec]) -> None:
    """block_whatif, sm_scaling and plots.run ask the family these, never its class or op."""
    for hook in ("check_block_scale", "gemm_mn", "classic_calls"):
        assert callable(getattr(Spec, hook)) and hook in Spec.__dict__, hook
    assert "block_scale_axis" in Spec.__dict__
    spec = cls()
    assert cls.block_scale_axis in (None, "K", "C")
    if cls.block_scale_axis is not None:
        assert spec.check_block_scale() is None  # the family's default problem is one a block format scales
        assert cls.block_scale_axis == "K" or "groups" in {f.name for f in dataclasses.fields(cls)}
    mn = spec.gemm_mn()
    assert mn is None or (len(mn) == 2 and all(isinstance(d, int) and d > 0 for d in mn))
    assert mn is not None or cls.block_scale_axis is None  # a block-scaled product is a GEMM
    calls = spec.classic_calls()
    assert isinstance(calls, tuple) and all(isinstance(c, str) and c.startswith("cudnn") for c in calls)
