""""this GPU" only for a live answer (issue 39): an answer recorded on the kit's H100/H200 rounds for the card in
use then is labelled by the card it was recorded on wherever it is read back (CLI, compare, block-format rows), never
"(this GPU)" on a machine that has another card or none. Runs on CPU with the shipped recordings."""

from __future__ import annotations

import json
import re

import cudnn_lab as cl
from cudnn_lab import whatif as wi
from cudnn_lab.plots.whatif_tables import block_scale_answers_html, compare_table_html
from cudnn_lab.results.labels import recorded_label
from cudnn_lab.whatif.block_formats import recorded_block_scale_answers

CONV = cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


def test_recorded_answers_name_the_card_they_were_recorded_on():
    mine = [w for w in wi.recorded_whatifs() if w.target == "this GPU"]
    assert mine, "the recordings hold answers asked for the card in use"
    for w in mine:
        assert "(this GPU)" not in w.target_label and "this GPU" not in w.summary()
        assert w.target_label.startswith("NVIDIA ") and "recorded on" in w.target_label
    assert recorded_label("NVIDIA H200 (this GPU)") == "NVIDIA H200 (recorded on it)"
    assert recorded_label("synthetic: NVIDIA H200 with compute capability 8.0").startswith("synthetic: ")


def test_block_format_rows_name_the_card():
    answers = recorded_block_scale_answers()
    assert any(a.target == "this GPU" for a in answers)
    assert all("this GPU" not in a.row()["target"] for a in answers)
    assert "this GPU" not in block_scale_answers_html(answers)


def test_compare_headers_name_the_card_for_a_recorded_answer():
    frame = wi.compare(CONV, [None, "h200"], recorded=True)
    shown = re.sub(r"<[^>]+>", " ", compare_table_html(frame))  # the words on screen (column keys stay in titles)
    assert "this GPU" not in shown and "recorded on it" in shown


def test_cli_plans_without_a_gpu_says_no_this_gpu(tmp_path, capsys):
    from cudnn_lab.cli import main

    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV.to_dict()))
    for extra in ([], ["--sm-count", "114"], ["--recorded"]):
        code = main(["plans", str(path), *extra])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "(this GPU)" not in out and "recorded on it" in out, (extra, out[:300])
