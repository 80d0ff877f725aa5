"""cuDNN's classic cudnnPoolingForward: what needs no GPU (the library search, handles, the drawing, routing) and
the real calls on the device (descriptors, output dims, cuDNN's own error words, results against PyTorch)."""

from __future__ import annotations

import math

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import PlanError, UnsupportedGraphError
from cudnn_lab.gpu.classic import loader as classic
from cudnn_lab.gpu.classic import pool as classic_pool
from cudnn_lab.gpu.plans import PLAN_SOURCES
from cudnn_lab.specs import PoolSpec

SPEC = PoolSpec(n=2, c=3, h=9, w=7, mode="avg_exclude_pad", window=(3, 2), stride=(2, 1), padding=(1, 0),
                layout="NHWC", dtype="bf16")


def _libcudnn_loadable() -> bool:
    try:
        classic.library()
    except UnsupportedGraphError:
        return False
    return True


# ------------------------------------------------------------------------------------------------ without a GPU

def test_without_libcudnn_the_search_says_where_it_looked() -> None:
    if _libcudnn_loadable():
        pytest.skip("libcudnn.so.9 is loadable here: this test is for machines without cuDNN")
    classic.library.cache_clear()
    with pytest.raises(UnsupportedGraphError) as info:
        classic.library()
    msg = str(info.value)
    assert "libcudnn.so.9" in msg and "classic" in msg and "looked for" in msg
    assert "dynamic loader" in msg  # the last place tried is named, with the loader's own words
    assert isinstance(info.value, cl.CudnnLabError)


def test_the_search_tries_the_mapped_library_the_wheel_then_the_loader() -> None:
    tried = classic.candidates()
    assert tried[-1] == ("the dynamic loader (LD_LIBRARY_PATH, ldconfig)", "libcudnn.so.9")
    assert all(what and where for what, where in tried)
    assert all(p.endswith("nvidia/cudnn/lib/libcudnn.so.9") for p in classic.wheel_libcudnn())


def test_the_mapped_library_is_read_from_the_process_maps(tmp_path) -> None:
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 0 08:01 1 /opt/x/libcudnn_ops.so.9\n"
                    "7f02-7f03 r-xp 0 08:01 2 /opt/x/libcudnn.so.9.19.0\n"
                    "7f04-7f05 r-xp 0 08:01 3 /usr/lib/libc.so.6\n")
    assert classic.mapped_libcudnn(maps) == "/opt/x/libcudnn.so.9.19.0"
    assert classic.mapped_libcudnn(tmp_path / "absent") is None


@pytest.mark.parametrize("handle", [None, 0, True, "handle", 1.5])
def test_a_call_without_a_handle_is_refused_before_cudnn_is_touched(handle) -> None:
    with pytest.raises(PlanError, match="handle"):
        classic_pool.PoolingCall(SPEC).execute_plan_at_index({"X": None, "Y": None}, None, handle=handle)


def test_the_raw_handle_of_a_frontend_handle_is_its_backend_handle() -> None:
    class Handle:  # what cudnn.Handle exposes
        backend_handle = 0xBEEF

    assert classic.backend_handle(Handle(), "call") == 0xBEEF
    assert classic.backend_handle(0xABC, "call") == 0xABC


def test_only_plan_index_zero_exists() -> None:
    with pytest.raises(PlanError, match="index 0"):
        classic_pool.PoolingCall(SPEC).build_plan_at_index(1)


def test_pool_specs_are_routed_to_the_classic_source() -> None:
    assert PLAN_SOURCES[SPEC] is classic_pool.classic_plans


def test_classic_lab_draws_and_inspects_like_a_graph() -> None:
    lab = classic_pool.pool_lab(SPEC)
    info = lab.inspect()
    assert set(info["tensors"]) == {"X", "Y"} and info["nodes"][0]["name"] == "cudnnPoolingForward"
    assert lab.roles == {"X": "input", "Y": "output"}
    assert "cudnnPoolingForward" in lab.to_dot().source


# ------------------------------------------------------------------------------------------------ on the GPU

@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["max", "avg", "avg_exclude_pad"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_descriptors_build_with_cudnns_output_dims(mode: str, dtype: str, layout: str) -> None:
    op = classic_pool.PoolingCall(SPEC.replace(mode=mode, dtype=dtype, layout=layout))
    assert op.build_plan_at_index(0) is op and op.is_built
    assert op.get_workspace_size_plan_at_index(0) == 0
    op.release()
    op.release()  # twice is safe
    assert not op.is_built


@pytest.mark.gpu
def test_the_library_is_the_frontends() -> None:
    import cudnn

    lib = classic.library()
    assert int(lib.cudnnGetVersion()) == int(cudnn.backend_version())


@pytest.mark.gpu
def test_a_failed_call_raises_plan_error_with_cudnns_words() -> None:
    lib = classic.library()
    with pytest.raises(PlanError) as info:
        classic.check(lib, 2000, "cudnnSomething")  # CUDNN_STATUS_BAD_PARAM in cuDNN 9
    assert "cudnnSomething" in str(info.value) and "BAD_PARAM" in str(info.value)


@pytest.mark.gpu
def test_descriptors_cudnn_refuses_are_freed_and_named() -> None:
    spec = SPEC.replace(mode="max")
    object.__setattr__(spec, "window", 0)  # past the spec's checks, so that cuDNN itself refuses the window
    op = classic_pool.PoolingCall(spec)
    with pytest.raises(PlanError, match="cudnnSetPooling2dDescriptor"):
        op.build_plan_at_index(0)
    assert not op.is_built


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["max", "avg", "avg_exclude_pad"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_the_classic_call_agrees_with_pytorch(mode: str, layout: str) -> None:
    import cudnn
    import torch

    from cudnn_lab.reference import make_inputs, make_outputs

    spec = SPEC.replace(mode=mode, layout=layout, dtype="fp32")
    handle = cudnn.create_handle()
    stream = torch.cuda.current_stream()
    cudnn.set_stream(handle=handle, stream=stream.cuda_stream)
    inputs, outputs = make_inputs(spec, device="cuda", seed=0), make_outputs(spec, device="cuda")
    outputs["Y"].fill_(math.nan)
    op = classic_pool.PoolingCall(spec)
    op.execute_plan_at_index({**inputs, **outputs}, None, index=0, handle=handle)
    torch.cuda.synchronize()
    x = inputs["X"]
    (kh, kw), (sh, sw), (ph, pw) = (3, 2), (2, 1), (1, 0)
    if mode == "max":
        want = torch.nn.functional.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw))
    else:
        want = torch.nn.functional.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw),
                                              count_include_pad=mode == "avg")
    got = outputs["Y"]
    assert not got.isnan().any()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
