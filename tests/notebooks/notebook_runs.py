"""What the notebook tests share: finding the course, shrinking parameters, executing a notebook, reading outputs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).parents[2]
NOTEBOOKS = ROOT / "notebooks"
COURSE = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
#: The lessons (with exercises): every course notebook but the quickstart and the Lab, the capstone.
LESSONS = [p for p in COURSE if p.stem not in ("00_quickstart", "09_lab")]

SMALL = re.compile(r"^(?P<lhs>[^#=\n]+=)\s*(?P<value>[^#\n]*?)\s*#\s*small:\s*(?P<small>.+?)\s*$", re.MULTILINE)
EXERCISE = re.compile(r"^\*\*Exercise (\d+)\.\*\*")
#: How ``cudnn_lab.course.check`` starts its verdicts.
RIGHT, WRONG, OPEN = "✔ right", "✘ not quite", "… not answered yet"


def shrink(source: str) -> str:
    """``X = big  # small: tiny`` -> ``X = tiny`` on every line that declares a small alternative."""
    return SMALL.sub(lambda m: f"{m['lhs'].rstrip()} {m['small']}", source)


def params_cell(nb: Any) -> Any:
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)


def tags(cell: Any) -> list[str]:
    return list(cell.metadata.get("tags", []))


def execute(path: Path, *, small: bool = True, timeout: int = 300, append: str = "") -> Any:
    """The notebook executed in a fresh kernel (its parameters shrunk when ``small``; ``append``: a code cell run
    last), outputs kept, errors recorded in the outputs rather than raised (so a test can say which cell failed)."""
    nb = nbformat.read(path, as_version=4)
    if small and (cell := params_cell(nb)) is not None:
        cell.source = shrink(cell.source)
    if append:
        nb.cells.append(nbformat.v4.new_code_cell(append))
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def errors(nb: Any) -> list[str]:
    return [f"cell {i}: {o.get('ename')}: {o.get('evalue')}" for i, c in enumerate(nb.cells)
            if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]


def text_of(cell: Any) -> str:
    """Everything a code cell printed or displayed as text or Markdown."""
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        else:
            data = o.get("data", {})
            parts.append(data.get("text/markdown", "") or data.get("text/plain", ""))
    return "".join(parts)


def shown(nb: Any) -> str:
    return "".join(text_of(c) for c in nb.cells if c.cell_type == "code")


def exercises(nb: Any) -> list[tuple[int, list[Any]]]:
    """(number, cells) of each exercise: its question and every cell up to the next question."""
    out: list[tuple[int, list[Any]]] = []
    for cell in nb.cells:
        m = EXERCISE.match(cell.source) if cell.cell_type == "markdown" else None
        if m:
            out.append((int(m[1]), [cell]))
        elif out:
            out[-1][1].append(cell)
    return out


# ------------------------------------------------------------------------------------------------ answers and leaks

#: Matches reviewed by hand and found to be no answer: (lesson, exercise, what the detector said) -> why.
REVIEWED: dict[tuple[str, int, str], str] = {
    ("05_fp8", 1, "speed-up: printed as 1.72"):
        "a coincidence: 1.72x there is MXFP8's output error over per-tensor FP8 under the OCP floor rule (an "
        "emulation on this CPU), not the recorded FP8 GEMM's speed-up",
    ("07_fusion", 2, "printed as 1.01"):
        "a coincidence: 1.01 there is torch.compile's time over cuDNN's for matmul+bias+gelu, not the share of "
        "eager's gap the extra bytes explain",
}

#: Appended to an executed lesson: prints every ``expected_N`` its checks computed, typed (numbers as floats, text,
#: booleans, lists, sets as {"set": [...]}, dicts as {"dict": {...}}), for the leak tests.
PROBE = r'''
import json as _json, re as _re
def _plain(v):
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return bool(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return {"set": sorted(str(x) for x in v)}
    if isinstance(v, dict):
        return {"dict": {str(k): _plain(x) for k, x in v.items()}}
    try:
        return float(v)
    except Exception:
        return None
print("__EXPECTED__" + _json.dumps({k: _plain(v) for k, v in dict(globals()).items()
                                    if _re.fullmatch(r"expected_\d+", k)}, default=str))
'''


def expected_values(nb: Any) -> dict[int, Any]:
    """``{n: expected_n}`` as :data:`PROBE` (the last cell) printed them."""
    import json

    text = text_of(nb.cells[-1])
    marker = text.find("__EXPECTED__")
    assert marker >= 0, f"the probe cell printed {text[:300]!r}"
    return {int(k.split("_")[1]): v for k, v in json.loads(text[marker + len("__EXPECTED__"):]).items()}


def number_forms(value: Any) -> list[str]:
    """How a notebook would print ``value``: the forms specific enough that finding one is no coincidence (numbers
    with at least three significant digits, or two after a decimal point)."""
    if isinstance(value, list):
        return [f for v in value for f in number_forms(v)]
    if not isinstance(value, float) or value != value:
        return []
    out = set()
    for text in (f"{value:.3g}", f"{value:.2f}", f"{value:.1f}", f"{value:.0f}", f"{value:.3f}", f"{value:.2%}",
                 f"{value:.1%}"):
        pct = text.endswith("%")
        number = float(text.rstrip("%")) / (100 if pct else 1)
        digits = text.rstrip("%").replace("-", "").replace(".", "").lstrip("0")
        if value.is_integer() and ("." in text or pct):
            continue
        close = number != 0 and abs(number - value) <= 0.005 * abs(value)
        if close and ((value.is_integer() and len(digits) >= 3) or ("." in text and len(digits) >= 2)):
            out.add(text)
    return sorted(out)


_TAG = re.compile(r"<[^>]+>")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")


def _figure_values(fig: Any) -> tuple[list[float], list[str]]:
    """The numbers and strings a plotly figure's traces carry (what its hover and axes show)."""
    numbers: list[float] = []
    strings: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            numbers.append(float(value))
        elif isinstance(value, str):
            strings.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    for trace in (fig or {}).get("data", []):
        walk({k: v for k, v in trace.items() if k in ("x", "y", "z", "text", "customdata", "hovertext", "values")})
    return numbers, strings


def shown_blocks(cell: Any) -> list[dict[str, Any]]:
    """What one cell shows a student, block by block (a Markdown cell; each output of a code cell): its text (tags
    stripped from HTML and SVG drawings) and, for a figure, the numbers its traces carry."""
    if cell.cell_type == "markdown":
        return [{"text": cell.source, "numbers": []}]
    blocks = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            blocks.append({"text": o.get("text", ""), "numbers": []})
            continue
        data = o.get("data", {})
        text = " ".join(_TAG.sub(" ", data[k]) if k in ("text/html", "image/svg+xml") else data[k]
                        for k in ("text/plain", "text/markdown", "text/html", "image/svg+xml")
                        if isinstance(data.get(k), str))
        numbers, strings = _figure_values(data.get("application/vnd.plotly.v1+json"))
        blocks.append({"text": text + " " + " ".join(strings), "table": text, "numbers": numbers})
    return blocks


def _numbers_in(text: str) -> list[tuple[float, float, int, int]]:
    """(value, relative rounding of its printed digits, line, column where it ends) of every number in ``text``;
    numbers with fewer than four significant digits are left out (too common to mean anything)."""
    out = []
    for line_no, line in enumerate(text.splitlines()):
        for m in NUMBER.finditer(line):
            raw = m.group(0).replace(",", "")
            try:
                value = float(raw)
            except ValueError:
                continue
            mantissa = raw.lstrip("-").split("e")[0]
            digits = mantissa.replace(".", "").lstrip("0")
            if len(digits) < 4 or value == 0:
                continue
            last = 10.0 ** (-(len(mantissa.split(".")[1]) if "." in mantissa else 0))  # a unit of the last digit
            out.append((value, 0.5 * last / abs(float(mantissa) or 1.0), line_no, m.end()))
    return out


def _ratio_of_neighbours(expected: float, text: str) -> str | None:
    """Two numbers printed in one row or one column of ``text`` whose ratio is ``expected`` to their printed
    precision, or None."""
    numbers = _numbers_in(text)
    for i, (a, ra, la, ca) in enumerate(numbers):
        for b, rb, lb, cb in numbers[i + 1:] + numbers[:i]:
            if la != lb and ca != cb:
                continue  # neither the same row nor the same (right-aligned) column
            for x, y in ((a, b), (b, a)):
                if abs(x / y - expected) <= (ra + rb) * abs(expected):
                    return f"the ratio {x:g} / {y:g} of two numbers in one {'row' if la == lb else 'column'}"
    return None


def leaks(expected: Any, blocks: list[dict[str, Any]], lesson: list[dict[str, Any]] | None = None) -> list[str]:
    """Where ``expected`` (an answer, typed as :data:`PROBE` prints it) shows in what a student saw before the
    exercise: ``blocks`` (earlier notebooks) and ``lesson`` (this lesson's cells above it, the question and the
    answer cell). Looked for: a list or set printed whole and a text answer as a word, anywhere; a number's printed
    forms (three significant digits or more in earlier notebooks, any specific form in the lesson) and its exact
    value in a figure's data; and in the lesson's text, the ratio of two numbers printed with four significant
    digits or more in one row or one column (not for answers within 5% of 1). Empty when it shows nowhere."""
    lesson = lesson or []
    every = blocks + lesson
    found: list[str] = []
    texts = [b["text"] for b in every]
    if isinstance(expected, dict) and "dict" in expected:
        for key, value in expected["dict"].items():
            found += [f"{key}: {f}" for f in leaks(value, blocks, lesson)]
        return found
    if isinstance(expected, dict) and "set" in expected:
        items = [re.escape(str(i)) for i in expected["set"]]
        if len(items) > 1:
            for text in texts:
                for line in text.splitlines():
                    if all(re.search(rf"(?<![\w.]){i}(?![\w.])", line) for i in items):
                        found.append(f"the set's {len(items)} items on one line: {line.strip()[:120]!r}")
        return found
    if isinstance(expected, list):
        numeric = [v for v in expected if isinstance(v, float)]
        if len(numeric) == len(expected) and len(expected) > 1 and all(v.is_integer() for v in numeric):
            whole = ", ".join(str(int(v)) for v in numeric)
            found += [f"the whole list ({whole})" for t in texts if re.search(rf"[\[(]{re.escape(whole)}[\])]", t)]
        for part in expected:
            if not (isinstance(part, float) and part.is_integer()):
                found += leaks(part, blocks, lesson)
        return found
    if isinstance(expected, str):
        if len(expected) >= 6:
            found += [f"the text {expected!r}" for t in texts
                      if re.search(rf"(?<![\w=]){re.escape(expected)}(?![\w=])", t, re.IGNORECASE)]
        return found
    if not isinstance(expected, float) or expected != expected:
        return found  # booleans: see test_course_leaks.BINARY
    forms = number_forms(expected)
    for where, form_list in ((blocks, [f for f in forms if _significant(f) >= 3]), (lesson, forms)):
        for block in where:
            for form in form_list:
                if re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", block["text"]):
                    found.append(f"printed as {form}")
    if not forms:
        return sorted(set(found))
    for block in every:
        if any(abs(v - expected) <= 1e-9 * abs(expected) for v in block["numbers"]):
            found.append("its exact value in a figure's data")
    if not expected.is_integer() and abs(expected - 1) >= 0.05:
        for block in lesson:
            if ratio := _ratio_of_neighbours(expected, block.get("table", block["text"])):
                found.append(ratio)
    return sorted(set(found))


def _significant(form: str) -> int:
    return len(form.rstrip("%").replace("-", "").replace(".", "").lstrip("0"))
