"""scripts/setup.sh's decisions (run with --dry-run: nothing installed, created or written) and
scripts/strip_notebooks.py (`make clean-notebooks`). The repository's .venv is never touched: VENV points elsewhere."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUP = ROOT / "scripts" / "setup.sh"
WANT = f"{hashlib.sha256((ROOT / 'pyproject.toml').read_bytes()).hexdigest()} {ROOT}\n"  # what a stamp holds


def setup(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SETUP), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "VENV": str(venv)})


def steps(run: subprocess.CompletedProcess[str]) -> list[str]:
    assert run.returncode == 0, run.stderr
    return [line for line in run.stdout.splitlines()  # the venv and pip steps (not apt-get's, which vary by machine)
            if line.startswith("setup: would run: ") and "apt-get" not in line and "git config" not in line]


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A venv that exists (its python runs this interpreter): the stamps decide what is installed."""
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python.parent.parent


def test_a_fresh_lab_setup_installs_only_what_the_lab_needs(tmp_path: Path) -> None:
    venv = tmp_path / "new"
    run = setup(venv, "--dry-run")
    done = steps(run)
    assert any(f"-m venv {venv}" in s for s in done)
    assert done[-1] == f"setup: would run: {venv}/bin/python -m pip install -e ."
    assert not any("[test]" in s for s in done)
    assert "dry run: nothing installed" in run.stdout and not venv.exists()


def test_a_fresh_test_setup_adds_the_test_extra(tmp_path: Path) -> None:
    venv = tmp_path / "new"
    run = setup(venv, "--test", "--dry-run")
    assert steps(run)[-1] == f"setup: would run: {venv}/bin/python -m pip install -e .[test]"
    assert "test tools" in run.stdout and not venv.exists()


def test_each_long_step_says_what_it_installs_and_how_long_first(tmp_path: Path) -> None:
    lines = setup(tmp_path / "new", "--test", "--dry-run").stdout.splitlines()
    for i, line in enumerate(lines):
        if " pip install " in line:
            before = lines[i - 2] + lines[i - 1]
            assert "installing" in before and "minute" in before, (line, before)


def test_a_lab_only_venv_gets_the_test_extra_on_the_first_make_test(venv: Path) -> None:
    (venv / ".cudnn_lab_base_installed").write_text(WANT)
    run = setup(venv, "--dry-run")
    assert steps(run) == [] and "packages up to date" in run.stdout
    done = steps(setup(venv, "--test", "--dry-run"))
    assert done == [f"setup: would run: {venv}/bin/python -m pip install -e .[test]"]  # no torch, no venv
    (venv / ".cudnn_lab_test_installed").write_text(WANT)
    assert steps(setup(venv, "--test", "--dry-run")) == []


def test_a_changed_pyproject_installs_again(venv: Path) -> None:
    for stamp in (".cudnn_lab_base_installed", ".cudnn_lab_test_installed"):
        (venv / stamp).write_text("0" * 64 + f" {ROOT}\n")
    assert steps(setup(venv, "--dry-run"))[-1].endswith("pip install -e .")
    assert steps(setup(venv, "--test", "--dry-run"))[-1].endswith("pip install -e .[test]")


def test_the_stamp_of_earlier_setups_counts_for_both(venv: Path) -> None:
    (venv / ".cudnn_lab_installed").write_text(WANT)  # written after `pip install -e '.[test]'`
    assert steps(setup(venv, "--dry-run")) == []
    assert steps(setup(venv, "--test", "--dry-run")) == []


def test_an_unknown_option_is_refused(tmp_path: Path) -> None:
    run = setup(tmp_path / "new", "--tset")
    assert run.returncode == 2 and "unknown option '--tset'" in run.stderr and not (tmp_path / "new").exists()


def test_strip_notebooks_clears_outputs_and_leaves_clean_notebooks_alone(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    dirty, clean = tmp_path / "dirty.ipynb", tmp_path / "clean.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("1 + 1")])
    nbformat.write(nb, clean)
    nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    nb.cells[1].execution_count = 1
    nb.metadata["widgets"] = {"state": {}}
    nbformat.write(nb, dirty)
    before = clean.stat().st_mtime_ns
    script = [sys.executable, str(ROOT / "scripts" / "strip_notebooks.py")]
    check = subprocess.run([*script, "--check", str(dirty), str(clean)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 1 and "dirty.ipynb: keeps outputs" in check.stdout and "clean" not in check.stdout
    assert subprocess.run([*script, str(dirty), str(clean)], timeout=60).returncode == 0
    stripped = nbformat.read(dirty, as_version=4)
    assert stripped.cells[1].outputs == [] and stripped.cells[1].execution_count is None
    assert "widgets" not in stripped.metadata and clean.stat().st_mtime_ns == before
    assert subprocess.run([*script, "--check", str(dirty), str(clean)], timeout=60).returncode == 0


def test_setup_installs_the_notebook_filter_that_gitattributes_names(tmp_path: Path) -> None:
    run = setup(tmp_path / "new", "--dry-run")
    clean = f"{tmp_path / 'new'}/bin/python scripts/strip_notebooks.py --stdin"
    assert f"would run: git config filter.strip-notebooks.clean {clean}" in run.stdout
    assert "notebooks/*.ipynb filter=strip-notebooks" in (ROOT / ".gitattributes").read_text().splitlines()


def test_the_filter_stores_a_run_notebook_byte_equal_to_the_stored_one() -> None:
    """A notebook as JupyterLab autosaves it (outputs, counts, timing, widget state, its kernel metadata) comes out
    of the git filter byte-equal to the stored notebook, so `git status` stays clean after the course is run."""
    nbformat = pytest.importorskip("nbformat")
    script = [sys.executable, str(ROOT / "scripts" / "strip_notebooks.py"), "--stdin"]
    for stored in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(stored, as_version=4)
        for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
            cell.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
            cell.execution_count = n + 1
            cell.metadata["execution"] = {"iopub.status.idle": "2026-11-29T04:00:00.000Z"}
        nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
        nb.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
        nb.metadata["language_info"] = {"codemirror_mode": {"name": "ipython", "version": 3}, "name": "python",
                                        "version": "3.12.3", "mimetype": "text/x-python"}
        run = subprocess.run(script, input=nbformat.writes(nb).encode(), capture_output=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.stdout == stored.read_bytes(), f"{stored.name}: the filter's output differs from the stored file"


def test_lab_load_without_the_test_tools_says_how_to_get_them() -> None:
    """After `make lab` alone (no pytest, no playwright) the lab benchmark says in one sentence how to get them,
    instead of failing on "No module named 'pytest'"."""
    hide = "import sys; sys.modules['pytest'] = sys.modules['playwright'] = None; sys.argv = ['lab_load.py']; "
    main = "import runpy; runpy.run_path(sys.argv[0], run_name='__main__')"
    run = subprocess.run([sys.executable, "-c", hide + main], capture_output=True, text=True,
                         timeout=120, cwd=ROOT / "benchmarks")
    assert run.returncode == 2 and "No module named" not in run.stderr, run.stderr
    assert "needs pytest and playwright" in run.stderr and "make test" in run.stderr and ".[test]" in run.stderr


def test_a_long_step_says_it_is_still_at_work() -> None:
    """setup.sh's heartbeat (around apt-get and pip) speaks every HEARTBEAT_S seconds while the step runs, so a
    first `make lab` has no silent minute, and keeps the step's exit status."""
    text = SETUP.read_text()
    body = text[text.index("HEARTBEAT_S=${HEARTBEAT_S:-20}"):text.index("# step \"what it does\"")]
    script = "say() { printf 'setup: %s\\n' \"$*\"; }\n" + body + "heartbeat sleep 2.5 && heartbeat false || echo rc=$?"
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "HEARTBEAT_S": "1"})
    assert "setup: ... still at work (sleep, 2 s)" in run.stdout and run.stdout.rstrip().endswith("rc=1")
    assert text.count("heartbeat ") >= 5  # both apt-get steps (update, install) and pip
