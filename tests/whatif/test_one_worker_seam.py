"""One way to start a child process for the kit's workers (issue 34): only cudnn_lab/gpu/workers/ starts one. Outside
it, no module imports subprocess or multiprocessing, spawns ``sys.executable``, forks or execs, or has a ``__main__``
block of its own, except the nvidia-smi probes (capabilities.py, gpu/device.py), the CLI (its ``__main__``, and
``cudnn-lab lab`` replacing its own process with JupyterLab) and the sweep's multi-GPU executor (a
``concurrent.futures`` process pool, the same shape as a Dask cluster's executor, for ``cl.sweep(executor=...)``)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "cudnn_lab"
SEAM = ("gpu", "workers")
#: Modules that run nvidia-smi (a driver probe, not a kit worker) and may import subprocess for it.
NVIDIA_SMI_PROBES = {"capabilities.py", "gpu/device.py"}
#: The one module with a ``__main__`` block outside the seam: the command line.
CLI = "cli.py"
#: Process starts that are no kit worker, each with where it is and why: module -> the names it may use.
NOT_WORKERS = {
    "cli.py": {"sys.executable", "os.execv", "subprocess"},  # `cudnn-lab lab` execs `python -m jupyter lab` in this
    # process; its notebook post-save hook runs `git diff --quiet` / `git add` on the saved notebook (git, no worker)
    "sweeps/executors.py": {"multiprocessing"},  # GPUExecutor: a concurrent.futures pool, like Dask's executor
}
#: Names whose use starts a process other than through the seam.
OS_SPAWNERS = {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
               "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
               "spawnl", "spawnle", "spawnlp", "spawnlpe"}


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[:2] != SEAM:
            out[rel.as_posix()] = ast.parse(path.read_text(), str(path))
    return out


def _imported(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_seam_exists_and_the_walk_sees_the_probes() -> None:
    assert (PACKAGE / "gpu" / "workers" / "process.py").exists()
    mods = _modules()
    assert NVIDIA_SMI_PROBES <= set(mods) and CLI in mods
    assert all("subprocess" in _imported(mods[m]) for m in NVIDIA_SMI_PROBES)
    assert "multiprocessing" in _imported(mods["sweeps/executors.py"])  # an exception still needed, or drop it


def test_only_the_nvidia_smi_probes_import_subprocess_and_nothing_imports_multiprocessing() -> None:
    found = {m: _imported(t) & {"subprocess", "multiprocessing", "pty"} for m, t in _modules().items()}
    offenders = {m: sorted(n) for m, n in found.items()
                 if n and not (m in NVIDIA_SMI_PROBES and n == {"subprocess"}) and not n <= NOT_WORKERS.get(m, set())}
    assert not offenders, f"start workers through cudnn_lab.gpu.workers (Worker, call_once): {offenders}"


def test_the_probes_run_nvidia_smi_only() -> None:
    for m in NVIDIA_SMI_PROBES:
        text = (PACKAGE / m).read_text()
        assert "nvidia-smi" in text and "sys.executable" not in text, m


def test_no_module_spawns_python_forks_or_execs_outside_the_seam() -> None:
    offenders = []
    for m, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (
                    (node.attr == "executable" and isinstance(node.value, ast.Name) and node.value.id == "sys")
                    or (node.attr in OS_SPAWNERS and isinstance(node.value, ast.Name) and node.value.id == "os")):
                if ast.unparse(node) not in NOT_WORKERS.get(m, set()):
                    offenders.append(f"{m}:{node.lineno} {ast.unparse(node)}")
    assert not offenders, f"start workers through cudnn_lab.gpu.workers: {offenders}"


def test_only_the_cli_has_a_main_block_outside_the_seam() -> None:
    mains = sorted(m for m, tree in _modules().items()
                   if any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body))
    assert mains == [CLI], f"a worker is a role run by cudnn_lab.gpu.workers, not a module's __main__: {mains}"
