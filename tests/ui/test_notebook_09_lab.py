"""notebooks/09_lab.ipynb is stored without outputs and runs top to bottom on CPU without errors."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
NotebookClient = pytest.importorskip("nbclient", reason="notebook tests need nbclient").NotebookClient

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "09_lab.ipynb"
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
                   ).execute()
    return nb


def test_notebook_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")
    assert nb.cells[0].cell_type == "markdown"
    for view in ("Graph", "Plans", "Latency", "Heuristics", "Numerics", "Roofline", "Sweep", "Code"):
        assert f"**{view}**" in nb.cells[0].source


def test_notebook_runs_without_errors(executed: nbformat.NotebookNode) -> None:
    nb = executed
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert errors == []


def test_notebook_shows_the_lab_widget(executed: nbformat.NotebookNode) -> None:
    shown = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs
             if o.get("output_type") == "execute_result" and WIDGET in o.get("data", {})]
    assert len(shown) == 1


def test_notebook_loads_a_recording_without_gpu(executed: nbformat.NotebookNode) -> None:
    """The widget state saved by the run holds the Plans table (its rows) that the load cell filled."""
    import cudnn_lab as cl

    if cl.probe().gpu or not len(cl.recorded_datasets()):
        pytest.skip("a GPU is present, or no recording is shipped: the load cell does nothing")
    states = executed.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = [m.get("state", {}) for m in states.get("state", {}).values()]
    tables = [m["rows"] for m in models if isinstance(m.get("rows"), list) and m["rows"]]  # the Plans table's rows
    assert tables and any("eng" in str(row) for row in tables[-1])
