"""Where a result's numbers come from: RECORDED (GPU, driver, cuDNN, date) or MEASURED HERE, the same words in the
Lab's banner, the report and the notebooks."""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab.provenance import cudnn_version_text, provenance


def test_a_recording_says_recorded_with_gpu_driver_cudnn_and_date() -> None:
    result = cl.load_results("h200_conv_nhwc_fp16_bias_relu")
    origin = provenance(result, recorded=True, name="h200_conv_nhwc_fp16_bias_relu")
    assert origin.kind == "recorded" and origin.heading == "RECORDED"
    for part in ("NVIDIA H200", f"driver {result.device['driver']}", "cuDNN 9.", f"CUDA {result.device['cuda']}",
                 result.created[:10], "h200_conv_nhwc_fp16_bias_relu"):
        assert part in origin.text and part in origin.to_html()
    assert origin.text.startswith("RECORDED on NVIDIA H200")


def test_a_run_here_says_measured_here_without_a_name() -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    origin = provenance(result, recorded=False, name="ignored")
    assert origin.heading == "MEASURED HERE" and origin.name == "" and "cl-provenance-measured" in origin.to_html()


def test_left_unsaid_a_loaded_result_is_recorded_under_its_name(tmp_path) -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    assert result.loaded_from.stem == "h200_matmul_fp16_bias"
    origin = cl.provenance(result)
    assert origin.kind == "recorded" and origin.name == "h200_matmul_fp16_bias"
    assert origin.text.startswith("RECORDED on NVIDIA H200") and origin.text.endswith("(h200_matmul_fp16_bias)")
    assert "loaded_from" not in result.to_dict()
    saved = result.save(tmp_path / "mine.json")
    assert cl.RunResult.load(saved).loaded_from == saved and provenance(cl.load_results(saved)).name == "mine"


def test_left_unsaid_a_result_made_here_is_measured_here() -> None:
    import dataclasses

    loaded = cl.load_results("h200_matmul_fp16_bias")
    made_here = cl.RunResult.from_dict(loaded.to_dict())  # as cl.run makes it: from records, not from a file
    assert made_here.loaded_from is None and provenance(made_here).kind == "measured"
    assert provenance(dataclasses.replace(loaded, loaded_from=None)).heading == "MEASURED HERE"


def test_missing_device_fields_are_named_unknown() -> None:
    from cudnn_lab.results import RunResult, plans_frame

    bare = RunResult(spec=cl.MatmulSpec(), plans=plans_frame([]), device={}, torch={}, ceilings={}, settings={})
    origin = provenance(bare, recorded=True)
    assert "unknown GPU" in origin.text and "undated" in origin.text and "cuDNN unknown" in origin.text
    assert cudnn_version_text(91900) == "9.19.0" and cudnn_version_text(8907) == "8.9.7"
    assert cudnn_version_text("9.1") == "9.1"
