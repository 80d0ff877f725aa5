"""Results checked by meaning, not only by type (issue 25): a shipped recording with one field damaged per case is
refused with DataError naming the file, the row (plan index and name, or engine) and the field; sweep frames too.
Every shipped recording and sweep still loads; a result is saved as standard JSON (no NaN/Infinity)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab import cli
from cudnn_lab.errors import DataError
from cudnn_lab.report import save_report, sweep_report_html
from cudnn_lab.results import RunResult, loading
from cudnn_lab.results.datasets import RECORDED_DIR, SWEEPS_DIR

RECORDING = "h200_conv_nhwc_fp16"  # kernels, knobs by number and an engine space: every embedded JSON is there
TESTS_DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(scope="module")
def shipped() -> dict:
    return json.loads((RECORDED_DIR / f"{RECORDING}.json").read_text(encoding="utf-8"))


def _copy(data: dict) -> dict:
    return json.loads(json.dumps(data))


def _ran(data: dict) -> int:
    """A plan row that ran, with knobs and kernels: the row the cases damage."""
    return next(i for i, r in enumerate(data["plans"])
                if r["status"] == "ok" and r.get("kernels") and r["knobs"] != "{}")


def _tuned(data: dict) -> int:
    """An engine of the engine space with knobs."""
    return next(i for i, e in enumerate(data["engine_space"]["engines"]) if e["knobs"])


def _set(col: str, value):
    def damage(data: dict) -> str:
        i = _ran(data)
        data["plans"][i][col] = value
        return f"plans[{i}].{col}"
    return damage


def _duplicate(data: dict) -> str:
    i = _ran(data)
    j = next(j for j in range(len(data["plans"])) if j != i)
    data["plans"][j]["plan"] = data["plans"][i]["plan"]
    return f"plans[{max(i, j)}].plan"


def _engine(key: str, value, knob: bool = False):
    def damage(data: dict) -> str:
        e = _tuned(data)
        engine = data["engine_space"]["engines"][e]
        if knob:
            engine["knobs"][0][key] = value
            return f"engine_space.engines[{e}].knobs[0]"
        engine[key] = value
        return f"engine_space.engines[{e}].{key}"
    return damage


BOMB = "[" * 100_000 + "]" * 100_000

# (case, damage -> the field the message must name, what the message says)
PLAN_CASES = {
    "negative latency": (_set("median_ms", -0.5), "at least 0"),
    "infinite latency": (_set("median_ms", "INF"), "finite"),  # written as 1e400, which JSON reads as inf
    "infinite min time": (_set("min_ms", "-INF"), "finite"),
    "negative workspace": (_set("workspace_bytes", -4096), "at least 0"),
    "absurd workspace": (_set("workspace_bytes", 2**62), "at most"),
    "engine id 10**12": (_set("engine_id", 10**12), "at most 10000"),
    "engine id -2": (_set("engine_id", -2), "at least -1"),
    "negative rank": (_set("heuristic_rank", -3), "at least 0"),
    "negative sample count": (_set("samples", -1), "at least 0"),
    "share above one": (_set("within_cudnn", 1.5), "at most 1"),
    "duplicate plan name": (_duplicate, "repeats the name of plans"),
    "junk JSON in knobs": (_set("knobs", '{"k2": 7,'), "not valid JSON"),
    "knobs not an object": (_set("knobs", "[7, 1]"), "must be an object"),
    "knob value out of range": (_set("knobs", json.dumps({"k2": 10**12})), "at most"),
    "knob value not an integer": (_set("knobs", '{"k2": "seven"}'), "must be an integer"),
    "junk JSON in kernels": (_set("kernels", "[{\"name\": "), "not valid JSON"),
    "kernels not a list": (_set("kernels", '{"name": "k"}'), "must be a list"),
    "kernel without a name": (_set("kernels", '[{"name": "", "count": 1}]'), "kernel name"),
    "negative kernel time": (_set("kernels", '[{"name": "k", "count": 1, "us": -2.0}]'), "at least 0"),
    "NaN in kernels": (_set("kernels", '[{"name": "k", "us": NaN}]'), "finite"),
    "nested bomb in kernels": (_set("kernels", BOMB), "nested more than"),
    "nested bomb in knobs": (_set("knobs", "{\"a\": " * 5_000 + "1" + "}" * 5_000), "nested more than"),
}
ENGINE_CASES = {
    "junk JSON in engine_space knobs": (_engine("knobs", '[{"name": "TILE_SIZE"'), "must be a list"),
    "engine_space engine id 10**12": (_engine("engine_id", 10**12), "at most 10000"),
    "engine_space knob min above max": (_engine("min", 99, knob=True), "above max"),
    "engine_space knob bound not a number": (_engine("max", "junk", knob=True), "must be an integer"),
    "engine_space negative configs": (_engine("configs", -5), "at least 0"),
}


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "damaged.json"
    text = json.dumps(data, indent=1).replace('"-INF"', "-1e400").replace('"INF"', "1e400")
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("load", [cl.load_results, RunResult.load])
@pytest.mark.parametrize("case", list(PLAN_CASES))
def test_a_damaged_plan_row_names_the_file_the_plan_and_the_field(tmp_path, shipped, case, load) -> None:
    data = _copy(shipped)
    damage, says = PLAN_CASES[case]
    field = damage(data)
    i = int(field.split("[")[1].split("]")[0])
    with pytest.raises(DataError) as caught:
        load(_write(tmp_path, data))
    message = str(caught.value)
    assert "damaged.json" in message and field in message and says in message
    assert f"plan {data['plans'][i]['plan']!r}" in message  # the row by name too
    assert len(message) < 600


@pytest.mark.parametrize("case", list(ENGINE_CASES))
def test_a_damaged_engine_space_names_the_file_the_engine_and_the_field(tmp_path, shipped, case) -> None:
    data = _copy(shipped)
    damage, says = ENGINE_CASES[case]
    field = damage(data)
    with pytest.raises(DataError) as caught:
        cl.load_results(_write(tmp_path, data))
    assert "damaged.json" in str(caught.value) and field in str(caught.value) and says in str(caught.value)


@pytest.mark.parametrize("group, key, value", [("torch", "benchmark_off_ms", -1.0), ("ceilings", "tflops", -5.0),
                                               ("device", "sm_count", -132)])
def test_damaged_context_values_name_their_field(tmp_path, shipped, group, key, value) -> None:
    data = _copy(shipped)
    data[group][key] = value
    with pytest.raises(DataError, match=rf"damaged\.json.*field {group}\.{key}: must be at least 0"):
        cl.load_results(_write(tmp_path, data))


def test_a_damaged_histogram_count_is_refused(tmp_path, shipped) -> None:
    data = _copy(shipped)
    plan = next(iter(data["histograms"]))
    data["histograms"][plan]["counts"][0] = -7
    with pytest.raises(DataError, match=r"histograms\..*counts\[0\]: must be at least 0"):
        cl.load_results(_write(tmp_path, data))


def test_a_damaged_recording_is_refused_by_the_report_command_with_a_message(tmp_path, shipped, capsys) -> None:
    data = _copy(shipped)
    field = _set("median_ms", -1.0)(data)
    path = _write(tmp_path, data)
    assert cli.main(["report", str(path), "-o", str(tmp_path / "r.html")]) != 0
    err = capsys.readouterr().err
    assert "damaged.json" in err and field in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_result_damaged_in_memory_is_refused_by_the_report_not_crashed(tmp_path) -> None:
    result = cl.load_results(RECORDING)
    result.engine_space = {"engines": ["not an engine"]}
    with pytest.raises(DataError, match=r"engine_space\.engines\[0\]: must be an object"):
        save_report(result, tmp_path / "r.html")


# ------------------------------------------------------------------------------------------ shipped data still loads

@pytest.mark.parametrize("path", sorted(RECORDED_DIR.glob("*.json")) + sorted(TESTS_DATA.glob("*.json")),
                         ids=lambda p: p.stem)
def test_every_shipped_recording_still_loads(path: Path) -> None:
    result = RunResult.load(path)
    assert len(result.plans) and result.plans["plan"].is_unique


@pytest.mark.parametrize("path", sorted(SWEEPS_DIR.glob("*.parquet")), ids=lambda p: p.stem)
def test_every_shipped_sweep_still_loads(path: Path) -> None:
    frame = loading.read_sweep_frame(path)
    assert len(frame) and loading.sweep_row_problems(frame) == []


def test_classic_calls_keep_engine_id_minus_one() -> None:
    result = cl.load_results("h200_rnn_lstm_fp16")
    assert set(result.plans["engine_id"]) == {-1}


# ------------------------------------------------------------------------------------------ saving: standard JSON

def test_save_writes_no_nan_or_infinity_and_reads_back(tmp_path) -> None:
    result = cl.load_results(RECORDING)
    i = result.plans.index[0]
    result.plans.loc[i, "max_rel"] = math.inf
    result.plans.loc[i, "rel_l2"] = math.nan
    result.torch["benchmark_on_ms"] = float("nan")
    result.ceilings["gbps"] = -math.inf
    text = result.save(tmp_path / "r.json").read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written"))
    back = RunResult.load(tmp_path / "r.json")
    assert pd.isna(back.plans.loc[0, "max_rel"]) and back.torch["benchmark_on_ms"] is None
    assert back.ceilings["gbps"] is None and len(back.plans) == len(result.plans)


# ------------------------------------------------------------------------------------------ sweep frames

@pytest.fixture(scope="module")
def sweep() -> pd.DataFrame:
    return cl.load_results("h100_fp8_gemm")


def _damage_sweep(frame: pd.DataFrame, col: str, value) -> tuple[pd.DataFrame, int]:
    frame = frame.copy()
    if col in frame.columns and frame[col].dtype != object and not isinstance(value, (int, float)):
        frame[col] = frame[col].astype(object)
    frame.loc[frame.index[5], col] = value
    return frame, 5


@pytest.mark.parametrize("col, value, says", [
    ("median_ms", -1.0, "at least 0"), ("median_ms", math.inf, "finite"), ("workspace_bytes", -1, "at least 0"),
    ("engine_id", 10**12, "at most 10000"), ("flops", -2, "at least 0"), ("op", "convolution", "must be one of"),
    ("knobs", "{junk", "not valid JSON"), ("kernels", BOMB, "nested more than"),
    ("spec", '{"op": "matmul", "m": -4}', "spec"),
])
def test_a_damaged_sweep_file_names_the_file_the_row_and_the_field(tmp_path, sweep, col, value, says) -> None:
    frame, pos = _damage_sweep(sweep, col, value)
    path = tmp_path / "damaged.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(DataError) as caught:
        cl.load_results(path)
    message = str(caught.value)
    assert "damaged.parquet" in message and f"row {pos} (point {frame['point_id'].iloc[pos]!r}" in message
    assert f"field {col}" in message and says in message


def test_a_point_stored_twice_in_a_sweep_file_is_refused(tmp_path, sweep) -> None:
    first = sweep[sweep["point_id"] == sweep["point_id"].iloc[0]]
    path = tmp_path / "doubled.parquet"
    pd.concat([sweep, first], ignore_index=True).to_parquet(path, index=False)
    with pytest.raises(DataError, match=r"doubled\.parquet'?: row \d+ .*field plan: repeats a row of the same point"):
        cl.load_results(path)


def test_a_sweep_report_of_a_doubled_frame_is_refused_not_crashed(sweep) -> None:
    doubled = pd.concat([sweep, sweep.iloc[:3]], ignore_index=True)
    with pytest.raises(DataError, match="repeats a row of the same point"):
        sweep_report_html(doubled)
