"""Where a result's numbers come from: RECORDED (GPU, driver, cuDNN, date) or MEASURED HERE, the same words in the
Lab's banner, the report and the notebooks."""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab.provenance import cudnn_version_text, provenance


def test_a_recording_says_recorded_with_gpu_driver_cudnn_and_date() -> None:
    result = cl.load_results("h200_conv_nhwc_fp16_bias_relu")
    origin = provenance(result, recorded=True, name="h200_conv_nhwc_fp16_bias_relu")
    assert origin.kind == "recorded" and origin.heading == "RECORDED"
    for part in ("NVIDIA H200", "driver 580.159.04", "cuDNN 9.19.0", "CUDA 13.0", "2026-11-21",
                 "h200_conv_nhwc_fp16_bias_relu"):
        assert part in origin.text and part in origin.to_html()
    assert origin.text.startswith("RECORDED on NVIDIA H200")


def test_a_run_here_says_measured_here_without_a_name() -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    origin = provenance(result, recorded=False, name="ignored")
    assert origin.heading == "MEASURED HERE" and origin.name == "" and "cl-provenance-measured" in origin.to_html()


def test_left_unsaid_a_result_that_carries_its_file_is_recorded() -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    assert provenance(result).kind == ("recorded" if getattr(result, "loaded_from", None) else "measured")
    result.loaded_from = cl.recorded_datasets(kind="run")["path"].iloc[0]
    assert provenance(result).kind == "recorded" and provenance(result).name


def test_missing_device_fields_are_named_unknown() -> None:
    from cudnn_lab.results import RunResult, plans_frame

    bare = RunResult(spec=cl.MatmulSpec(), plans=plans_frame([]), device={}, torch={}, ceilings={}, settings={})
    origin = provenance(bare, recorded=True)
    assert "unknown GPU" in origin.text and "undated" in origin.text and "cuDNN unknown" in origin.text
    assert cudnn_version_text(91900) == "9.19.0" and cudnn_version_text(8907) == "8.9.7"
    assert cudnn_version_text("9.1") == "9.1"
