"""cuDNN's why-not text read whatever it holds (issue 37): an engine header nested deeply, numbers of 5000 digits,
digits that are not ASCII, non-finite constants or a header that is not an object give a row with the engine unknown
(never a raw RecursionError or ValueError), and the blocks around it keep their own engines and reasons."""

from __future__ import annotations

import pytest

from cudnn_lab.gpu.reasons import read_reasons, reasons_frame, summarize

BLOCK = ('{"engineId": 7, "smVersion": 900, "knobChoices": {"CUDNN_KNOB_TYPE_TILE_SIZE": 3}}\n'
         "Warning: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH; Reason: only Hopper is supported\n"
         "Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: finalize_internal()\n")
DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = "1" + "0" * 5000

BAD_HEADERS = {
    "deep engineId": '{"engineId": ' + DEEP + "}",
    "deep knobs": '{"engineId": 3, "knobChoices": {"A": ' + DEEP + "}}",
    "5000-digit engineId": '{"engineId": ' + DIGITS + ', "smVersion": 900}',
    "5000-digit engineId text": '{"engineId": "' + DIGITS + '", "smVersion": 900}',
    "5000-digit smVersion text": '{"engineId": "3", "smVersion": "' + DIGITS + '"}',
    "5000-digit knob": '{"engineId": 3, "knobChoices": {"A": ' + DIGITS + "}}",
    "superscript digits": '{"engineId": "\\u00b2", "smVersion": "\\u00b3"}',
    "Infinity": '{"engineId": Infinity, "smVersion": NaN}',
    "1e400": '{"engineId": 1e400, "smVersion": -900}',
    "bool": '{"engineId": true, "smVersion": false}',
    "not an object": '{"engineId": 3} trailing',
    "knobs not an object": '{"engineId": 3, "knobChoices": [1, 2]}',
}


@pytest.mark.parametrize("header", list(BAD_HEADERS.values()), ids=list(BAD_HEADERS))
def test_a_bad_engine_header_is_one_block_with_its_engine_unknown(header: str) -> None:
    message = BLOCK + header + "\nWarning: CUDNN_STATUS_BAD_PARAM; Reason: stride must be packed\n" + BLOCK
    rows = read_reasons(message)
    assert len(rows) == 3  # the bad header still starts a block of its own
    assert rows[0].engine_id == rows[2].engine_id == 7 and rows[0].sm_version == 900
    assert rows[0].reason == "only Hopper is supported" and rows[0].category == "architecture"
    bad = rows[1]
    assert bad.reason == "stride must be packed" and bad.category == "layout"
    assert bad.engine_id in (-1, 3) and (bad.sm_version is None or bad.sm_version == 900)
    assert len(bad.knobs) <= 1000
    assert summarize(message).startswith("cuDNN refused 3 engine configurations")
    assert int(reasons_frame(message)["configs"].sum()) == 3


def test_numbers_cudnn_writes_are_still_read() -> None:
    rows = read_reasons(BLOCK + '{"engineId": "12", "smVersion": "1000"}\nWarning: S; Reason: QMMA kernels\n')
    assert [(r.engine_id, r.sm_version) for r in rows] == [(7, 900), (12, 1000)]
    assert rows[0].knobs == "TILE_SIZE=3"


def test_a_5000_digit_number_in_a_reason_is_kept_as_text() -> None:
    rows = read_reasons(f"Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: needs {DIGITS} bytes\n")
    assert len(rows) == 1 and rows[0].engine_id == -1 and DIGITS in rows[0].reason
