"""binder/ builds a working, GPU-less cudnn_lab on Binder (repo2docker).

The fast tests read the files; the slow ones rebuild the environment the way Binder would, in a fresh virtual
environment (with CI's CPU torch instead of the CPU index's newest), then check that the cuDNN frontend builds
graphs without its optional dependencies and run every course notebook (00-09, shrunk as the notebook tests shrink
them) in that environment's own kernel, from a folder outside the checkout: a lesson that reads a file the package
does not ship fails here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parents[1]
BINDER = ROOT / "binder"
FRONTEND = "nvidia-cudnn-frontend"
#: pip options a requirements file may hold here, each followed by a value on the same line.
PIP_OPTIONS = ("--extra-index-url", "--index-url", "--find-links", "-f")


def requirement_lines() -> list[str]:
    lines = [line.split(" #", 1)[0].strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def requirements() -> dict[str, Requirement]:
    return {canonicalize_name(r.name): r for r in map(Requirement, (line for line in requirement_lines()
                                                                    if not line.startswith("-")))}


def pyproject_dependencies() -> dict[str, Requirement]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {canonicalize_name(r.name): r for r in map(Requirement, deps)}


def pip_lines(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines() if re.match(r"\s*(python3? -m )?pip3? install\b", line)]


def test_requirements_are_requirements_or_pip_options() -> None:
    for line in requirement_lines():
        if line.startswith("-"):
            option, _, value = line.partition(" ")
            assert option in PIP_OPTIONS and value.strip(), f"unexpected pip option line {line!r}"
            continue
        try:
            Requirement(line)
        except InvalidRequirement as e:  # pragma: no cover - the assertion message is the point
            pytest.fail(f"{line!r} is neither a requirement nor a pip option: {e}")


def test_requirements_cover_the_package_but_leave_the_frontend_to_postbuild() -> None:
    reqs = requirements()
    missing = set(pyproject_dependencies()) - set(reqs) - {FRONTEND}
    assert not missing, f"binder/requirements.txt lacks {sorted(missing)} (pyproject.toml needs them)"
    assert FRONTEND not in reqs, "the frontend is installed with --no-deps in postBuild, not here"
    assert "." not in requirement_lines(), "`.` would pull the frontend's ~0.5 GB of dependencies through pyproject"
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in requirement_lines()
    assert "torch" in reqs


def test_postbuild_installs_the_frontend_and_the_package_without_dependencies() -> None:
    post = BINDER / "postBuild"
    assert post.stat().st_mode & stat.S_IXUSR, "postBuild must be executable (git keeps the bit: commit it so)"
    script = post.read_text()
    assert script.startswith("#!"), "postBuild needs a shebang"
    assert not re.search(r"\b(sudo|apt-get|apt)\b", script), "postBuild runs without root: packages go in apt.txt"
    lines = pip_lines(script)
    frontend = [line for line in lines if FRONTEND in line]
    assert frontend and all("--no-deps" in line for line in frontend)
    wanted = str(pyproject_dependencies()[FRONTEND].specifier)
    assert any(wanted in line for line in frontend), \
        f"postBuild should ask for {FRONTEND}{wanted} as pyproject.toml does"
    assert any(re.search(r"--no-deps\s+\.(\s|$)", line) for line in lines), "postBuild must install the package itself"


def test_apt_and_runtime() -> None:
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


def test_start_if_any_hands_over_to_jupyter() -> None:
    start = BINDER / "start"
    if not start.exists():
        pytest.skip("no binder/start: none is needed")
    assert start.stat().st_mode & stat.S_IXUSR
    assert start.read_text().strip().splitlines()[-1].strip() == 'exec "$@"'


CHECK_FRONTEND = textwrap.dedent("""
    import importlib.util, json
    absent = [m for m in ("cutlass", "tvm_ffi") if importlib.util.find_spec(m) is not None]
    assert not absent, f"optional dependencies present: {absent}"
    import cudnn
    import cudnn_lab as cl
    specs = [cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                         epilogue=("bias", "relu")),
             cl.MatmulSpec(batch=1, m=64, n=64, k=32, dtype="bf16", epilogue=("bias",))]
    if hasattr(cl, "SdpaSpec"):
        specs.append(cl.SdpaSpec(batch=1, heads=2, seq_q=64, seq_kv=64, head_dim=64, causal=True, dtype="fp16"))
    out = {}
    for spec in specs:
        g = cl.build_graph(spec)
        out[spec.label()] = sorted(g.inspect()["tensors"])
        assert "digraph" in g.to_dot().source
    print(json.dumps({"frontend": cudnn.__version__, "graphs": out}))
""")

RUN_NOTEBOOK = textwrap.dedent("""
    import json, sys, time
    import nbformat
    from nbclient import NotebookClient
    path, kernel = sys.argv[1], sys.argv[2]
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=120, kernel_name=kernel, allow_errors=True,
                   resources={"metadata": {"path": sys.argv[3]}}).execute()
    errors = [f"cell {i - 1}: {o.get('ename')}: {o.get('evalue')}" for i, c in enumerate(nb.cells)
              if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    code = [c for c in nb.cells if c.cell_type == "code"]
    print(json.dumps({"seconds": time.perf_counter() - t0, "errors": errors, "code_cells": len(code),
                      "cells_run": sum(c.get("execution_count") is not None for c in code),
                      "kernel_python": nb.cells[0].outputs[0]["text"].strip()}))
""")


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _notebook_runs() -> Any:
    """tests/notebooks/notebook_runs.py (the course list and the shrinking rule the notebook tests use)."""
    spec = importlib.util.spec_from_file_location("notebook_runs", ROOT / "tests" / "notebooks" / "notebook_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COURSE = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def binder(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh venv built as Binder builds it (requirements.txt, then postBuild in a copy of the repository as git
    would ship it), with a Jupyter kernel of its own; built once for this module's tests."""
    torch_version = metadata.version("torch")
    if "+cpu" not in torch_version:
        pytest.skip(f"this check installs CI's CPU torch into a fresh venv; this machine has torch {torch_version}")
    tmp_path = tmp_path_factory.mktemp("binder")
    # The repository as git would ship it (tracked and new files, none that .gitignore names): postBuild builds
    # the package from it, and leaves its build files there rather than in this checkout.
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    repo = tmp_path / "repo"
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / name)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])  # no --system-site-packages: only what Binder would install
    py, bindir = venv / "bin" / "python", venv / "bin"
    reqs = [f"torch=={torch_version}" if canonicalize_name(Requirement(line).name) == "torch" else line
            for line in requirement_lines() if not line.startswith("-")]  # CI's torch (the CPU index is unreachable)
    (tmp_path / "requirements.txt").write_text("\n".join(reqs) + "\n")
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    _run([str(py), "-m", "pip", "install", "-q", "-r", str(tmp_path / "requirements.txt"), "ipykernel", "nbclient"],
         env=env)
    _run(["bash", str(repo / "binder" / "postBuild")], cwd=tmp_path, env=env)  # as Binder runs it, python = venv's
    jupyter = tmp_path / "jupyter"
    _run([str(py), "-m", "ipykernel", "install", "--prefix", str(jupyter), "--name", "cudnn-lab-binder"], env=env)
    env["JUPYTER_PATH"] = str(jupyter / "share" / "jupyter")
    # The notebooks alone, outside the repository: nothing of the checkout is next to them.
    course = tmp_path / "course"
    course.mkdir()
    return {"tmp": tmp_path, "py": py, "bindir": bindir, "env": env, "course": course}


@pytest.mark.slow
def test_binder_environment_builds_graphs(binder: dict[str, Any]) -> None:
    checked = json.loads(_run([str(binder["py"]), "-c", CHECK_FRONTEND], cwd=binder["tmp"],
                              env=binder["env"]).stdout.splitlines()[-1])
    print("frontend without its optional dependencies:", checked)
    assert checked["frontend"].startswith("1.") and len(checked["graphs"]) >= 2
    where = _run([str(binder["py"]), "-c", "import cudnn_lab; print(cudnn_lab.__file__)"], cwd=binder["course"],
                 env=binder["env"]).stdout.strip()
    assert "site-packages" in where, f"the Binder kernel imports cudnn_lab from {where}, not the installed package"


def test_the_binder_run_covers_the_whole_course() -> None:
    names = [p.name for p in COURSE]
    assert len(names) == 10 and names[0] == "00_quickstart.ipynb" and names[-1] == "09_lab.ipynb", names


@pytest.mark.slow
@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_binder_runs_every_notebook(binder: dict[str, Any], path: Path) -> None:
    runs = _notebook_runs()
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if (cell := runs.params_cell(nb)) is not None:
        cell.source = runs.shrink(cell.source)
    notebook = binder["course"] / path.name
    nbformat.write(nb, notebook)
    ran = json.loads(_run([str(binder["py"]), "-c", RUN_NOTEBOOK, str(notebook), "cudnn-lab-binder",
                           str(binder["course"])], cwd=binder["tmp"], env=binder["env"]).stdout.splitlines()[-1])
    print(f"{path.name} in the Binder venv (shrunk):", ran)  # seconds: printed, not judged
    assert ran["errors"] == [], ran
    assert Path(ran["kernel_python"]).parent == binder["bindir"]
    assert ran["cells_run"] == ran["code_cells"] > 1  # every cell ran to its end
