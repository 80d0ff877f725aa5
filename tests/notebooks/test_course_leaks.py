"""No exercise's answer is shown anywhere earlier in the course (issue 40).

The course is executed at full size (the sizes a student runs), notebook by notebook in course order, each lesson
with :data:`notebook_runs.PROBE` appended to read back the answers its checks computed. For every exercise, all that
a student has seen before answering it (every earlier notebook's Markdown and outputs, figure data included, then
this notebook's cells above the question, the question and the answer cell itself; folded solutions and checks
left out) is searched for the answer: numbers in their printed forms, in a figure's data, or as the ratio of two
numbers printed together; lists and sets printed whole; text answers as words; and for yes/no answers, the
statements that would decide them (:data:`BINARY`, one entry per binary answer, reviewed by hand).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
pytest.importorskip("nbclient", reason="notebook tests need nbclient")

from notebook_runs import (COURSE, LESSONS, PROBE, REVIEWED, execute, exercises, expected_values, leaks,
                           number_forms, shown_blocks, tags)

#: For each yes/no answer, (lesson, exercise, part index or None): statements that would decide it if shown above
#: the question. A binary answer cannot be found by its value (True and False are everywhere), so each one names
#: the evidence that settles it; a new binary answer fails test_every_binary_answer_names_its_evidence until added.
BINARY: dict[tuple[str, int, int | None], list[str]] = {
    # (a) whether the H200 got the same proposals in the same order: a sentence comparing the two GPUs' proposals.
    ("03_heuristics_and_plans", 2, 0): [r"(?i)(same|different) (plans|proposals|order)[^\n]{0,60}(H100|H200)"],
    # (b) which plans tie for fastest on the H200: the summary of the H200 recording of this conv, its 'tied:' line.
    ("03_heuristics_and_plans", 2, 1): [r"(?s)h200_conv_nhwc_fp16_bias_relu\)[^\n]*\n.{0,400}tied: "],
    # whether wgrad's fastest plan passes PyTorch's band: wgrad's plans with times beside pass/fail, or a sentence.
    ("04_numerics", 3, None): [r"(?i)fastest[^\n]{0,80}(inside|outside|passes|fails|within)[^\n]{0,40}PyTorch",
                               r"(?s)wgrad.{0,300}median \(us\).{0,300}passes PyTorch band"],
}


@functools.cache
def course_run() -> tuple[Any, ...]:
    """Every course notebook executed at full size, in course order (lessons with the probe appended)."""
    return tuple(execute(p, small=False, append=PROBE if p in LESSONS else "") for p in COURSE)


def seen_before(index: int, question: Any, *, with_question: bool = True) -> tuple[list[Any], list[Any]]:
    """Everything shown before ``question`` (a cell of notebook ``index``): (the whole course's blocks, this
    lesson's own). ``with_question``: add the question and the student's answer cell (its comment, "e.g. ...")."""
    runs = course_run()
    blocks: list[dict[str, Any]] = []
    for nb in runs[:index]:
        for cell in nb.cells:
            if not {"solution", "check"} & set(tags(cell)) and "__EXPECTED__" not in cell.source and \
                    "_plain" not in cell.source:
                blocks += shown_blocks(cell)
    nb = runs[index]
    stop = nb.cells.index(question)
    lesson: list[dict[str, Any]] = []
    for cell in nb.cells[:stop + 2 if with_question else stop]:
        if not {"solution", "check"} & set(tags(cell)):
            lesson += shown_blocks(cell)
            if cell.cell_type == "code" and "exercise" in tags(cell):
                lesson.append({"text": cell.source, "numbers": []})  # the answer cell's comment ("e.g. ...")
    return blocks + lesson, lesson


def _binary_parts(expected: Any) -> list[int | None]:
    if isinstance(expected, bool):
        return [None]
    if isinstance(expected, list):
        return [i for i, v in enumerate(expected) if isinstance(v, bool)]
    return []


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_no_answer_is_shown_earlier_in_the_course(path: Any) -> None:
    index = COURSE.index(path)
    nb = course_run()[index]
    expected = expected_values(nb)
    found = []
    for n, cells in exercises(nb):
        if expected.get(n) is None:
            continue
        blocks, lesson = seen_before(index, cells[0])
        found += [f"exercise {n}: {where}" for where in leaks(expected[n], blocks[:len(blocks) - len(lesson)], lesson)
                  if (path.stem, n, where) not in REVIEWED]
        for part in _binary_parts(expected[n]):  # the question itself names the evidence: search above it
            text = "\n".join(b["text"] for b in seen_before(index, cells[0], with_question=False)[0])
            for pattern in BINARY.get((path.stem, n, part), []):
                if re.search(pattern, text):
                    found.append(f"exercise {n} part {part}: /{pattern}/ is shown above it")
    assert found == [], f"{path.name}: answers shown before their exercise: {found}"


@pytest.mark.slow
def test_every_binary_answer_names_its_evidence() -> None:
    missing = []
    for path, nb in zip(COURSE, course_run()):
        if path not in LESSONS:
            continue
        for n, value in expected_values(nb).items():
            missing += [(path.stem, n, part) for part in _binary_parts(value) if (path.stem, n, part) not in BINARY]
    assert missing == [], f"add the statements that would decide these yes/no answers to BINARY: {missing}"


# ------------------------------------------------------------------------------------------------ the detector

def _block(text: str, numbers: list[float] | None = None) -> dict[str, Any]:
    return {"text": text, "numbers": numbers or []}


def test_every_reviewed_match_names_a_lesson_and_a_reason() -> None:
    stems = {p.stem for p in LESSONS}
    assert all(stem in stems and n >= 1 and len(why) > 40 for (stem, n, _), why in REVIEWED.items())


def test_the_detector_finds_each_kind_of_leak() -> None:
    assert leaks(1.2134, [_block("took 1.21x as long")]) == ["printed as 1.21"]
    assert leaks(0.4134, [_block("saved 41.34% of the time")])
    assert leaks(0.5365681679532246, [_block("", [0.5365681679532246])]) == ["its exact value in a figure's data"]
    ratio = leaks(0.3320, [], [_block("GFLOP 12.500 and 37.650 in the table")])  # ratios: in the lesson's own cells
    assert leaks(0.3320, [_block("GFLOP 12.500 and 37.650")], []) == []
    assert ratio and "ratio 12.5 / 37.65" in ratio[0] and "row" in ratio[0]
    column = leaks(0.3320, [], [_block("padding   12.500\nplain     37.650")])  # right-aligned, one column
    assert column and "column" in column[0]
    assert leaks([401408.0, 3136.0, 56.0, 1.0], [_block("Y strides [401408, 3136, 56, 1]")])
    assert leaks({"set": ["41", "62"]}, [_block("engines: 41, 62 and more")])
    assert leaks("eng41_k2=4_k13=1", [_block("best eng41_k2=4_k13=1 here")])
    assert leaks({"dict": {"speed-up": 1.7431}}, [_block("a speed-up of 1.74")])


def test_the_detector_ignores_what_is_no_answer() -> None:
    assert leaks(1.2134, [_block("took 2.5x as long, 1.3 us")]) == []
    assert leaks(6.0, [_block("6 engines, 6 plans")]) == []  # small integers are everywhere
    assert leaks([18.0, 1.0, 6.0, 2.0], [_block("strides (18, 1, 6) and 2")]) == []
    assert leaks({"set": ["41", "62"]}, [_block("engine 41\nengine 62")]) == []  # not on one line
    assert leaks("same", [_block("the same plan")]) == []  # short words are not answers to look for
    assert leaks(0.3320, [], [_block("padding  12.500 x\nplain   37.650")]) == []  # neither one row nor one column
    assert leaks(1.349, [], [_block("26.440 and 19.570")]) == []  # 1.3511: outside the printed digits' rounding
    assert leaks(0.3320, [], [_block("12.5 and 37.65")]) == []  # three digits: too common to mean anything
    assert leaks(0.47, [_block("0.47 of it")]) == [] and leaks(0.47, [], [_block("0.47 of it")])  # 2 digits: lesson
    assert number_forms(1.2134) == ["1.21", "1.213", "121.3%", "121.34%"]
