"""The nesting check every JSON read goes through (files.parse_json) skips brackets inside strings, escapes
included, and counts the rest as a character loop does; its string pattern is the unrolled one (issue 39: the
alternation per character took 0.09 s of each 2.7 MB what-if answers file)."""

from __future__ import annotations

import random

import pytest

from cudnn_lab import files
from cudnn_lab.errors import DataError


def _depth(text: str) -> int | None:
    """The deepest bracket nesting outside JSON strings, one character at a time (the reference); None where a
    string is left open (no JSON: the parser refuses it, and the scan counts its brackets)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return None if in_string else deepest


def test_brackets_in_strings_and_escaped_quotes_are_skipped() -> None:
    inside = '{"a": "\\"[[[[[[[[[[", "b": "\\\\", "c": [[["]]]]]]"]]]}'
    assert _depth(inside) == 4
    assert not files._nests_deeper(inside, 4) and files._nests_deeper(inside, 3)
    assert files.parse_json(inside, "t.json", "test JSON")["c"] == [[["]]]]]]"]]]


def test_the_scan_agrees_with_a_character_loop_on_random_texts() -> None:
    rng = random.Random(39)
    for _ in range(3000):
        text = "".join(rng.choice('[]{}"\\ab\n') for _ in range(rng.randint(0, 60)))
        deepest = _depth(text)
        if deepest is None:
            continue
        for limit in (0, 1, 2, 3):
            assert files._nests_deeper(text, limit) == (deepest > limit), (text, limit)


def test_a_deep_array_inside_valid_json_is_still_refused() -> None:
    text = '{"fine": "' + "[" * 100 + '", "deep": ' + "[" * 64 + "]" * 64 + "}"  # 65 levels with the object's
    with pytest.raises(DataError, match="nested more than 64 levels"):
        files.parse_json(text, "deep.json", "test JSON")
    assert files.parse_json(text.replace("[" * 64 + "]" * 64, "[" * 63 + "]" * 63), "ok.json", "test JSON")
