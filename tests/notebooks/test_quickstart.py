"""The quickstart notebook runs top to bottom on CPU, with its parameters shrunk, and draws both layouts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
NotebookClient = pytest.importorskip("nbclient", reason="notebook tests need nbclient").NotebookClient

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "00_quickstart.ipynb"


@pytest.fixture(scope="module")
def executed() -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = "N, C, H, W, K = 2, 8, 8, 8, 16"
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
                   ).execute()
    return nb, time.perf_counter() - t0


def test_quickstart_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")


def test_quickstart_runs_within_a_minute(executed: tuple[nbformat.NotebookNode, float]) -> None:
    assert executed[1] < 60


def test_quickstart_draws_both_layouts(executed: tuple[nbformat.NotebookNode, float]) -> None:
    drawings = [o for c in executed[0].cells if c.cell_type == "code" for o in c.outputs
                if o.get("output_type") == "execute_result" and ("image/svg+xml" in o["data"]
                                                                  or "application/vnd.jupyter.widget-view+json"
                                                                  in o["data"])]
    assert len(drawings) == 2


def test_quickstart_prints_the_strides_of_both_layouts(executed: tuple[nbformat.NotebookNode, float]) -> None:
    text = "".join(o.get("text", "") for c in executed[0].cells if c.cell_type == "code" for o in c.outputs)
    assert "NCHW strides [512, 64, 8, 1]" in text  # X: 2x8x8x8
    assert "NHWC strides [512, 1, 64, 8]" in text
