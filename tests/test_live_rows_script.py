"""scripts/live_rows.py without a GPU: the recorded traces shipped with the kit read back, and a missing, corrupt or
empty trace gets the kit's own error naming the file (one line, exit status 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cudnn_lab.errors import DataError, PathError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import live_rows  # noqa: E402


@pytest.mark.parametrize("helpers", [0, 8])
def test_the_shipped_h100_traces_read_back_with_their_rows_in_order(helpers: int) -> None:
    trace = live_rows.read_trace(ROOT / f"benchmarks/results/h100_2026-11-26_live_rows_helpers{helpers}.json")
    times = [e["t"] for e in trace["events"] if "row" in e]
    assert len(times) == 26 and times == sorted(times) and "H100" in trace["device"]["gpu"]


def test_bad_traces_get_the_kits_errors(tmp_path: Path) -> None:
    with pytest.raises(PathError, match="does not exist"):
        live_rows.read_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        live_rows.read_trace(bad)
    bad.write_text(json.dumps({"spec": {}, "events": []}))
    with pytest.raises(DataError, match="lacks problem, device, created"):
        live_rows.read_trace(bad)
    bad.write_text(json.dumps({"spec": {}, "problem": "x", "device": {}, "created": "", "events": [{"t": 1}]}))
    with pytest.raises(DataError, match="no plan rows"):
        live_rows.read_trace(bad)
    out = subprocess.run([sys.executable, str(ROOT / "scripts/live_rows.py"), "--replay", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "no plan rows" in out.stderr
