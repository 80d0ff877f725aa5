"""Measurable hygiene (issue 34): no module of the kit over 600 lines, at most 16 top-level modules, the version in
a module of its own that nothing reaches through the package face, the type checker wired into CI with the
seams' packages strict, and no block of code copied whole within the package."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "cudnn_lab"
MAX_MODULE_LINES = 600
MAX_TOP_LEVEL_MODULES = 16
#: Lines in a row that make a copied block (the `duplicates` tool's unit).
COPIED_BLOCK_LINES = 6
#: The packages whose every module mypy checks strictly: where the kit's seams (spec, options, recorded answers,
#: what-if answers, worker roles) are declared.
STRICT = ("cudnn_lab.specs.*", "cudnn_lab.options", "cudnn_lab.results.*", "cudnn_lab.whatif.*",
          "cudnn_lab.gpu.workers.*")


def _pyproject() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text()))


def test_no_module_is_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split each by concern): {long}"


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that carry code: blank lines, comments, imports and docstring quotes
    left out (every module opens alike)."""
    skip = ("#", "import ", "from ", '"""')
    return [(i, s) for i, line in enumerate(path.read_text().splitlines(), 1)
            if (s := line.strip()) and not s.startswith(skip)]


def copied_blocks(paths: list[Path], root: Path = ROOT, size: int = COPIED_BLOCK_LINES
                  ) -> dict[tuple[str, ...], list[str]]:
    """Every run of ``size`` code lines that stands, to the letter, in two or more places: run -> 'file:line' each."""
    where: dict[tuple[str, ...], list[str]] = {}
    for path in paths:
        lines = _code_lines(path)
        for k in range(len(lines) - size + 1):
            run = tuple(s for _, s in lines[k:k + size])
            where.setdefault(run, []).append(f"{path.relative_to(root)}:{lines[k][0]}")
    return {run: places for run, places in where.items() if len(places) > 1}


def test_no_block_of_code_is_copied_within_the_package() -> None:
    copied = copied_blocks(sorted(PACKAGE.rglob("*.py")))
    assert not copied, ("blocks of code that stand to the letter in two places (fold each into one function in the "
                        "module that owns the rule): " + "; ".join(
                            f"{' ~ '.join(places)}: {run[0][:60]!r}" for run, places in list(copied.items())[:5]))


def test_the_copy_check_finds_a_copied_block(tmp_path: Path) -> None:
    body = "\n".join(f"    total += {i} * value" for i in range(COPIED_BLOCK_LINES))
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text(f"def f(value):\n    total = 0\n{body}\n    return total\n")
    two.write_text(f"import os\n\n\ndef g(value):\n    total = 1\n{body}\n")
    copied = copied_blocks([one, two], root=tmp_path)
    assert len(copied) == 1 and next(iter(copied.values())) == ["one.py:3", "two.py:6"]


def test_the_package_has_at_most_16_top_level_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, (
        f"{len(top)} modules at the top of cudnn_lab/ (at most {MAX_TOP_LEVEL_MODULES}; move one into the "
        f"sub-package it belongs to): {top}")


def test_the_version_lives_alone_and_pyproject_reads_it_there() -> None:
    tree = ast.parse((PACKAGE / "_version.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    version = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                   and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["__version__"]
                   and isinstance(n.value, ast.Constant))
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    config = _pyproject()
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "cudnn_lab._version.__version__"}
    import cudnn_lab

    assert cudnn_lab.__version__ == version


def test_no_module_takes_the_version_from_the_package_face() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.ImportFrom) and any(a.name == "__version__" for a in node.names)
                    and node.module != "_version" and not (node.module or "").endswith("._version")):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not wrong, f"import __version__ from cudnn_lab._version, not the package face: {wrong}"


def test_mypy_runs_in_ci_strict_on_the_seams() -> None:
    config = _pyproject()
    assert any(req.startswith("mypy") for req in config["project"]["optional-dependencies"]["test"])
    mypy = config["tool"]["mypy"]
    assert mypy["files"] == ["cudnn_lab"]
    strict = [o for o in mypy["overrides"] if o.get("disallow_untyped_defs") and o.get("warn_return_any")
              and o.get("disallow_any_generics") and o.get("no_implicit_reexport")]
    assert strict and set(STRICT) <= set(strict[0]["module"])
    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "$(VENV)/bin/mypy" in recipe and recipe.index("ruff check") < recipe.index("mypy") < recipe.index("pytest")
    assert "make test" in (ROOT / ".ci" / "run").read_text()
