"""The classic cudnnPoolingForward path without a GPU: its ctypes calls (against a recording stand-in for libcudnn),
its plan row, its fit with PlanEntry / propose / Session.call, and the error where cuDNN's library is absent."""

from __future__ import annotations

import ctypes
import types

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import PlanError, UnsupportedGraphError
from cudnn_lab.gpu import classic_pool
from cudnn_lab.gpu.plans import PlanEntry, propose
from cudnn_lab.specs import PoolSpec, layout_strides


class FakeCudnn:
    """Records classic-API calls; computes output dims as cuDNN documents; optionally fails one call."""

    def __init__(self, fail: str = "", wrong_dims: bool = False) -> None:
        self.calls: list[tuple] = []
        self.fail, self.wrong_dims = fail, wrong_dims
        self.live: set[int] = set()
        self.tensors: dict[int, tuple] = {}
        self.pools: dict[int, tuple] = {}
        self._next = 0x1000

    def _status(self, name: str) -> int:
        return 2000 if name == self.fail else 0  # CUDNN_STATUS_BAD_PARAM = 2000 in cuDNN 9's cudnn_graph.h

    def _new(self, ref) -> None:
        self._next += 16
        ref._obj.value = self._next
        self.live.add(self._next)

    def cudnnCreateTensorDescriptor(self, ref) -> int:
        self._new(ref)
        return self._status("cudnnCreateTensorDescriptor")

    def cudnnCreatePoolingDescriptor(self, ref) -> int:
        self._new(ref)
        return self._status("cudnnCreatePoolingDescriptor")

    def cudnnDestroyTensorDescriptor(self, d) -> int:
        self.live.discard(d.value)
        return 0

    cudnnDestroyPoolingDescriptor = cudnnDestroyTensorDescriptor

    def cudnnSetTensor4dDescriptorEx(self, d, dt, *args) -> int:
        self.tensors[d.value] = (dt, *args)
        self.calls.append(("tensor", dt, *args))
        return self._status("cudnnSetTensor4dDescriptorEx")

    def cudnnSetPooling2dDescriptor(self, p, mode, nan, kh, kw, ph, pw, sh, sw) -> int:
        self.pools[p.value] = (kh, kw, ph, pw, sh, sw)
        self.calls.append(("pool", mode, nan, kh, kw, ph, pw, sh, sw))
        return self._status("cudnnSetPooling2dDescriptor")

    def cudnnGetPooling2dForwardOutputDim(self, p, x, *refs) -> int:
        kh, kw, ph, pw, sh, sw = self.pools[p.value]
        _, n, c, h, w = self.tensors[x.value][:5]
        dims = (n, c, (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1 + (1 if self.wrong_dims else 0))
        for r, v in zip(refs, dims):
            r._obj.value = v
        return 0

    def cudnnPoolingForward(self, handle, pool, alpha, x, xp, beta, y, yp) -> int:
        self.calls.append(("forward", handle, pool.value, alpha._obj.value, x.value, xp, beta._obj.value, y.value,
                           yp))
        return self._status("cudnnPoolingForward")

    def cudnnGetErrorString(self, status: int) -> bytes:
        return b"CUDNN_STATUS_BAD_PARAM"

    def cudnnGetLastErrorString(self, buf, size) -> None:
        ctypes.memmove(buf, b"window too large\0", 17)


class FakeTensor:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    def data_ptr(self) -> int:
        return self.ptr


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    def install(**kw) -> FakeCudnn:
        lib = FakeCudnn(**kw)
        monkeypatch.setattr(classic_pool, "library", lambda: lib)
        return lib

    return install


SPEC = PoolSpec(n=2, c=3, h=9, w=7, mode="avg_exclude_pad", window=(3, 2), stride=(2, 1), padding=(1, 0),
                layout="NHWC", dtype="bf16")


def test_build_sets_descriptors_from_the_spec(fake) -> None:
    lib = fake()
    op = classic_pool.ClassicPooling(SPEC).build_plan_at_index(0)
    assert op.is_built
    tensors = [c for c in lib.calls if c[0] == "tensor"]
    # cudnnDataType_t CUDNN_DATA_BFLOAT16 = 9; dims N, C, H, W then the layout's strides
    assert tensors[0] == ("tensor", 9, *SPEC.x_dims, *layout_strides(SPEC.x_dims, "NHWC"))
    assert tensors[1] == ("tensor", 9, *SPEC.y_dims, *layout_strides(SPEC.y_dims, "NHWC"))
    # CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING = 2, CUDNN_PROPAGATE_NAN = 1, window h, w, pad h, w, stride h, w
    assert [c for c in lib.calls if c[0] == "pool"] == [("pool", 2, 1, 3, 2, 1, 0, 2, 1)]
    assert op.get_workspace_size_plan_at_index(0) == 0


@pytest.mark.parametrize("mode,number", [("max", 0), ("avg", 1), ("avg_exclude_pad", 2)])
@pytest.mark.parametrize("dtype,dt", [("fp32", 0), ("fp16", 2), ("bf16", 9)])
def test_mode_and_dtype_numbers_are_cudnns(fake, mode: str, number: int, dtype: str, dt: int) -> None:
    lib = fake()
    classic_pool.ClassicPooling(SPEC.replace(mode=mode, dtype=dtype)).build_plan_at_index(0)
    assert [c[1] for c in lib.calls if c[0] == "pool"] == [number]
    assert {c[1] for c in lib.calls if c[0] == "tensor"} == {dt}


def test_nchw_strides_reach_cudnn(fake) -> None:
    lib = fake()
    spec = SPEC.replace(layout="NCHW")
    classic_pool.ClassicPooling(spec).build_plan_at_index(0)
    assert lib.calls[0][-4:] == layout_strides(spec.x_dims, "NCHW")


def test_execute_passes_handle_pointers_and_alpha_beta(fake) -> None:
    lib = fake()
    op = classic_pool.ClassicPooling(SPEC)
    handle = types.SimpleNamespace(backend_handle=0xABC)
    op.execute_plan_at_index({"X": FakeTensor(0x10), "Y": FakeTensor(0x20)}, None, index=0, handle=handle)
    fwd = [c for c in lib.calls if c[0] == "forward"]
    assert len(fwd) == 1
    _, h, pool, alpha, x, xp, beta, y, yp = fwd[0]
    assert (h, alpha, xp, beta, yp) == (0xABC, 1.0, 0x10, 0.0, 0x20)
    assert x != y and pool not in (x, y)


def test_failed_call_raises_plan_error_with_cudnns_words_and_frees_descriptors(fake) -> None:
    lib = fake(fail="cudnnSetPooling2dDescriptor")
    op = classic_pool.ClassicPooling(SPEC)
    with pytest.raises(PlanError) as info:
        op.build_plan_at_index(0)
    msg = str(info.value)
    assert "cudnnSetPooling2dDescriptor" in msg and "CUDNN_STATUS_BAD_PARAM" in msg and "window too large" in msg
    assert not lib.live and not op.is_built


def test_output_dims_disagreeing_with_the_spec_are_an_error(fake) -> None:
    lib = fake(wrong_dims=True)
    with pytest.raises(PlanError, match="output dims"):
        classic_pool.ClassicPooling(SPEC).build_plan_at_index(0)
    assert not lib.live


def test_execute_without_a_handle_is_refused(fake) -> None:
    fake()
    with pytest.raises(PlanError, match="handle"):
        classic_pool.ClassicPooling(SPEC).execute_plan_at_index({"X": FakeTensor(1), "Y": FakeTensor(2)}, None)


def test_only_plan_index_zero_exists(fake) -> None:
    fake()
    with pytest.raises(PlanError, match="index 0"):
        classic_pool.ClassicPooling(SPEC).build_plan_at_index(1)


def test_entries_give_one_classic_plan_row_that_builds(fake) -> None:
    fake()
    (entry,) = classic_pool.entries(SPEC)
    assert isinstance(entry, PlanEntry)
    assert (entry.name, entry.engine_id, entry.knobs, entry.ranks) == ("classic cudnnPoolingForward", -1, {}, {})
    assert entry.status == "proposed"
    assert entry.build()
    assert entry.status == "built" and entry.workspace_bytes == 0 and entry.build_ms is not None


def test_propose_routes_pool_specs_to_the_classic_path(fake) -> None:
    fake()
    entries = propose(SPEC, handle=None, modes=("A", "FALLBACK"), where="test GPU", cudnn_version="91900")
    assert [e.name for e in entries] == [classic_pool.PLAN_NAME]


def test_failed_build_is_recorded_not_raised(fake) -> None:
    fake(fail="cudnnCreatePoolingDescriptor")
    (entry,) = classic_pool.entries(SPEC)
    assert not entry.build()
    assert entry.status == "build_failed" and "CUDNN_STATUS_BAD_PARAM" in entry.error


def test_session_call_runs_the_classic_plan(fake) -> None:
    """runner.Session.call, unchanged, drives the classic entry: feed by tensor name, the handle's stream."""
    import cudnn

    from cudnn_lab.gpu.runner import Session

    lib = fake()
    (entry,) = classic_pool.entries(SPEC)
    entry.build()
    sess = types.SimpleNamespace(inputs={"X": FakeTensor(0x100)}, outputs={"Y": FakeTensor(0x200)},
                                 workspace=FakeTensor(0), handle=cudnn.Handle(0xBEEF, None, 7),
                                 stream=types.SimpleNamespace(cuda_stream=7))
    call = Session.call(sess, entry)  # type: ignore[arg-type]
    call()
    call()
    fwd = [c for c in lib.calls if c[0] == "forward"]
    assert len(fwd) == 2 and fwd[0][1] == 0xBEEF and fwd[0][5] == 0x100 and fwd[0][8] == 0x200


def test_classic_lab_draws_and_inspects_like_a_graph() -> None:
    lab = classic_pool.ClassicPoolLab(SPEC)
    info = lab.inspect()
    assert set(info["tensors"]) == {"X", "Y"} and info["nodes"][0]["name"] == "cudnnPoolingForward"
    assert lab.roles == {"X": "input", "Y": "output"}
    assert "cudnnPoolingForward" in lab.to_dot().source


def test_without_libcudnn_the_classic_path_says_so() -> None:
    try:
        ctypes.CDLL("libcudnn.so.9")
    except OSError:
        pass
    else:
        pytest.skip("libcudnn.so.9 is loadable here: this test is for machines without cuDNN")
    classic_pool.library.cache_clear()
    with pytest.raises(UnsupportedGraphError) as info:
        classic_pool.library()
    assert "libcudnn.so.9" in str(info.value) and "cudnnPoolingForward" in str(info.value)
    assert isinstance(info.value, cl.CudnnLabError)
