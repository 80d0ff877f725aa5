"""benchmarks/published_attention.py (issue 35 item 3): the rows it runs come from the shipped H200 CSV, every spec
it builds is a valid cuDNN graph, and without a GPU it exits 2 in one sentence. The GPU test runs one row."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.whatif.published import load_published

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "published_attention.py"


def _module():
    spec = importlib.util.spec_from_file_location("published_attention", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def test_rows_are_the_shipped_h200_rows() -> None:
    pa = _module()
    h200 = [r for r in load_published() if r.gpu == "h200" and r.phase == "training"]
    cases = pa.cases()
    assert cases, "no H200 row parsed from the shipped CSV"
    assert all(c.row in h200 for c in cases)
    # every non-deterministic bf16 row and every fp8 forward row, each once
    want = {r.row for r in h200 if not r.deterministic and (r.data_type == "bfloat16" or r.pass_ == "fwd")}
    assert {c.row.row for c in cases} == want
    assert len({c.config for c in cases}) == len(cases)


def test_each_spec_asks_the_published_problem_and_builds() -> None:
    pa = _module()
    for c in pa.cases():
        s, r = c.spec, c.row
        assert (s.batch, s.heads, s.kv_heads or s.heads, s.seq_q, s.seq_kv, s.head_dim) == \
            (r.batch, r.heads_q, r.heads_kv, r.seq_q, r.seq_kv, r.head_dim), c.config
        assert s.causal == (r.attn_mask == "top_left")
        assert (s.direction == "bwd") == (r.pass_ == "bwd")
        assert s.dtype == ("bf16" if r.data_type == "bfloat16" else "fp8_e4m3")
        assert cl.build_graph(s) is not None, c.config


def test_quick_covers_both_passes_masks_and_the_extreme_lengths() -> None:
    pa = _module()
    quick, every = pa.cases(quick=True), pa.cases()
    assert len(quick) == len(pa.QUICK) == 6
    assert {c.row.pass_ for c in quick} == {"fwd", "bwd"}
    assert {c.row.attn_mask for c in quick} == {"no_mask", "top_left"}
    seqs = {c.row.seq_q for c in every}
    assert {min(seqs), max(seqs)} <= {c.row.seq_q for c in quick}


def test_list_needs_no_gpu() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--list"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.strip().splitlines()) == 6


@pytest.mark.skipif(_has_gpu(), reason="checks the answer without a GPU")
def test_without_gpu_exits_2_in_one_sentence() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 2
    err = out.stderr.strip()
    assert len(err.splitlines()) == 1 and err.count(". ") == 0 and err.endswith(".")
    assert "GPU" in err and "Traceback" not in err


@pytest.mark.gpu
def test_one_published_row_runs_with_the_kit() -> None:
    pa = _module()
    case = pa.cases(quick=True)[0]
    row = pa.run_case(case, pa.options(True))
    assert row.get("error") is None, row.get("error")
    assert row["kit_ms"] > 0 and row["plan"]
    assert row["ratio"] == pytest.approx(row["kit_ms"] / case.row.time_ms)
    assert row["kit_cudnn"] != "unknown"
