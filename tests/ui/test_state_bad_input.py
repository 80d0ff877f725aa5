"""The Lab's state from bad input: link bombs, oversized, nested, special or half-valid state files and codes are
refused with the kit's error naming the field, file or option, and a state (or recording) that fails leaves the
Lab exactly as it was."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from lab_samples import CONV_RECORDING, MATMUL_RECORDING, SWEEPS, plan_names

import cudnn_lab as cl
from cudnn_lab.results.loading import MAX_STATE_BYTES
from cudnn_lab.ui.state import CODE_PREFIX, MAX_CODE_CHARS, LabState
from cudnn_lab.ui.sweep_axes import validate_axes

GOOD = LabState(spec=cl.ConvSpec(), view="Plans").to_dict()


def _code_of(raw_chunks: Any) -> str:
    """A state code whose compressed body is the given chunks (made in pieces: the test never holds them whole)."""
    packer = zlib.compressobj(9)
    packed = b"".join(packer.compress(chunk) for chunk in raw_chunks) + packer.flush()
    return CODE_PREFIX + base64.urlsafe_b64encode(packed).decode().rstrip("=")


def _write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _snapshot(lab: cl.Lab) -> tuple[Any, ...]:
    """Everything a state or a load could change: the state, the result object, the highlighted plan."""
    return lab.state(), lab.result, lab.selected, lab.controls.spec, lab.run_form.options


@pytest.fixture
def shown() -> cl.Lab:
    """A Lab showing the matmul recording, its second plan selected, on the Latency view, with other run options."""
    lab = cl.Lab(gpu=False)
    lab.load_recorded(MATMUL_RECORDING)
    lab.select(plan_names(lab.result)[1])
    lab.view = "Latency"
    lab.run_options = cl.RunOptions(plans="all", timing="events")
    lab.status_log.messages.clear()
    return lab


# ------------------------------------------------------------------------------------------------ state codes

@pytest.mark.parametrize("megabytes, why", [(200, "characters long"), (40, "inflates to more than")])
def test_a_link_bomb_is_refused_quickly_and_small(megabytes: int, why: str) -> None:
    """200 MB of '[' is refused by its length before decoding; 40 MB (a code under the length bound) is inflated
    only up to the state bound, never whole."""
    chunk = b"[" * 2**20
    code = _code_of(chunk for _ in range(megabytes))
    assert (len(code) > MAX_CODE_CHARS) == (megabytes == 200)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(cl.OptionError, match=why) as caught:
            LabState.from_code(code)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 1.0 and peak < 50 * 2**20, (elapsed, peak)
    assert caught.value.option == "state code" and len(str(caught.value)) < 400


@pytest.mark.parametrize("text, needle", [
    ('[' * 5000 + ']' * 5000, "nested more than"),
    ('{"version": 1, "spec": {"op": "conv", "n": 1' + "0" * 5000 + '}}', "number the kit cannot use"),
    ('{"version": 1, "spec": NaN}', "number the kit cannot use"),
    ("not json at all", "not valid JSON"),
])
def test_a_code_holding_bad_json_is_refused(text: str, needle: str) -> None:
    with pytest.raises(cl.OptionError, match=needle) as caught:
        LabState.from_code(_code_of([text.encode()]))
    assert caught.value.option == "state code"


def test_a_code_with_bytes_that_are_not_text_is_damaged() -> None:
    with pytest.raises(cl.OptionError, match="state code.*damaged"):
        LabState.from_code(_code_of([b"\xff\xfe{}"]))


def test_a_code_holding_a_bad_state_names_the_field() -> None:
    with pytest.raises(cl.DataError, match="state code.*field view") as caught:
        LabState.from_code(_code_of([json.dumps({**GOOD, "view": "Nope"}).encode()]))
    assert "Graph" in str(caught.value)  # says what is allowed
    with pytest.raises(cl.DataError, match="field spec: is missing"):
        LabState.from_code(_code_of([json.dumps({"version": 1, "view": "Graph"}).encode()]))


def test_a_pasted_giant_code_leaves_the_lab_and_says_why_briefly(shown: cl.Lab) -> None:
    before = _snapshot(shown)
    shown.state_panel.path.value = CODE_PREFIX + "A" * 900_000
    shown.state_panel.load_button.click()
    assert _snapshot(shown) == before
    assert "state code" in shown.status.value and "cl-status-error" in shown.status.value
    assert len(shown.status.value) < 600 and len(shown.messages[-1]) < 600


# ------------------------------------------------------------------------------------------------ state files

def test_a_state_file_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "lab_state.json"
    os.mkfifo(fifo)
    caught: list[BaseException] = []
    reader = threading.Thread(target=lambda: caught.append(pytest.raises(cl.PathError, LabState.load, fifo).value),
                              daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "LabState.load blocked on a FIFO"
    assert caught and "lab_state.json" in str(caught[0]) and "regular file" in str(caught[0])


def test_a_state_file_larger_than_the_bound_is_refused_before_reading(tmp_path: Path) -> None:
    big = _write(tmp_path / "big.json", json.dumps({**GOOD, "selected": None}) + " " * (MAX_STATE_BYTES + 10))
    with pytest.raises(cl.DataError, match="big.json.*more than the 1 MiB"):
        LabState.load(big)


@pytest.mark.parametrize("text, needle", [
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels"),
    ('{"version": 1, "spec": {"op": "conv", "n": ' + "9" * 5000 + "}}", "number the kit cannot use"),
    ('{"version": ' + "1" * 30 + ', "spec": {"op": "conv"}}', "number the kit cannot use"),
    ('{"version": 1, "spec": {"op": "conv", "n": 1' + "0" * 30 + "}}", "number the kit cannot use"),
    ("", "is empty"),
    ('{"version": 1, "spec": ', "ends early"),
])
def test_nested_huge_or_broken_state_files_get_the_kits_error(tmp_path: Path, text: str, needle: str) -> None:
    path = _write(tmp_path / "lab.json", text)
    with pytest.raises(cl.DataError, match=needle) as caught:
        LabState.load(path)
    assert "lab.json" in str(caught.value) and len(str(caught.value)) < 600


@pytest.mark.parametrize("change, needle", [
    ({"view": "Nope"}, "field view: must be one of Graph"),
    ({"view": ["Graph"]}, "field view: must be text"),
    ({"selected": 3}, "field selected: must be text"),
    ({"selected": "p" * 5000}, "field selected: must be a name of 1 to 1024 characters"),
    ({"selected": ""}, "field selected: must be a name"),
    ({"recorded": {"name": "x"}}, "field recorded: must be text"),
    ({"recorded": "r" * 5000}, "field recorded: must be a name of 1 to 4096 characters"),
    ({"version": True}, "field version: must be 1"),
    ({"version": "1"}, "field version: must be 1"),
    ({"version": 2}, "field version: must be 1"),
    ({"source": "cloud"}, "field source"),
    ({"run": {"plans": "x" * 10_000}}, "field run.plans"),
    ({"veiw": "Plans"}, "field veiw: is not a Lab state key"),
    ({"k" * 10_000: 1}, "is not a Lab state key"),
])
def test_each_bad_field_of_a_state_file_is_named(tmp_path: Path, change: dict[str, Any], needle: str) -> None:
    path = _write(tmp_path / "lab.json", {**GOOD, **change})
    with pytest.raises(cl.DataError, match=needle) as caught:
        LabState.load(path)
    assert "lab.json" in str(caught.value) and len(str(caught.value)) < 600


@pytest.mark.parametrize("data, needle", [
    ({"version": 1, "view": "Graph"}, "field spec: is missing"),
    ({"spec": cl.ConvSpec().to_dict()}, "field version: is missing"),
    ({"version": 1, "spec": None}, "field spec: must be an object"),
])
def test_a_state_without_spec_or_version_says_which_is_missing(tmp_path: Path, data: dict[str, Any],
                                                               needle: str) -> None:
    with pytest.raises(cl.DataError, match=needle):
        LabState.load(_write(tmp_path / "lab.json", data))
    with pytest.raises(cl.OptionError, match=needle):  # a dict given in code: an argument
        LabState.from_dict(data)


def test_a_state_made_in_code_checks_its_fields() -> None:
    with pytest.raises(cl.OptionError, match="option selected"):
        LabState(spec=cl.ConvSpec(), selected="p" * 5000)
    with pytest.raises(cl.OptionError, match="option recorded"):
        LabState(spec=cl.ConvSpec(), recorded=["h100_standard"])  # type: ignore[arg-type]
    with pytest.raises(cl.OptionError, match="option view"):
        LabState(spec=cl.ConvSpec(), view=3)  # type: ignore[arg-type]
    with pytest.raises(cl.OptionError, match="LabState"):
        cl.Lab(gpu=False).apply_state(GOOD)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ all or nothing

@pytest.mark.parametrize("change, needle", [
    ({"recorded": "no_such_recording"}, "option recorded='no_such_recording': does not load here"),
    ({"recorded": SWEEPS[0]}, "is a sweep"),
    ({"recorded": CONV_RECORDING, "selected": "eng0_no_such_plan"}, "option selected='eng0_no_such_plan'"),
])
def test_a_half_valid_state_changes_nothing(shown: cl.Lab, tmp_path: Path, change: dict[str, Any],
                                            needle: str) -> None:
    """Its spec, view and run options are fine; its recording or plan is not: nothing of it is applied."""
    state = {**LabState(spec=cl.ConvSpec(n=4), view="Code", run=cl.RunOptions(plans="heuristic"),
                        source="live").to_dict(), **change}
    before = _snapshot(shown)
    with pytest.raises(cl.OptionError, match=needle):
        shown.apply_state(LabState.from_dict(state))
    assert _snapshot(shown) == before and shown.view == "Latency"
    shown.state_panel.path.value = str(_write(tmp_path / "half.json", state))
    shown.state_panel.load_button.click()  # the panel's way: refused in one sentence, nothing changed
    assert _snapshot(shown) == before and shown.view == "Latency"
    assert "cl-status-error" in shown.status.value and ("recorded" in shown.messages[-1]
                                                         or "selected" in shown.messages[-1])
    assert len(shown.messages) == 1 and len(shown.messages[-1]) < 600


def test_a_bad_state_file_through_the_panel_changes_nothing(shown: cl.Lab, tmp_path: Path) -> None:
    before = _snapshot(shown)
    for name, data in (("view.json", {**GOOD, "view": "Nope"}), ("nospec.json", {"version": 1})):
        shown.state_panel.path.value = str(_write(tmp_path / name, data))
        shown.state_panel.load_button.click()
        assert _snapshot(shown) == before
        assert name in shown.status.value and "cl-status-error" in shown.status.value
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    shown.state_panel.path.value = str(fifo)
    shown.state_panel.load_button.click()
    assert _snapshot(shown) == before and "pipe.json" in shown.status.value


def test_a_valid_state_with_a_recording_is_applied_whole(shown: cl.Lab) -> None:
    conv = cl.load_results(CONV_RECORDING)
    plan = plan_names(conv)[2]
    state = LabState(spec=conv.spec, view="Numerics", selected=plan, run=cl.RunOptions(plans="heuristic"),
                     source="recorded", recorded=CONV_RECORDING)
    shown.apply_state(state)
    assert shown.state() == state.to_dict() and shown.result.spec == conv.spec and shown.selected == plan


# ------------------------------------------------------------------------------------------------ recordings

def test_a_recording_that_fails_validation_changes_nothing(shown: cl.Lab, tmp_path: Path) -> None:
    data = json.loads(Path(cl.load_results(CONV_RECORDING).loaded_from).read_text())
    data["plans"][0]["median_ms"] = "fast"
    bad = _write(tmp_path / "bad_run.json", data)
    before = _snapshot(shown)
    for source in (str(bad), SWEEPS[0], "r" * 900_000, str(tmp_path / "missing.json")):
        shown.status_log.guard(shown.load_recorded, source)
        assert _snapshot(shown) == before and shown.view == "Latency"
        assert "cl-status-error" in shown.status.value and len(shown.status.value) < 700
    assert len(shown.messages) == 4 and all(len(m) < 600 for m in shown.messages)
    assert "bad_run.json" in shown.messages[0] and "median_ms" in shown.messages[0]
    assert "sweep" in shown.messages[1] and "recording" in shown.messages[2]


# ------------------------------------------------------------------------------------------------ field messages

def test_a_huge_value_in_a_field_gives_a_short_message() -> None:
    lab = cl.Lab(gpu=False)
    lab.controls.active["n"].value = "9" * 900_000
    message = lab.controls.invalid["n"]
    assert "n=" in message and "900002 chars" in message and len(message) < 300
    _, errors, _ = validate_axes(cl.ConvSpec(), [("n", "x" * 900_000)])
    assert errors and len(errors[0]) < 300 and errors[0].startswith("n=")
