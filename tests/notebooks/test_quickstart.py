"""The quickstart notebook runs top to bottom with its parameters shrunk, draws both layouts, and labels the result it
shows: MEASURED HERE on a GPU, else RECORDED with the recording's GPU, driver, cuDNN and date, saying plainly when the
recording is of a different problem."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
NotebookClient = pytest.importorskip("nbclient", reason="notebook tests need nbclient").NotebookClient

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "00_quickstart.ipynb"


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = "N, C, H, W, K = 2, 8, 8, 8, 16"
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return nb


def printed(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_quickstart_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")


def test_quickstart_runs_without_errors(executed: nbformat.NotebookNode) -> None:
    failures = [f"{o.get('ename')}: {o.get('evalue')}" for c in executed.cells if c.cell_type == "code"
                for o in c.outputs if o.get("output_type") == "error"]
    assert failures == []


def test_quickstart_draws_both_layouts(executed: nbformat.NotebookNode) -> None:
    drawings = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs
                if o.get("output_type") == "execute_result" and ("image/svg+xml" in o["data"]
                                                                  or "application/vnd.jupyter.widget-view+json"
                                                                  in o["data"])]
    assert len(drawings) == 2


def test_quickstart_prints_the_strides_of_both_layouts(executed: nbformat.NotebookNode) -> None:
    text = printed(executed)
    assert "NCHW strides [512, 64, 8, 1]" in text  # X: 2x8x8x8
    assert "NHWC strides [512, 1, 64, 8]" in text


def test_quickstart_labels_the_result_it_shows(executed: nbformat.NotebookNode) -> None:
    from cudnn_lab.capabilities import probe

    text = printed(executed)
    if probe().gpu:
        assert "MEASURED HERE on this machine's NVIDIA" in text
        return
    # Shrunk sizes: no recording of this exact problem, so the notebook must say it shows a different one, and which.
    assert "RECORDED on NVIDIA" in text and " · cuDNN 9." in text
    assert "(h100_conv_nhwc_fp16_bias_relu)" in text or "(h200_conv_nhwc_fp16_bias_relu)" in text
    assert "a DIFFERENT problem: conv fprop NHWC fp16 n16 c64 56x56 k128 3x3 pad1 str1+bias+relu" in text


def test_quickstart_finds_the_recording_of_its_own_problem() -> None:
    """At the notebook's own sizes the recording shown is of exactly the problem the lesson built."""
    import cudnn_lab as cl
    from cudnn_lab.course import recording_for

    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    values: dict = {}
    exec(params.source, {}, values)  # noqa: S102 - the notebook's own parameters cell
    spec = cl.ConvSpec(n=values["N"], c=values["C"], h=values["H"], w=values["W"], k=values["K"], r=3, s=3,
                       padding=1, layout="NHWC", dtype="fp16", epilogue=("bias", "relu"))
    name, exact = recording_for(spec)
    assert exact and cl.load_results(name).spec == spec
