"""cl.run on a real GPU for normalizations: every kind x phase in two dtypes (and both layouts for the image kinds),
the fused residual add, an unsupported combination's message, and the exported script's own check."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

ROWS = dict(rows=64, features=256)
IMAGE = dict(n=4, c=16, h=8, w=8)
QUICK = dict(plans="heuristic", roofline=False, time_cap_s=0.05)

# (kind, phase, dtype, layout): fp16 NHWC for each, plus a second dtype (bf16 for training, fp32 otherwise) that the
# image kinds take in NCHW (batchnorm inference runs NHWC only).
def _layout(kind: str, phase: str, dtype: str) -> str:
    nchw = kind in ("batchnorm", "instancenorm") and dtype != "fp16" and (kind, phase) != ("batchnorm", "inference")
    return "NCHW" if nchw else "NHWC"


# cuDNN 9.19 on an H200: instancenorm_backward's engine 0, the heuristics' first choice, wrote wrong DScale/DBias
# whenever the handle ran on a stream other than the legacy default stream, as cl.run's does (engine 2 was right).
IN_BWD_RACE = pytest.mark.xfail(reason="cuDNN 9.19 instancenorm_backward engine 0 gives wrong DScale/DBias on a "
                                "non-default stream (H200); the per-plan check catches it", strict=False)

CASES = [pytest.param(kind, phase, dtype, _layout(kind, phase, dtype), id=f"{kind}-{phase}-{dtype}",
                      marks=IN_BWD_RACE if (kind, phase) == ("instancenorm", "backward") else ())
         for kind in ("layernorm", "rmsnorm", "batchnorm", "instancenorm")
         for phase in ("training", "inference", "backward")
         for dtype in ("fp16", "bf16" if phase == "training" else "fp32")]


def _spec(kind: str, phase: str, dtype: str, layout: str = "NHWC", **kw: object) -> cl.NormSpec:
    return cl.NormSpec(kind=kind, phase=phase, dtype=dtype, layout=layout, **ROWS, **IMAGE, **kw)


def _assert_pick_is_right(result: cl.RunResult) -> None:
    pick = result.heuristic_pick
    assert pick["status"] == "ok", pick.to_dict()
    assert pick["nan_count"] == 0, pick.to_dict()  # every output (stats, running stats, grads) was written
    assert bool(pick["pass_cudnn"]), pick.to_dict()
    assert pick["median_ms"] > 0


@pytest.mark.parametrize("kind,phase,dtype,layout", CASES)
def test_norm_heuristic_pick_matches_reference(kind: str, phase: str, dtype: str, layout: str) -> None:
    result = cl.run(_spec(kind, phase, dtype, layout), **QUICK)
    _assert_pick_is_right(result)
    assert not any(k.endswith("_error") for k in result.torch), result.torch  # PyTorch's own op ran too
    assert result.torch.get("benchmark_off_ms", 0) > 0


@pytest.mark.parametrize("kind,phase,dtype", [("layernorm", "training", "fp16"), ("layernorm", "inference", "bf16"),
                                              ("rmsnorm", "training", "fp16")])
def test_fused_residual_add_matches_reference(kind: str, phase: str, dtype: str) -> None:
    # y = norm(x + residual), the add in float32 inside the graph (frontend sample 23's pattern).
    _assert_pick_is_right(cl.run(_spec(kind, phase, dtype, residual=True), torch_baseline=False, **QUICK))


@pytest.mark.parametrize("phase", ["training", "backward"])
def test_fp32_batchnorm_takes_channel_counts_that_are_multiples_of_4(phase: str) -> None:
    # 16 bytes of channels: c a multiple of 8 in fp16/bf16, of 4 in fp32 (c = 3 found no engine).
    spec = cl.NormSpec(kind="batchnorm", phase=phase, dtype="fp32", layout="NHWC", n=4, c=12, h=8, w=8)
    _assert_pick_is_right(cl.run(spec, torch_baseline=False, **QUICK))


def test_instancenorm_backward_has_plans_that_pass_when_all_are_run() -> None:
    # Whatever the first choice does on cl.run's stream, engine 2 gives the right DScale/DBias, and every plan's
    # outputs are checked, so the table shows which plans to trust.
    result = cl.run(_spec("instancenorm", "backward", "fp16"), torch_baseline=False, **{**QUICK, "plans": "all"})
    ok = result.ok
    assert ok["rel_l2"].notna().all()
    passing = ok[ok["pass_cudnn"].astype(bool)]
    assert (passing["engine_id"] == 2).any(), result.plans[["plan", "rel_l2", "pass_cudnn"]].to_string()


def test_unsupported_batchnorm_is_refused_with_what_is_supported() -> None:
    with pytest.raises(cl.SpecError) as err:
        cl.NormSpec(kind="batchnorm", phase="training", n=4, c=12, h=8, w=8)
    text = str(err.value)
    assert "c=12" in text and "multiple of 8" in text and "instancenorm" in text
    with pytest.raises(cl.SpecError) as err:
        cl.NormSpec(kind="batchnorm", phase="inference", layout="NCHW", n=4, c=16, h=8, w=8)
    assert "NHWC" in str(err.value) and "pointwise" in str(err.value)


def test_exported_backward_script_checks_itself(tmp_path) -> None:
    # The script feeds random statistics; its reference uses the statistics it is given, as cuDNN does.
    spec = _spec("layernorm", "backward", "fp16")
    path = tmp_path / "repro.py"
    path.write_text(cl.build_graph(spec).to_script())
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("DX: relative L2 error"), line
    assert float(line.split("error ")[1].split(";")[0]) < 1e-2, line
    assert "NaNs 0" in line
