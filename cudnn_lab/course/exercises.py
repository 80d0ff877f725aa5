"""The course's exercise referee: compare a student's answer with the data and say right or wrong, and why.

Used through :mod:`cudnn_lab.course` (``check``, ``check_parts``, ``verdict``, ``say``); pure, no GPU.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, TypeGuard

from ..errors import OptionError

__all__ = ["RIGHT", "WRONG", "OPEN", "UNMEASURED", "Verdict", "verdict", "check", "check_parts", "say"]

RIGHT, WRONG, OPEN = "✔ right", "✘ not quite", "… not answered yet"
#: How a part of an answer that this machine cannot measure (no GPU, no recording) is reported: not judged.
UNMEASURED = "○ not measurable here"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of one check: ``status`` is 'right', 'wrong' or 'open' (no answer given); ``text`` says why."""

    status: str
    text: str

    def __bool__(self) -> bool:
        return self.status == "right"

    def __str__(self) -> str:
        return self.text


def _is_number(value: Any) -> TypeGuard[float]:
    """Whether ``value`` is a finite number (bools and text are not), so the checks can take it as a float."""
    if isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value)) and not isinstance(value, str)
    except (TypeError, ValueError, OverflowError):
        return False


def _norm_text(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


_YES, _NO = {"yes", "y", "true", "1"}, {"no", "n", "false", "0"}


def _same(answer: Any, expected: Any, rel: float | None, tol: float | None) -> bool:
    """Whether an answer matches: numbers within the tolerance, text case- and space-insensitive, sets in any order,
    sequences and dicts element by element."""
    if _is_bool(expected):
        if isinstance(answer, str):
            word = _norm_text(answer)
            return (word in _YES) if bool(expected) else (word in _NO)
        return _is_bool(answer) and bool(answer) == bool(expected)
    if _is_number(expected):
        if not _is_number(answer):
            return False
        a, e = float(answer), float(expected)
        if tol is not None:
            return abs(a - e) <= tol
        if rel is not None:
            return abs(a - e) <= rel * abs(e)
        return a == e if float(e).is_integer() else math.isclose(a, e, rel_tol=1e-6)
    if isinstance(expected, str):
        return isinstance(answer, str) and _norm_text(answer) == _norm_text(expected)
    if isinstance(expected, (set, frozenset)):
        if not isinstance(answer, (set, frozenset, list, tuple)):
            return False
        left = {_norm_text(a) if isinstance(a, str) else a for a in answer}
        right = {_norm_text(e) if isinstance(e, str) else e for e in expected}
        return left == right
    if isinstance(expected, dict):
        return isinstance(answer, dict) and set(answer) == set(expected) and all(
            _same(answer[k], expected[k], rel, tol) for k in expected)
    if isinstance(expected, (list, tuple)):
        return isinstance(answer, (list, tuple)) and len(answer) == len(expected) and all(
            _same(a, e, rel, tol) for a, e in zip(answer, expected))
    return bool(answer == expected)


def _shown(value: Any) -> str:
    if _is_number(value) and not float(value).is_integer():
        return f"{float(value):.3g}"
    if _is_number(value):
        return str(int(float(value)))
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(_shown, value))) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(map(_shown, value))
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value) if isinstance(value, str) else str(value)


#: Wrong answers given so far, by answer name: the first miss gives a direction, the second reveals the value.
_MISSES: dict[str, int] = {}


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def _direction(answer: Any, expected: Any, rel: float | None = None, tol: float | None = None) -> str:
    """Which way to look, without the value: higher or lower for a number, how many parts differ for a tuple, how
    many items are missing or extra for a set; for a yes/no answer, where the deciding evidence is (any verdict on a
    binary answer names its value, so the first miss points at the evidence instead of saying 'the other one')."""
    if _is_bool(expected):
        return ("a yes/no answer is decided by one comparison: find the two numbers it compares (the hint names "
                "them), compare them, and answer from that rather than flipping your answer")
    if _is_number(answer) and _is_number(expected):
        return "the data says more than that" if float(answer) < float(expected) else "the data says less than that"
    if isinstance(expected, (list, tuple)) and isinstance(answer, (list, tuple)) and len(answer) == len(expected):
        wrong = sum(not _same(a, e, rel, tol) for a, e in zip(answer, expected))
        return f"{wrong} of its {len(expected)} values differ from the data"
    if isinstance(expected, (set, frozenset)) and isinstance(answer, (set, frozenset, list, tuple)):
        mine = {_norm_text(a) if isinstance(a, str) else a for a in answer}
        want = {_norm_text(e) if isinstance(e, str) else e for e in expected}
        return (f"{len(mine - want)} of your {len(mine)} items are not in the data's set, and it has "
                f"{len(want - mine)} you left out")
    return "the data says otherwise"


def _checked_margin(rel: float | None, tol: float | None) -> None:
    """A tolerance must leave room for a wrong answer: finite, not negative, a relative one below 1 (100%)."""
    if tol is not None and not (_is_number(tol) and float(tol) >= 0):
        raise OptionError("tol", tol, "a finite number >= 0 (an absolute margin around the expected value)",
                          where="check()")
    if rel is not None and not (_is_number(rel) and 0 <= float(rel) < 1):
        raise OptionError("rel", rel, "a share in [0, 1): 1 would accept 0 for any expected number", where="check()")
    if rel is not None and tol is not None:
        raise OptionError("rel", rel, "None when tol is given: a check takes rel= or tol=, not both",
                          where="check()")


def verdict(answer: Any, expected: Any, why: str = "", *, rel: float | None = None, tol: float | None = None,
            name: str = "answer") -> Verdict:
    """Compare ``answer`` with ``expected`` (computed from the data) and say why. ``None`` or ``...`` as the
    answer means "not answered yet" and shows nothing of the expected value; a first wrong answer gets a direction
    (higher, lower; for a yes/no answer, the evidence to compare) and the hint, the second the value and the
    explanation (the count is per ``name``).

    Numbers match within ``tol`` (absolute) or ``rel`` (relative, below 1) when given, else exactly (floats to
    1e-6); text ignores case and spacing; a set matches in any order; a bool also accepts "yes"/"no".
    """
    _checked_margin(rel, tol)
    if answer is None or answer is Ellipsis:
        return Verdict("open", f"{OPEN}: put your prediction in `{name}` and run this cell again "
                               "(a hint and the solution are below, folded).")
    margin = f" (within ±{_shown(tol)})" if tol is not None else f" (within ±{rel:.0%})" if rel is not None else ""
    reason = f" {why.strip()}" if why.strip() else ""
    if _same(answer, expected, rel, tol):
        _MISSES.pop(name, None)
        return Verdict("right", f"{RIGHT}: {name} = {_shown(answer)}{margin}.{reason}")
    _MISSES[name] = _MISSES.get(name, 0) + 1
    if _MISSES[name] == 1:
        said = "" if _is_bool(expected) else f"you said {_shown(answer)}; "
        return Verdict("wrong", f"{WRONG}: {said}{_direction(answer, expected, rel, tol)}{margin}. Open the hint "
                                "below, change your answer and run this cell again (a second miss shows the value "
                                "and why).")
    return Verdict("wrong", f"{WRONG}: you said {_shown(answer)}; the data says {_shown(expected)}{margin}.{reason}")


def check(answer: Any, expected: Any, why: str = "", *, rel: float | None = None, tol: float | None = None,
          name: str = "answer") -> None:
    """Print :func:`verdict`'s sentence: right or wrong, and why (returns None, so a cell shows it once)."""
    print(verdict(answer, expected, why, rel=rel, tol=tol, name=name).text)


def check_parts(answer: Any, parts: list[dict[str, Any]], *, name: str = "answer") -> None:
    """Check a prediction of several values (a tuple, one per part) part by part. Each part is a dict with
    ``label`` and ``expected`` and optionally ``why``, ``rel``, ``tol``; an ``expected`` of None means this machine
    cannot measure it: the part is reported as :data:`UNMEASURED` with its ``missing`` reason, never judged."""
    if answer is None or answer is Ellipsis:
        print(verdict(None, None, name=name).text)
        return
    labels = ", ".join(p["label"] for p in parts)
    if not isinstance(answer, (list, tuple)) or len(answer) != len(parts):
        print(f"{WRONG}: {name} should hold {len(parts)} values ({labels}); you gave {_shown(answer)}.")
        return
    for value, part in zip(answer, parts):
        if part["expected"] is None:
            print(f"{UNMEASURED}: {part['label']}: {part.get('missing', 'no measurement on this machine')}")
        else:
            print(verdict(value, part["expected"], part.get("why", ""), rel=part.get("rel"), tol=part.get("tol"),
                          name=f"{name}'s {part['label']}").text)


def say(text: str) -> None:
    """Show a sentence built from the data (an f-string) as Markdown in a notebook, as plain text elsewhere."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - IPython ships with Jupyter
        print(text)
        return
    if get_ipython() is None:
        print(text)
    else:
        display(Markdown(text))
