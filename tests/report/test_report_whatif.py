"""The report's What-if section: for a recording whose problem has answers of cuDNN's heuristics recorded on an
H100 and an H200 (cudnn_lab/data/whatif), the recorded and synthetic targets side by side with this run's best
times, the refusals and the drift between cuDNN 9.14 and 9.19, labelled as no measurement; tables only. None for a
problem without recorded answers."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.report import report_html, whatif_html
from cudnn_lab.cli import report_answers
from cudnn_lab.whatif.devices import targets
from cudnn_lab.whatif.gpu_facts import target_class

def _report(result: cl.RunResult) -> str:
    """The report as the Lab and `cudnn-lab report` write it: with the answers they gather (cli.report_answers)."""
    return report_html(result, report_answers(result))


LABEL = "cuDNN&#x27;s heuristics&#x27; answer, not a measurement"


@pytest.fixture(scope="module")
def conv() -> cl.RunResult:
    return cl.load_results("h100_conv_nhwc_fp16_bias_relu")


def test_a_recording_with_answers_has_the_what_if_section(conv: cl.RunResult) -> None:
    text = _report(conv)
    assert text.count("<h2>What-if: other GPUs and cuDNN versions</h2>") == 1
    section = text.split("<h2>What-if")[1].split("<h2>")[0]
    assert LABEL in section and "(recorded on NVIDIA " in section and "with cuDNN 9.19.0" in section
    for t in targets():
        if t.origin == "synthetic" and t.name != "sm100":
            gpu = target_class(t.name)  # named by the GPU class it stands for where the facts file maps it
            assert (f">{t.name} ({gpu}-class, synthetic)</th>" if gpu else f">{t.name} (synthetic)</th>") in section
    assert ">h200</th>" in section and "measured on NVIDIA H100 80GB HBM3" in section
    assert "<b>sm100</b> (crashed)" in section  # cuDNN 9.19 crashed answering for compute capability 10.0
    # The drift is the measured GPU's where it is a recorded target (this run's: an H100), else the first one's.
    gpu = next((t.name for t in targets() if t.origin == "recorded"
                and t.description["deviceName"] == conv.device["gpu"]), None)
    recorded = gpu or next(t.name for t in targets() if t.origin == "recorded")
    assert f"Between cuDNN versions, for {recorded}: cuDNN 9.14.0: " in section and "9.19.0" in section


def test_the_section_is_tables_only_and_small(conv: cl.RunResult) -> None:
    section = whatif_html(report_answers(conv))
    assert "<script" not in section and "Plotly" not in section
    assert len(section) < 30_000


def test_a_recording_without_answers_has_no_what_if_section() -> None:
    pool = cl.load_results("h100_pool_max_fp16")  # pooling: no answer of the heuristics is recorded
    assert whatif_html(report_answers(pool)) == ""
    assert "What-if" not in _report(pool)


def test_a_matmul_report_shows_the_recorded_block_format_answers_and_a_norm_report_does_not() -> None:
    """Issue 28: the Blackwell block formats section lists cuDNN's recorded answers for block-scaled graphs of the
    same operation (MXFP8 and NVFP4 on sm100/sm120), labelled as no measurement; other operations have none."""
    from cudnn_lab.whatif.block_formats import recorded_block_scale_answers

    answers = [a for a in recorded_block_scale_answers() if a.spec.op == "matmul"]
    assert answers  # shipped in cudnn_lab/data/whatif/block_scale
    text = _report(cl.load_results("h100_matmul_bf16_tn_4096"))
    assert text.count("Blackwell block formats (MXFP8, NVFP4)") == 2  # the table of contents and the section
    section = text.split("Blackwell block formats (MXFP8, NVFP4)")[2].split("<h2>")[0]
    assert "not a measurement" in section and "nvfp4" in section.lower() and "block_format_whatif" in section
    assert "Blackwell block formats" not in _report(cl.load_results("h100_layernorm_bf16"))
