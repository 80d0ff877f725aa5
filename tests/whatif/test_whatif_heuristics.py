"""What-if on GPUs and cuDNN versions the machine does not have: targets, cuDNN's answers recorded on the kit's GPU
rounds, the reasons of its refusals, side-by-side and version drift. Runs on CPU: the answers are cuDNN's own,
recorded on an H200 (``cudnn_lab/data/whatif``); ``tests/gpu/test_whatif_gpu.py`` asks cuDNN live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.whatif import devices as tg
from cudnn_lab import whatif as wi
from cudnn_lab.errors import DataError, NoGPUError, OptionError, PathError
from cudnn_lab.gpu.reasons import CATEGORIES, category_of, read_reasons, summarize

CONV = cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
ROOT = Path(__file__).resolve().parents[2]


def _answers(**match):
    return [w for w in wi.recorded_whatifs() if all(getattr(w, k) == v for k, v in match.items())]


# ------------------------------------------------------------------------------------------------ targets

def test_targets_list_recorded_gpus_and_labelled_synthetic_ones():
    found = tg.targets()
    recorded = [t for t in found if t.origin == "recorded"]
    synthetic = [t for t in found if t.origin == "synthetic"]
    assert recorded and {t.cudnn_version for t in recorded} >= {91900}
    assert [t.compute_capability for t in synthetic] == list(tg.COMPUTE_CAPABILITIES)
    for t in synthetic:
        assert t.label.startswith("synthetic: ") and f"compute capability {t.compute_capability}" in t.label
        base = next(r for r in recorded if r.description["deviceName"] == t.base)
        changed = {k for k in t.description if t.description[k] != base.description[k]}
        assert changed <= {"deviceVer"}  # only the architecture differs from the recorded description


@pytest.mark.parametrize("name,ver", [("sm100", 1000), ("10.0", 1000), ("sm_86", 860), ("80", 800), ("12.0", 1200)])
def test_a_compute_capability_names_a_synthetic_target(name, ver):
    t = tg.target(name)
    assert t.origin == "synthetic" and t.description["deviceVer"] == ver


@pytest.mark.parametrize("bad", ["sm99", "b200", "", "13.0", 7])
def test_an_unknown_target_name_is_refused_naming_the_option(bad):
    with pytest.raises(OptionError, match="target|compute capability"):
        tg.as_target(bad) if not isinstance(bad, str) or bad else tg.target(bad)


def test_a_target_file_round_trips_and_is_loaded_as_a_file(tmp_path):
    t = tg.target("h200")
    path = t.save(tmp_path / "mygpu.json")
    back = tg.load_target(path)
    assert back.origin == "file" and back.description == t.description and back.cudnn_version == t.cudnn_version
    assert tg.as_target(str(path)).description == t.description


def _target_file(tmp_path, mutate):
    data = tg.target("h200").to_dict()
    mutate(data)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["description"].pop("deviceVer"), "deviceVer"),
    (lambda d: d["description"].update(deviceVer=990), "deviceVer"),
    (lambda d: d["description"].update(multiProcessorCount=0), "multiProcessorCount"),
    (lambda d: d["description"].update(maxGridSize=[1, 2]), "maxGridSize"),
    (lambda d: d["description"].update(regsPerBlock="65536"), "regsPerBlock"),
    (lambda d: d["description"].update(regsPerBlock=True), "regsPerBlock"),
    (lambda d: d["description"].update(someField=1), "someField"),
    (lambda d: d.update(cudnn=8900), "cudnn"),
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(description=[1, 2]), "object"),
])
def test_a_malformed_or_foreign_target_file_names_the_field(tmp_path, mutate, field):
    with pytest.raises(DataError, match=field) as e:
        tg.load_target(_target_file(tmp_path, mutate))
    assert "t.json" in str(e.value)


def test_a_description_of_a_newer_cudnn_is_refused_by_an_older_one():
    desc = {**tg.target("h200").description, "smCountOrigin": 0, "memoryBusWidth": 6144,
            "oversizedSharedMemoryPerBlock": 0}
    tg.check_description(desc, "x", cudnn_version=92800)
    with pytest.raises(DataError, match="newer cuDNN.*smCountOrigin"):
        tg.check_description(desc, "x", cudnn_version=91900)


def test_target_files_are_read_with_the_reading_discipline(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(PathError, match="regular"):
        tg.load_target(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(10 * 2**20)
    with pytest.raises(DataError, match="more than"):
        tg.load_target(big)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 20_000)
    with pytest.raises(DataError, match="nested"):
        tg.load_target(deep)


# ------------------------------------------------------------------------------------------------ recorded answers

def test_recorded_answers_exist_for_every_target_and_are_labelled():
    answers = wi.recorded_whatifs()
    assert answers
    names = {w.target for w in answers}
    assert {"this GPU", "h200", *(f"sm{int(float(cc) * 10)}" for cc in tg.COMPUTE_CAPABILITIES)} <= names
    assert all(w.source.startswith("recorded on ") for w in answers)
    assert all(w.target_label.startswith("synthetic: ") == w.synthetic for w in answers)
    assert {w.cudnn_version for w in answers} >= {91400, 91900}


def test_deviceless_lists_are_the_cards_own_but_runtime_compiled_plans():
    """cuDNN's deviceless answer with the card's own description, against the card's answer, for every recorded
    problem: equal for every fp16 conv fprop; otherwise the deviceless list lacks only plans of runtime-compiled
    engines (docs/FINDINGS.md; the GPU test asks this live)."""
    cards = [w for w in _answers(target="this GPU", sm_count=None) if w.ok]
    compared = 0
    for card in cards:
        gpu = card.source.removeprefix("recorded on ").split(",")[0]
        name = next(t.name for t in tg.targets() if t.description["deviceName"] == gpu)
        same = [w for w in _answers(target=name, sm_count=None, cudnn_version=card.cudnn_version)
                if w.spec == card.spec and w.source == card.source]
        assert len(same) == 1, card.spec.label()
        mine = {p["plan"]: p for p in card.proposals}
        deviceless = {p["plan"] for p in same[0].proposals}
        if card.spec.op == "conv" and card.spec.direction == "fprop" and card.spec.dtype == "fp16":
            assert set(mine) == deviceless, card.spec.label()
        for plan in set(mine) - deviceless:
            assert "RUNTIME_COMPILATION" in mine[plan]["behavior_notes"], (card.spec.label(), plan)
        compared += 1
    assert compared >= 20


def test_plans_for_reads_a_recording_without_a_gpu():
    w = wi.plans_for(CONV, "sm80")
    assert w.ok and w.synthetic and w.target == "sm80"
    frame = w.frame()
    assert list(frame.columns[:5]) == ["plan", "engine_id", "rank_A", "rank_B", "rank_FALLBACK"]
    assert len(frame) == len(w.proposals) and frame["plan"].is_unique
    assert "not a measurement" in w.summary() and "synthetic" in w.summary()
    assert set(frame["engine_id"]) != set(wi.plans_for(CONV, "h200").frame()["engine_id"])


def test_a_crash_of_cudnn_is_an_answer_not_a_crash_of_the_kit():
    w = wi.plans_for(CONV, "sm100")  # cuDNN 9.19 crashes answering for compute capability 10.0 (recorded)
    assert not w.ok and w.refused == "crashed"
    assert "crashed" in w.summary() and w.reasons().empty


def test_a_carve_out_refusal_carries_cudnns_reasons_by_category():
    mm = next(w for w in _answers(target="this GPU", sm_count=114) if w.spec.op == "matmul" and not w.ok)
    reasons = mm.reasons()
    assert not reasons.empty and set(reasons["category"]) == {"carve-out"}
    assert "carve-out" in mm.summary()


def test_compare_lays_targets_side_by_side_by_engine():
    frame = wi.compare(CONV, ["h200", "sm80", "sm100"], recorded=True)
    assert list(frame.columns) == ["engine_id", "h200 plans", "h200 rank", "sm80 plans", "sm80 rank",
                                   "sm100 plans", "sm100 rank"]
    assert frame["engine_id"].is_unique and frame["sm100 plans"].isna().all()
    assert "sm100" in frame.attrs["refused"] and frame.attrs["labels"]["sm80"].startswith("synthetic")
    h200 = wi.plans_for(CONV, "h200")
    assert frame["h200 plans"].sum() == len(h200.proposals)
    only_ampere = frame[frame["h200 plans"].isna() & frame["sm80 plans"].notna()]
    assert not only_ampere.empty  # engines that appear on Ampere and vanish on Hopper


def test_compare_puts_the_measured_times_of_a_recording_beside_the_answers():
    run = cl.load_results("h200_conv_nhwc_fp16")
    frame = wi.compare(run.spec, ["h200"], measured=run, recorded=True)
    col = "measured on NVIDIA H200: best ms"
    assert col in frame and frame[col].notna().any()
    assert (frame[col].dropna() > 0).all()


def test_drift_between_recorded_cudnn_versions():
    d = wi.drift(CONV, 91400, "h200")
    assert (d.old.cudnn_version, d.new.cudnn_version) == (91400, 91900)
    frame = d.frame()
    assert set(frame["in"]) <= {"both", "only 9.14.0", "only 9.19.0"}
    assert "9.14.0" in d.summary() and "not a measurement" in d.summary()
    mm = cl.MatmulSpec(batch=1, m=1024, n=1024, k=512, dtype="fp16", epilogue=("bias",))
    dm = wi.drift(mm, 91400)
    assert len(dm.old.proposals) != len(dm.new.proposals)  # the card's matmul list changed from 9.14 to 9.19


def test_bad_questions_are_refused_before_any_work():
    with pytest.raises(OptionError, match="spec"):
        wi.plans_for({"op": "conv"}, "h200")
    with pytest.raises(OptionError, match="modes"):
        wi.plans_for(CONV, "h200", modes=("Z",))
    with pytest.raises(OptionError, match="target"):
        wi.plans_for(CONV, "b300")
    for bad in (0, -3, True, 2.5, 10**6):  # refused before anything is asked or read, on any machine
        with pytest.raises(OptionError, match="sm_count"):
            wi.plans_for(CONV, "h200", sm_count=bad)
    with pytest.raises(NoGPUError, match="no answer"):
        wi.plans_for(cl.ConvSpec(n=3, c=8, h=9, w=9, k=8, r=1, s=1, padding=0, layout="NHWC", dtype="fp32"), "h200")
    with pytest.raises(PathError, match="cuDNN library folder"):
        wi.plans_for(CONV, "h200", cudnn_lib="/nonexistent/cudnn")


def test_a_folder_without_cudnn_9_is_refused(tmp_path):
    from cudnn_lab.gpu.asker import check_cudnn_folder

    with pytest.raises(PathError, match="no cuDNN library"):
        check_cudnn_folder(tmp_path)
    (tmp_path / "libcudnn.so.8").write_bytes(b"")
    with pytest.raises(PathError, match="another major version"):
        check_cudnn_folder(tmp_path)
    (tmp_path / "libcudnn.so.9").write_bytes(b"")
    assert check_cudnn_folder(tmp_path) == tmp_path


# ------------------------------------------------------------------------------------------------ why not

MESSAGE = """heur_mode A: no engine proposed a plan (the backend declined: No valid engine configs for __
{"engineId":0,"smVersion":900,"knobChoices":{},"targetSMcount":114}
Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: target_sm_count != deviceProp.multiProcessorCount
Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: finalize_internal()

{"engineId":3,"smVersion":800,"knobChoices":{"CUDNN_KNOB_TYPE_TILE_SIZE":5}}
Warning: CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE; Reason: mathPrec != CUDNN_DATA_FLOAT
Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: engine.finalize()

{"engineId":7,"smVersion":1000,"knobChoices":{}}
Warning: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH; Reason: finalize_internal()
"""


def test_reasons_are_read_engine_by_engine_with_the_innermost_check():
    rows = read_reasons(MESSAGE)
    assert [(r.engine_id, r.sm_version, r.category) for r in rows] == [
        (0, 900, "carve-out"), (3, 800, "data type"), (7, 1000, "architecture")]
    assert rows[0].reason.startswith("target_sm_count") and rows[1].knobs == "TILE_SIZE=5"
    assert summarize(MESSAGE).startswith("cuDNN refused 3 engine configurations of 3 engines")
    assert read_reasons("no engine lines here") == [] and summarize("") == ""


@pytest.mark.parametrize("reason,category", [
    ("!is_NHWC", "layout"), ("Transpose requires cuDNN v9.22.0", "version"), ("cannot load libcuda", "prerequisite"),
    ("only Blackwell is supported for this engine at: !(1000 <= deviceVer && deviceVer < 1200)", "architecture"),
    ("check_genstats_support_fort(node)", "pattern"), ("something else", "other"),
])
def test_each_reason_gets_a_plain_category(reason, category):
    assert category_of("CUDNN_STATUS_NOT_SUPPORTED", reason) == category
    assert category in CATEGORIES


# ------------------------------------------------------------------------------------------------ CLI

def _cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cudnn_lab.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_cli_answers_for_targets_side_by_side(tmp_path):
    spec = tmp_path / "conv.json"
    spec.write_text(CONV.to_json())
    one = _cli("plans", str(spec), "--target", "sm89", "--recorded")
    assert one.returncode == 0, one.stderr
    assert tg.target("sm89").label in one.stdout and "rank_A" in one.stdout
    many = _cli("plans", str(spec), "--target", "h200", "--target", "sm100", "--recorded")
    assert many.returncode == 0 and "sm100 rank" in many.stdout and "crashed" in many.stdout
    bad = _cli("plans", str(spec), "--target", "b300")
    assert bad.returncode == 2 and "target" in bad.stderr and "Traceback" not in bad.stderr


def test_runs_recorded_under_cudnn_9_14_sit_beside_the_shipped_9_19_recordings():
    drifts = wi.recorded_run_drifts()
    assert len(drifts) >= 2
    for d in drifts:
        assert wi.RunDrift.version(d.old) == 91400 and wi.RunDrift.version(d.new) == 91900
        assert d.old.device["gpu"] == d.new.device["gpu"]
        frame = d.frame()
        assert frame["plan"].is_unique and set(frame["in"]) <= {"both", "only 9.14.0", "only 9.19.0"}
        assert len(frame) >= max(len(d.plans(d.old)), len(d.plans(d.new)))
        assert "9.14.0" in d.summary() and "measured on" in d.summary()
    conv = wi.recorded_run_drifts(CONV)
    assert len(conv) == 1 and conv[0].new.spec == CONV


def test_a_recorded_sm_scaling_is_monotone_and_labelled():
    from cudnn_lab.plots.sm_scaling import plot_sm_scaling
    from cudnn_lab.whatif.scaling import LABEL, recorded_scalings

    found = recorded_scalings()
    assert found
    r = found[0]
    per = r.per_count
    best = list(per.sort_values("sms", ascending=False)["best_ms"])
    assert all(b2 >= b1 * 0.97 for b1, b2 in zip(best, best[1:]))  # fewer SMs never faster (3% noise)
    assert r.label == LABEL and not r.refused.empty
    fig = plot_sm_scaling(r)
    assert len(fig.data) >= 2
