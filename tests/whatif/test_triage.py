"""The version triage (issue 38 step 3, whatif/version_triage.py): the answer round-trips, its paragraph is built right
from runs (the shipped recordings: two versions agreeing, one run's band changed, one refusing, one missing), bad input
is refused naming the argument, and on a GPU host it names both cuDNN versions."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError, NoGPUError, OptionError, PathError
from cudnn_lab.results import RunResult
from cudnn_lab.whatif.version_triage import (SYSTEM_CUDNN, Triage, VersionRun, _passes, recorded_triages,
                                               triage)
from cudnn_lab.whatif.versions import recorded_run_drifts


def _runs() -> tuple[RunResult, RunResult]:
    """Two recorded runs of one spec under two cuDNN versions (newer first)."""
    d = recorded_run_drifts()[0]
    return d.new, d.old


def _triage(*extra: VersionRun, new: RunResult | None = None) -> Triage:
    here, other = _runs()
    new = here if new is None else new
    return Triage(here.spec, (VersionRun("this process", 91900, "ran", new),
                              VersionRun("/other", 91400, "ran", other), *extra), (), "NVIDIA H100")


def test_a_recorded_triage_round_trips() -> None:
    found = recorded_triages()
    assert found and all(isinstance(t, Triage) for t in found)
    for t in found:
        back = Triage.from_dict(json.loads(json.dumps(t.to_dict(), default=str)))
        assert back.summary() == t.summary() and back.frame().equals(t.frame())
        assert recorded_triages(t.spec) and not recorded_triages(cl.MatmulSpec(batch=3, m=24, n=40, k=72))


def test_two_versions_agreeing_are_both_named_with_their_fastest_plan() -> None:
    t = _triage()
    text = t.summary()
    assert "cuDNN 9.19.0" in text and "cuDNN 9.14.0" in text and "results agree" in text
    assert text.count("Fastest under") == 2 and "PyTorch" in text
    assert list(t.frame()["status"]) == ["ran", "ran"]


def test_disagreeing_versions_say_how_many_plans_are_in_the_band() -> None:
    here, _ = _runs()
    plans = here.plans.copy()
    ok, checked = _passes(here)
    assert ok == checked > 1
    plans.loc[plans["pass_cudnn"].eq(True).idxmax(), "pass_cudnn"] = False  # one plan outside the band
    text = _triage(new=dataclasses.replace(here, plans=plans)).summary()
    assert "disagree" in text and f"cuDNN 9.19.0 {ok - 1} of {checked} plans" in text


def test_a_refusing_and_a_missing_cudnn_are_said_and_the_triage_goes_on() -> None:
    t = _triage(VersionRun("/opt/cudnn915", 0, "refused", reason="no engine supports this graph"),
                VersionRun("/nowhere", 0, "missing", reason="the folder does not exist"))
    text = t.summary()
    assert "refused it: no engine supports this graph" in text and "The cuDNN in /nowhere is missing" in text
    assert "results agree" in text and list(t.frame()["status"]) == ["ran", "ran", "refused", "missing"]
    back = Triage.from_dict(json.loads(json.dumps(t.to_dict(), default=str)))
    assert back.summary() == text


def test_bad_input_names_the_argument(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="spec"):
        triage("not a spec")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="cudnn_libs"):
        triage(_runs()[0].spec, cudnn_libs=42)
    with pytest.raises(OptionError, match="status"):
        VersionRun("/x", 0, "fine")
    with pytest.raises(OptionError, match="result"):
        VersionRun("/x", 0, "ran")
    with pytest.raises(DataError, match="versions"):
        Triage.from_dict({"spec": _runs()[0].spec.to_dict(), "versions": 3, "alternatives": [], "gpu": "", "note": ""})
    with pytest.raises(DataError):
        Triage.from_dict(["not", "a", "triage"])


def test_a_folder_that_is_not_a_cudnn_is_refused_naming_it(tmp_path: Path) -> None:
    from cudnn_lab.gpu.asker import check_cudnn_folder

    with pytest.raises(PathError, match=str(tmp_path)):
        check_cudnn_folder(tmp_path)
    with pytest.raises(PathError, match="holds no cuDNN library"):  # refused before any run, GPU or not
        triage(_runs()[0].spec, cudnn_libs=[tmp_path])


def test_without_a_gpu_the_recorded_triage_or_a_clear_no_gpu_error() -> None:
    if cl.capabilities.gpu_visible():
        pytest.skip("a GPU is visible")
    t = recorded_triages()[0]
    assert triage(t.spec) is t or triage(t.spec).summary() == t.summary()
    with pytest.raises(NoGPUError, match="recorded triage"):
        triage(cl.MatmulSpec(batch=3, m=24, n=40, k=72))


def test_the_cli_prints_the_paragraph_or_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cudnn_lab.cli import main

    spec = tmp_path / "mm.json"
    spec.write_text(cl.MatmulSpec(batch=3, m=24, n=40, k=72).to_json())
    code = main(["triage", str(spec)])
    err = capsys.readouterr().err
    if not cl.capabilities.gpu_visible():
        assert code != 0 and "cudnn-lab triage" in err and "GPU" in err
    assert main(["triage"]) != 0 and "spec" in capsys.readouterr().err


@pytest.mark.gpu
def test_a_small_3d_conv_is_triaged_under_both_cudnn_versions(tmp_path: Path) -> None:
    spec = cl.Conv3dSpec(n=1, c=32, d=4, h=16, w=16, k=32, t=3, r=3, s=3, padding=1, layout="NDHWC", dtype="fp16")
    t = triage(spec)
    text = t.summary()
    assert t.versions[0].status == "ran" and "cuDNN 9.19" in text
    if any(SYSTEM_CUDNN.glob("libcudnn*.so.9*")):
        assert len(t.versions) == 2 and "cuDNN 9.14" in text, text
    assert Triage.from_dict(json.loads(json.dumps(t.to_dict(), default=str))).summary() == text


def test_the_other_layout_is_the_named_alternative() -> None:
    from cudnn_lab.whatif.version_triage import _other_layout

    spec = cl.preset("Wan2.1 video VAE conv3d")
    found = _other_layout(spec)
    assert found is not None and found[0] == "the NCDHW layout"
    assert found[1].layout == "NCDHW" and found[1].replace(layout=spec.layout) == spec
