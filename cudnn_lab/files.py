"""How the kit reads a file, below every layer that reads one: regular files only, never blocking, bounded in size;
JSON parsed with guards (depth, 64-bit integers, finite numbers); a user's path checked to be a path.

The caches (:mod:`cudnn_lab.cache_dir`, ``gpu/``) and the loading layer (:mod:`cudnn_lab.results.loading`, which
checks each file against its schema on top of these) read through here, so every read follows one discipline. Errors
are the kit's own: :class:`~cudnn_lab.errors.PathError` for the path, :class:`~cudnn_lab.errors.DataError` for the
bytes.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from collections.abc import Callable
from typing import Any

from .errors import CudnnLabError, DataError, OptionError, PathError, shorten

__all__ = ["read_regular", "regular_size", "file_kind", "inflate", "parse_json", "first_in_json", "finite_number",
           "as_path", "MAX_INT_DIGITS", "MAX_JSON_DEPTH"]

#: Integers with more digits than this (beyond 64-bit) are refused: no field of the kit holds one.
MAX_INT_DIGITS = 20


def _open_regular(path: Path, what: str) -> int:
    """A read-only descriptor of ``path`` if it is a regular file: opened without blocking (a FIFO would wait for a
    writer for ever), then checked with fstat so a file swapped after a check is caught too."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise PathError(path, f"the {what} could not be read ({e.strerror or e})") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as e:
        os.close(fd)
        raise PathError(path, f"the {what} could not be read ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise PathError(path, f"the {what} is {file_kind(mode)}; the kit reads only regular files")
    return fd


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (``st_mode`` from stat or lstat) is, for messages: "a directory", "a FIFO", ..."""
    return ("a regular file" if stat.S_ISREG(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a symbolic link" if stat.S_ISLNK(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")


def _too_big(path: Path, what: str, size: int, limit: int) -> DataError:
    return DataError(path, f"the {what} is {_size_text(size)}, more than the {_size_text(limit)} the kit reads")


def _size_text(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB" if n >= 2**10 else f"{n} bytes"


def regular_size(path: Any, what: str, *, limit: int | None = None) -> os.stat_result:
    """``path``'s stat, checked before it is read: a regular file (PathError naming what it is otherwise) of at most
    ``limit`` bytes (DataError naming the file and the limit)."""
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise PathError(path, f"the {what} could not be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise PathError(path, f"the {what} is {file_kind(st.st_mode)}; the kit reads only regular files")
    if limit is not None and st.st_size > limit:
        raise _too_big(path, what, st.st_size, limit)
    return st


def read_regular(path: Any, what: str, *, limit: int | None = None, head: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``head`` of them when given), the one reading discipline of the kit:
    no FIFOs, devices or folders, never blocking, and never more than ``limit`` bytes read (DataError beyond it)."""
    path = Path(path)
    fd = _open_regular(path, what)
    try:
        with os.fdopen(fd, "rb", closefd=True) as f:
            if head is not None:
                return f.read(head)
            size = os.fstat(f.fileno()).st_size
            if limit is not None and size > limit:
                raise _too_big(path, what, size, limit)
            data = f.read(limit + 1) if limit is not None else f.read()
    except CudnnLabError:
        raise
    except OSError as e:
        raise PathError(path, f"the {what} could not be read ({e.strerror or e})") from None
    if limit is not None and len(data) > limit:
        raise _too_big(path, what, len(data), limit)
    return data


def inflate(data: bytes, source: Any, what: str, *, limit: int) -> bytes:
    """zlib-compressed ``data`` inflated to at most ``limit`` bytes (DataError beyond it, or for data that is not
    zlib): a small compressed text cannot grow the process's memory past the bound."""
    import zlib

    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as e:
        raise DataError(source, f"the {what} is not valid compressed data ({shorten(str(e), 80)})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise DataError(source, f"the {what} inflates to more than the {_size_text(limit)} the kit reads")
    if not inflater.eof:
        raise DataError(source, f"the {what} ends early (truncated?)")
    return out


class _Unusable:
    """A number the JSON held that the kit refuses (beyond 64 bits, NaN or infinite), kept in place while parsing so
    that the field holding it can be named afterwards."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _number_hooks(allow_nonfinite: bool) -> tuple[dict[str, Any], list[_Unusable]]:
    """json.loads hooks that put an :class:`_Unusable` in place of a refused number, and the list they add it to."""
    found: list[_Unusable] = []

    def unusable(why: str) -> _Unusable:
        found.append(_Unusable(why))
        return found[-1]

    def big_int(text: str) -> int | _Unusable:
        digits = len(text.lstrip("-"))
        if digits > MAX_INT_DIGITS:
            return unusable(f"an integer of {digits} digits (at most {MAX_INT_DIGITS} are read)")
        return int(text)

    def finite_float(text: str) -> float | _Unusable:
        value = float(text)
        if math.isfinite(value):
            return value
        return unusable(f"{text[:40]} (beyond a 64-bit float: infinite; JSON numbers must be finite here)")

    def no_constant(name: str) -> _Unusable:
        return unusable(f"{name} (not a finite number; JSON numbers must be finite here)")

    hooks: dict[str, Any] = {"parse_int": big_int}
    if not allow_nonfinite:
        hooks.update(parse_float=finite_float, parse_constant=no_constant)
    return hooks, found


def first_in_json(value: Any, matches: Callable[[Any], bool], *, whole: str = "(the whole value)"
                  ) -> tuple[str, Any] | None:
    """The field ("over.n[1]"; ``whole`` for ``value`` itself) and item of the first item of parsed JSON, in the
    text's order, that ``matches``; None if none does. Depth-first without recursion (parse_json bounds nesting)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if matches(item):
            return path or whole, item
        if isinstance(item, dict):
            stack.extend(reversed([(f"{path}.{k}" if path else str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(f"{path}[{i}]", v) for i, v in enumerate(item)]))
    return None


#: JSON nested deeper than this is refused before parsing (no kit file nests more than about 8 levels).
MAX_JSON_DEPTH = 64


#: A JSON string (escapes included; the loop unrolled, 5x faster on a 2.7 MB answers file than an alternation per
#: character), and any run of characters that is not a bracket.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _nests_deeper(text: str, limit: int) -> bool:
    """Whether ``text`` nests deeper than ``limit`` brackets, strings skipped (regex and C iterators: a 400 kB
    recording is scanned in about a millisecond, not the tenth of a second a character loop takes)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return bool(brackets) and max(accumulate(map(_BRACKET_STEP.__getitem__, brackets))) > limit


def parse_json(text: str, source: Any, what: str, *, allow_nonfinite: bool = False,
               max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON text -> value; DataError naming ``source`` for invalid JSON, nesting deeper than ``max_depth``, integers
    beyond 64 bits and (unless ``allow_nonfinite``) NaN or Infinity."""
    if not isinstance(text, str):
        raise OptionError(what, text, "must be JSON text (a str)")
    if _nested_over(text, max_depth):
        raise DataError(source, f"the {what} is nested more than {max_depth} levels deep; the kit reads no such file")
    hooks, refused = _number_hooks(allow_nonfinite)
    try:
        value = json.loads(text, **hooks)
    except json.JSONDecodeError as e:
        problem = "ends early (truncated?)" if e.pos >= len(text.rstrip()) else f"has {e.msg}"
        raise DataError(source, f"the {what} is not valid JSON: it {problem} at line {e.lineno} column {e.colno}",
                        hint="write it with Spec.to_json(), RunResult.save() or json.dump") from None
    except RecursionError:
        raise DataError(source, f"the {what} is nested too deeply to be read") from None
    except ValueError as e:  # int() or float() refusing a literal
        raise DataError(source, f"the {what} holds a number the kit cannot use: {shorten(str(e), 120)}") from None
    if refused:
        field, bad = first_in_json(value, lambda item: isinstance(item, _Unusable)) or ("(a key)", refused[0])
        raise DataError(source, f"field {field}: the {what} holds a number the kit cannot use: {shorten(bad.why, 120)}")
    return value


def _nested_over(text: str, limit: int) -> bool:
    """Cheap first: a text with fewer than ``limit`` opening brackets cannot nest deeper."""
    if text.count("[") + text.count("{") <= limit:
        return False
    return _nests_deeper(text, limit)


# ------------------------------------------------------------------------------------------------ fields

def _kind(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {shorten(value, 40)}"


def _fail(source: Any, field: str, problem: str) -> DataError:
    return DataError(source, f"field {field}: {problem}")


def _expect(source: Any, field: str, value: Any, types: type | tuple[type, ...], *, null: bool = False) -> Any:
    """``value`` if it is of ``types`` (bool is never an int or a number here), else DataError naming the field."""
    if value is None and null:
        return value
    kinds = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = {int: "an integer", float: "a number", str: "text", bool: "true or false", dict: "an object",
                 list: "a list"}
        want = " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in kinds))
        raise _fail(source, field, f"must be {want}{' or null' if null else ''}, not {_kind(value)}")
    return value


def finite_number(source: Any, field: str, value: Any, *, low: float | None = 0.0, high: float | None = None,
                  null: bool = True) -> Any:
    """``value`` if it is a finite number (not bool) within [low, high], or null where allowed; else DataError
    naming ``source`` and ``field``. Values are checked by meaning, not only by type."""
    if value is None and null:
        return value
    _expect(source, field, value, (int, float))
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(source, field, f"must be a finite number, not {value}")
    if low is not None and value < low:
        raise _fail(source, field, f"must be at least {low:.15g}, not {shorten(value, 40)}")
    if high is not None and value > high:
        raise _fail(source, field, f"must be at most {high:.15g}, not {shorten(value, 40)}")
    return value


def as_path(path: Any, *, what: str) -> Path:
    """``path`` as a Path: a non-empty str or os.PathLike without NUL characters, else OptionError naming ``what``."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise OptionError(what, path, "must be a file path (a str or pathlib.Path)")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise OptionError(what, path, "must be a non-empty path")
    if "\x00" in text:
        raise OptionError(what, path, "must not contain a NUL character")
    return Path(text).expanduser()
