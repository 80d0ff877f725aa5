"""The `cudnn-lab` command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cudnn_lab import cli
from cudnn_lab.capabilities import probe
from cudnn_lab.options import RunOptions


class Execd(Exception):
    """Raised by the stand-in for os.execv, so that no JupyterLab starts."""


@pytest.fixture
def execv(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    seen: dict[str, object] = {}

    def fake_execv(path: str, argv: list[str]) -> None:
        seen.update(path=path, argv=argv)
        raise Execd

    monkeypatch.setattr(cli.os, "execv", fake_execv)
    monkeypatch.setattr(cli.os, "chdir", lambda where: seen.update(cwd=Path(where)))
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000, raising=False)  # not root (as root, see the tests below)
    return seen


def test_doctor_prints_the_probe_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["doctor"]) == 0
    assert capsys.readouterr().out == probe().summary() + "\n"


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "doctor" in out
    assert "lab" in out


def test_version_names_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"cudnn-lab {version('cudnn_lab')}"


def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "required" in capsys.readouterr().err


def test_doctor_rejects_unknown_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["doctor", "--no-browser"]) == 2
    assert "unrecognized arguments: --no-browser" in capsys.readouterr().err


HOOK = "--FileContentsManager.post_save_hook=cudnn_lab.cli.refresh_saved_notebook"


def test_lab_opens_the_quickstart_notebook_in_the_repo(
    execv: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "QUICKSTART", Path("pyproject.toml"))  # a file that the repo has
    with pytest.raises(Execd):
        cli.main(["lab", "--no-browser", "--port", "8899"])
    assert execv["argv"] == [sys.executable, "-m", "jupyter", "lab", "--ServerApp.default_url=/lab/tree/pyproject.toml",
                             HOOK, "pyproject.toml", "--no-browser", "--port", "8899"]
    assert execv["cwd"] == Path(cli.__file__).resolve().parent.parent


def test_lab_without_the_notebook_opens_the_current_folder(
    execv: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "QUICKSTART", Path("no_such_notebook.ipynb"))
    with pytest.raises(Execd):
        cli.main(["lab"])
    assert execv["argv"] == [sys.executable, "-m", "jupyter", "lab"]
    assert execv["cwd"] == Path.cwd()


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "cudnn-lab"
    result = subprocess.run([str(script), "doctor"], capture_output=True, text=True, check=True)
    assert "cuDNN frontend" in result.stdout


def test_run_with_invalid_spec_file_exits_2_naming_the_field(tmp_path, capsys) -> None:
    spec = tmp_path / "bad.json"
    spec.write_text('{"op": "conv", "n": 0}')
    assert cli.main(["run", str(spec)]) == 2
    assert "n=0" in capsys.readouterr().err


def test_run_with_missing_file_exits_2(tmp_path, capsys) -> None:
    assert cli.main(["run", str(tmp_path / "absent.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_run_without_gpu_exits_3_and_points_to_recordings(tmp_path, capsys) -> None:
    import cudnn_lab as cl

    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    spec = tmp_path / "s.json"
    spec.write_text(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8).to_json())
    assert cli.main(["run", str(spec)]) == 3
    assert "recorded" in capsys.readouterr().err


def test_report_of_a_recording_writes_offline_html(tmp_path) -> None:
    name = "h100_conv_nhwc_fp16_bias_relu"  # a frontend graph (a classic call has no script to show)
    out = tmp_path / "r.html"
    assert cli.main(["report", name, "-o", str(out)]) == 0
    text = out.read_text()
    assert "<svg" in text or "digraph" in text
    assert "Plotly" in text and "<table" in text and "def build_graph" in text
    assert "<script src=\"http" not in text and "<link" not in text  # nothing fetched when opened


def test_sweep_file_with_unknown_key_exits_2(tmp_path, capsys) -> None:
    f = tmp_path / "s.json"
    f.write_text('{"spec": {"op": "conv"}, "bogus": 1}')
    assert cli.main(["sweep", str(f)]) == 2
    assert "bogus" in capsys.readouterr().err


@pytest.mark.parametrize("euid", [0, 1000])
def test_lab_allows_root_only_as_root(monkeypatch: pytest.MonkeyPatch, euid: int) -> None:
    """Jupyter refuses to start as root (Docker, rented GPU machines) without --allow-root: given then, only then."""
    monkeypatch.setattr(cli.os, "geteuid", lambda: euid, raising=False)
    for quickstart in (Path("pyproject.toml"), Path("no_such_notebook.ipynb")):
        monkeypatch.setattr(cli, "QUICKSTART", quickstart)
        _, argv = cli._lab_command(["--no-browser"])
        assert argv[:4] == [sys.executable, "-m", "jupyter", "lab"] and argv[-1] == "--no-browser"
        assert ("--allow-root" in argv) == (euid == 0)
    _, argv = cli._lab_command(["--allow-root"])  # given already: once
    assert argv.count("--allow-root") == 1


def test_lab_s_printed_url_opens_the_quickstart() -> None:
    """The URL Jupyter prints (and a remote user copies) opens the quickstart notebook, not the Launcher."""
    repo, argv = cli._lab_command([])
    assert (repo / cli.QUICKSTART).is_file() and argv[-1] == str(cli.QUICKSTART)
    assert f"--ServerApp.default_url=/lab/tree/{cli.QUICKSTART.name}" in argv
    _, argv = cli._lab_command(["--ServerApp.default_url=/lab"])  # the user's own: kept, not doubled
    assert sum(a.startswith("--ServerApp.default_url") for a in argv) == 1


def test_lab_as_root_starts_jupyter_with_allow_root(execv: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli.os, "geteuid", lambda: 0, raising=False)
    monkeypatch.setattr(cli, "QUICKSTART", Path("pyproject.toml"))
    with pytest.raises(Execd):
        cli.main(["lab", "--no-browser"])
    assert execv["argv"] == [sys.executable, "-m", "jupyter", "lab", "--allow-root",
                             "--ServerApp.default_url=/lab/tree/pyproject.toml", HOOK, "pyproject.toml", "--no-browser"]


def _other_value(name: str) -> tuple[list[str], object]:
    """Arguments after an option's flag that set it to a valid value other than its default, and that value."""
    info = RunOptions.__dataclass_fields__[name]
    default, kind = info.default, info.type.split("|")[0].strip()
    if kind == "bool":
        return [], not default if default is not None else True
    if kind == "tuple[str, ...]":
        other = tuple(m for m in info.metadata["choices"] if m not in default)[:1]
        return [",".join(other)], other
    if kind == "str":
        other = next(c for c in info.metadata["choices"] if c != default)
        return [other], other
    if kind == "int":
        other = 2 if not isinstance(default, int) else default + 1  # parallel_builds: 'auto' by default
        return [str(other)], other
    other = default / 2 if default < 1 else default - 1  # a float inside its range (screen_ratio: 1 or more)
    return [repr(other)], other


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("name", RunOptions.names())
def test_every_run_option_has_a_cli_flag_that_sets_it(name: str, command: str) -> None:
    flag, _ = cli.run_option_flag(name)
    args, value = _other_value(name)
    parsed = cli._parser().parse_args([command, "x.json", flag, *args])
    given = cli._run_overrides(parsed)
    assert given == {name: value}
    assert getattr(RunOptions.coerce(None, **given), name) == value != getattr(RunOptions(), name)


def test_run_option_flags_are_distinct_and_named_after_their_option() -> None:
    flags = [cli.run_option_flag(name)[0] for name in RunOptions.names()]
    assert len(set(flags)) == len(flags)
    for name, flag in zip(RunOptions.names(), flags):
        assert flag.removeprefix("--").removeprefix("no-") == name.replace("_", "-")


def test_a_notebook_saved_with_outputs_leaves_git_status_clean(tmp_path: Path) -> None:
    """JupyterLab's autosave (outputs, kernel metadata) leaves `git status` clean with the set-up's filter and the
    Lab's post-save hook; a real edit still shows, and is not staged."""
    nbformat = pytest.importorskip("nbformat")
    strip = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'scripts' / 'strip_notebooks.py'} --stdin"
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "config", "filter.strip-notebooks.clean", strip], check=True)
    (tmp_path / ".gitattributes").write_text("*.ipynb filter=strip-notebooks\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    path = tmp_path / "course.ipynb"
    nbformat.write(nb, path)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "stored"], check=True)

    def status() -> str:
        return subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True).stdout

    nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    nb.cells[0].execution_count = 1
    nb.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    nbformat.write(nb, path)
    assert status() == " M course.ipynb\n"  # git's size check, before the hook
    cli.refresh_saved_notebook(os_path=str(path), model={}, contents_manager=None)
    assert status() == ""
    nb.cells[0].source = "2 + 2"
    nbformat.write(nb, path)
    cli.refresh_saved_notebook(os_path=str(path), model={}, contents_manager=None)
    assert status() == " M course.ipynb\n"  # a real edit shows, unstaged
