"""What-if without a GPU for a spec with no recorded answer (issue 39, deliverable 2): the nearest recorded answer of
the same family, direction, dtype and layout, labelled as such; never one of another family or dtype. Runs on CPU
with the answers recorded on the kit's GPU rounds (``cudnn_lab/data/whatif``); a GPU host asks cuDNN instead."""

from __future__ import annotations

import json
import math

import pytest

import cudnn_lab as cl
from cudnn_lab import whatif as wi
from cudnn_lab.errors import NoGPUError
from cudnn_lab.whatif import heuristics as h

MM = cl.MatmulSpec(batch=1, m=4096, n=4096, k=4096, dtype="fp16")  # README's `mm`: no answer recorded for it


def _recorded_specs():
    return {w.spec for w in wi.recorded_whatifs()}


def test_the_readme_example_answers_without_a_gpu_from_the_nearest_recorded_answer():
    assert MM not in _recorded_specs()
    w = wi.plans_for(MM, sm_count=114, recorded=True)
    assert w.source.startswith("nearest recorded answer: ")
    assert w.spec.label() in w.source and "same family, direction, dtype and layout" in w.source
    assert (w.spec.op, w.spec.dtype, w.spec.transpose_a, w.spec.transpose_b) == ("matmul", "fp16", False, False)
    assert w.sm_count == 114 and w.target == "this GPU"
    w.reasons()  # README: `whatif.plans_for(mm, sm_count=114).reasons()` answers (a frame, empty if plans came)
    assert "nearest recorded answer" in w.summary()


def test_the_nearest_is_the_closest_in_flops_among_the_same_kind_only():
    spec = cl.ConvSpec(n=32, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                       direction="wgrad")
    w = wi.plans_for(spec, "sm90", recorded=True)
    same = [s for s in _recorded_specs() if s.op == "conv" and s.direction == "wgrad" and s.dtype == "fp16"
            and s.layout == "NHWC"]
    assert w.spec in same
    best = min(abs(math.log(s.flops() / spec.flops())) for s in same)
    assert abs(math.log(w.spec.flops() / spec.flops())) == best
    assert w.target == "sm90" and w.ok


def test_never_across_families_or_dtypes():
    for spec in (cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp32"),
                 cl.MatmulSpec(batch=1, m=512, n=512, k=512, dtype="fp16", transpose_a=True)):
        assert h.nearest_recorded(spec, None, None) is None
        with pytest.raises(NoGPUError, match="no answer"):
            wi.plans_for(spec, "h200", recorded=True)


def test_an_exact_recording_is_not_relabelled():
    spec = cl.MatmulSpec(batch=1, m=1024, n=1024, k=512, dtype="fp16", epilogue=("bias",))
    w = wi.plans_for(spec, "h200", recorded=True)
    assert w.spec == spec and not w.source.startswith("nearest")


def test_the_cli_answers_for_an_unrecorded_spec(tmp_path, capsys):
    from cudnn_lab.cli import main

    path = tmp_path / "mm.json"
    path.write_text(json.dumps(MM.to_dict()))
    code = main(["plans", str(path), "--target", "sm90", "--recorded"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "nearest recorded answer: matmul" in out and "compute capability 9.0" in out
