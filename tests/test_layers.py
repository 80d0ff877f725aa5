"""Import direction: no module of the kit imports a layer above its own (the layers of ../shared/DESIGN.md and
README's Layout), counting imports made inside functions too; no exception is listed."""

from __future__ import annotations

import ast
from pathlib import Path


PACKAGE = Path(__file__).resolve().parents[1] / "cudnn_lab"

#: Each part of the kit (a top-level module or sub-package of cudnn_lab) and its layer, bottom (0) to top. Parts on
#: one line of DESIGN.md's diagram share a layer where neither imports the other; modules DESIGN.md does not draw
#: sit where their own imports put them.
LAYERS: dict[str, int] = {
    "errors": 0, "files": 0, "provenance": 0, "kernel_names": 0, "capabilities": 0, "_version": 0,
    "options": 1, "specs": 1, "knobs": 1,
    "registry": 2,
    "graph": 3, "reference": 3, "numerics": 3,
    "cache_dir": 4,
    "gpu": 5,
    "results": 6,
    "runs": 7,
    "course": 8,
    "sweeps": 9, "whatif": 9,
    "plots": 10,
    "report": 11,
    "ui": 12, "cli": 12, "report_inputs": 12,
    "__init__": 13,
}

def _module(path: Path) -> tuple[str, str]:
    """(dotted module name, its package) of a file under cudnn_lab."""
    parts = ["cudnn_lab", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), ".".join(parts[:-1])
    return ".".join(parts), ".".join(parts[:-1])


def _is_module(name: str) -> bool:
    """Whether a dotted name under cudnn_lab is a module or package (not a name defined in one)."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _part(module: str) -> str:
    """The layer part a dotted name belongs to: cudnn_lab.gpu.session -> 'gpu'; cudnn_lab -> '__init__'."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every import of the kit's own code in a file, at the top or inside a function."""
    name, package = _module(path)
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" if node.module is None or _is_module(f"{target}.{a.name}") else target
                     for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out += [(node.lineno, t) for t in names if t == "cudnn_lab" or t.startswith("cudnn_lab.")]
    return out


def _arrows() -> list[tuple[str, int, str, str]]:
    """(file, line, importing part, imported name) for every import that crosses from one part to another."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _part(_module(path)[0])
        for line, target in _imports(path):
            if _part(target) != importer:
                out.append((str(path.relative_to(PACKAGE.parent)), line, importer, target))
    return out


def test_every_part_of_the_kit_has_a_layer() -> None:
    parts = {_part(_module(p)[0]) for p in PACKAGE.rglob("*.py")}
    assert parts <= set(LAYERS), f"give these a layer in LAYERS: {sorted(parts - set(LAYERS))}"


def test_no_module_imports_a_layer_above_it() -> None:
    wrong = [f"{file}:{line}: {importer} (layer {LAYERS.get(importer)}) imports {target} (layer "
             f"{LAYERS.get(_part(target))})"
             for file, line, importer, target in _arrows()
             if LAYERS.get(_part(target), -1) > LAYERS.get(importer, -1)]
    assert not wrong, "imports running up a layer:\n" + "\n".join(wrong)


def test_the_executors_live_with_the_sweeps_not_in_the_gpu_layer() -> None:
    assert not (PACKAGE / "gpu" / "workers.py").exists()
    assert not [a for a in _arrows() if a[2] == "gpu" and _part(a[3]) in ("runs", "sweeps")]


#: In-function imports of the kit's own modules left, each kept for a reason its line says (`# heavy: imports
#: graphviz`: a module that pulls graphviz, torch or cudnn in at its top; `# lazy`: keeps `import cudnn_lab` light;
#: inside a try that handles the failure; or a file whose imports another engineer owns). The number may only shrink:
#: move one to the top of its file, then lower this.
IN_FUNCTION_IMPORTS_CEILING = 14


def _in_function_imports() -> list[str]:
    """'file:line' of every import of the kit's own code made inside a function body."""
    out = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        inside = {n.lineno for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
        out |= {f"{path.relative_to(PACKAGE.parent)}:{line}" for line, _ in _imports(path) if line in inside}
    return sorted(out)


def test_in_function_imports_of_the_kit_only_shrink() -> None:
    found = _in_function_imports()
    assert len(found) <= IN_FUNCTION_IMPORTS_CEILING, (
        f"{len(found)} in-function imports of the kit's own modules, more than the {IN_FUNCTION_IMPORTS_CEILING} "
        "left: import it at the top of the file (in a function only for a module that imports torch, cudnn, "
        "plotly, pandas, ipywidgets, graphviz or dask at its top, with a comment saying so):\n" + "\n".join(found))
