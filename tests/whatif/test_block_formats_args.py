"""Block formats' arguments refused with the kit's errors naming them (issue 37): the CPU FLOP limit (NaN would turn
the CPU guard off), a missing spec, and a deviceless graph asked where the cuDNN library cannot be loaded."""

from __future__ import annotations

from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import NoGPUError, OptionError
from cudnn_lab.whatif import block_formats as bf
from cudnn_lab.whatif import devices

MM = cl.MatmulSpec(batch=1, m=64, n=64, k=64, dtype="bf16")


def _cudnn_loads() -> bool:
    import cudnn

    try:
        cudnn.backend_version()
    except Exception:  # noqa: BLE001 - no library on this host
        return False
    return True


@pytest.mark.parametrize("limit", [float("nan"), float("inf"), -1.0, 0, True, "1e9", [1e9]])
def test_a_bad_cpu_flop_limit_is_refused_naming_it(limit: Any) -> None:
    with pytest.raises(OptionError, match="cpu_flop_limit"):
        bf.block_format_whatif(MM, cpu_flop_limit=limit)


def test_a_cpu_flop_limit_still_guards_the_cpu() -> None:
    assert bf.block_format_whatif(MM, cpu_flop_limit=1e12).output_rel_l2 >= 0
    with pytest.raises(cl.SpecError, match="CPU limit"):
        bf.block_format_whatif(MM, cpu_flop_limit=1e3)


@pytest.mark.parametrize("call", [bf.block_scale_plans, bf.ask_block_scaled, bf.block_scaled_graph,
                                  bf.block_format_whatif])
@pytest.mark.parametrize("spec", [None, "matmul", cl.SoftmaxSpec(n=2, c=8, h=1, w=1, dtype="fp16")])
def test_a_missing_or_foreign_spec_is_refused_naming_it(call: Any, spec: Any) -> None:
    with pytest.raises(OptionError, match="spec"):
        call(spec)


def test_recorded_must_be_none_or_a_bool() -> None:
    with pytest.raises(OptionError, match="recorded"):
        bf.block_scale_plans(MM, recorded="yes")


def test_a_deviceless_graph_without_the_cudnn_library_is_the_kits_error() -> None:
    description = devices.target("sm100").description
    if _cudnn_loads():
        assert bf.block_scaled_graph(MM, description=description) is not None
        return
    with pytest.raises(NoGPUError, match="description"):
        bf.block_scaled_graph(MM, description=description)


def test_a_bad_description_is_refused_before_cudnn_reads_it() -> None:
    description = {**devices.target("sm100").description, "warpSize": "32"}
    with pytest.raises(cl.DataError, match="warpSize"):
        bf.block_scaled_graph(MM, description=description)
