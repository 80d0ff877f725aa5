"""README and FINDINGS say what the kit has: every ``cl.<name>`` and ``cudnn_lab`` module they show exists (and is
callable where called), and the figures they quote from the shipped recordings are those recordings' figures."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import cudnn_lab as cl

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FINDINGS = (ROOT / "docs" / "FINDINGS.md").read_text(encoding="utf-8")
DATA = Path(cl.__file__).resolve().parent / "data"

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    """The fenced ```python blocks of a Markdown text."""
    return [body for lang, body in FENCE.findall(text) if lang == "python"]


def inline_code(text: str) -> list[str]:
    """The `inline code` spans of a Markdown text outside its fenced blocks."""
    return re.findall(r"`([^`\n]+)`", FENCE.sub("", text))


def uses(code: str, alias: str) -> Iterator[tuple[str, bool]]:
    """(name, called) for each ``alias.name`` in code, ``called`` when a ``(`` follows it."""
    for m in re.finditer(rf"(?<![\w.]){re.escape(alias)}\.([A-Za-z_]\w*)(\s*\()?", code):
        yield m.group(1), bool(m.group(2))


def readme_code() -> list[str]:
    """Every piece of Python README shows: its python blocks and its inline spans."""
    return python_blocks(README) + inline_code(README)


def cl_uses() -> list[tuple[str, bool]]:
    return sorted({use for code in readme_code() for use in uses(code, "cl")})


def module_imports() -> list[tuple[str, str | None]]:
    """(module, name) for each ``from cudnn_lab[.x] import name`` / ``import cudnn_lab.x`` README's code shows."""
    found: set[tuple[str, str | None]] = set()
    for code in readme_code():
        for mod, names in re.findall(r"from\s+(cudnn_lab(?:\.\w+)*)\s+import\s+([\w ,]+)", code):
            found |= {(mod, n.strip()) for n in names.split(",") if n.strip()}
        found |= {(mod, None) for mod in re.findall(r"(?<![\w/])(cudnn_lab(?:\.\w+)+)", code)}
    return sorted(found, key=str)


def resolve(dotted: str) -> object:
    """The object a dotted ``cudnn_lab.x.y`` name means: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_readme_shows_code() -> None:
    # guards the parsers below: if they found nothing, every check would pass vacuously
    assert len(cl_uses()) > 20 and ("cudnn_lab", "whatif") in module_imports()


@pytest.mark.parametrize(("name", "called"), cl_uses())
def test_every_cl_name_in_readme_exists(name: str, called: bool) -> None:
    assert hasattr(cl, name), f"README shows cl.{name}, which the package does not have"
    if called:
        assert callable(getattr(cl, name)), f"README calls cl.{name}(...), which is not callable"


@pytest.mark.parametrize(("module", "name"), module_imports())
def test_every_module_in_readme_imports(module: str, name: str | None) -> None:
    mod = resolve(module)
    if name is not None:
        if not hasattr(mod, name):  # `from package import submodule`
            importlib.import_module(f"{module}.{name}")
        obj = getattr(mod, name)
        # the names README then uses on it (whatif.plans_for, plots.roofline, ...) exist, callable where called
        for code in python_blocks(README):
            if re.search(rf"from\s+{re.escape(module)}\s+import\s+[\w ,]*\b{name}\b", code):
                for attr, called in uses(code, name):
                    assert hasattr(obj, attr), f"README shows {name}.{attr}, which {module}.{name} lacks"
                    assert not called or callable(getattr(obj, attr)), f"README calls {name}.{attr}(...)"


def recorded_names(gpu: str) -> set[str]:
    return {p.stem.removeprefix(f"{gpu}_") for p in (DATA / "recorded").glob(f"{gpu}_*.json")}


def test_readme_counts_the_h200_recordings() -> None:
    said = re.search(r"the same (\d+) problems on an NVIDIA H200", README)
    assert said, "README no longer says how many problems the H200 recordings hold"
    h100, h200 = recorded_names("h100"), recorded_names("h200")
    assert h100 <= h200 and int(said.group(1)) == len(h100)  # "the same" problems as the H100's
    alone = re.search(r"and on the H200 alone (\d+) shapes", README)
    assert alone and int(alone.group(1)) == len(h200 - h100), sorted(h200 - h100)


def moe_ratios() -> dict[str, list[float]]:
    """The best plan's time over each PyTorch baseline, for every shipped MoE recording."""
    ratios: dict[str, list[float]] = {"grouped_mm": [], "loop": [], "dense": []}
    names = sorted(p.stem for p in (DATA / "recorded").glob("*moe*.json"))
    assert names, "no MoE recording ships"
    for name in names:
        r = cl.load_results(name)
        best = r.best["median_ms"]
        ratios["grouped_mm"].append(best / r.torch["grouped_mm_ms"])
        ratios["loop"].append(best / r.torch_ms)  # the MoE family's PyTorch op: one matmul per expert
        ratios["dense"].append(best / r.torch["dense_gemm_ms"])
    return ratios


def test_readme_moe_comparison_is_what_the_recordings_show() -> None:
    said = re.search(r"took ([\d.]+)-([\d.]+)x the time of `torch._grouped_mm`, ([\d.]+)-([\d.]+)x that of a loop"
                     r"[^,]*and ([\d.]+)-([\d.]+)x that of one dense GEMM", " ".join(README.split()))
    assert said, "README's MoE comparison is not in the form this test reads"
    quoted = [float(x) for x in said.groups()]
    ratios = moe_ratios()
    for (lo, hi), key in zip((quoted[0:2], quoted[2:4], quoted[4:6]), ("grouped_mm", "loop", "dense"), strict=True):
        assert (round(min(ratios[key]), 1), round(max(ratios[key]), 1)) == (lo, hi), key


def whatif_answers() -> list[dict]:
    answers: list[dict] = []
    for path in sorted((DATA / "whatif").glob("*.json")):
        answers += json.loads(path.read_text(encoding="utf-8"))["answers"]
    return answers


def test_findings_counts_the_whatif_problems() -> None:
    said = re.search(r"\((\d+) recorded problems that ask the heuristics", FINDINGS)
    assert said, "FINDINGS no longer says how many problems the what-if recordings ask about"
    data = json.loads((DATA / "whatif" / "h200_2026-11-26.json").read_text(encoding="utf-8"))
    problems = {json.dumps(a["spec"], sort_keys=True) for a in data["answers"]}
    assert int(said.group(1)) == len(problems)


def test_findings_says_which_convs_crashed_cudnn_for_sm100() -> None:
    convs = [a for a in whatif_answers() if a["target"] == "sm100" and a["spec"]["op"].startswith("conv")]
    crashed = {(a["spec"]["op"], a["spec"]["dtype"]) for a in convs if a["refused"] == "crashed"}
    answered = {(a["spec"]["op"], a["spec"]["dtype"]) for a in convs if a["proposals"]}
    assert ("conv", "fp8_e4m3") in answered and crashed and all(d == "fp16" for _, d in crashed)
    text = " ".join(FINDINGS.split())
    assert "Asking about any conv" not in text  # the FP8 conv was answered
    assert re.search(r"FP8 conv[^.]*was answered", text)
