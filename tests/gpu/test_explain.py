"""explain(): the backend's raw messages (as quoted in GPU_FACTS.md) become one readable sentence; the raw text
stays available as detail of UnsupportedGraphError."""

from __future__ import annotations

import pytest

from cudnn_lab.errors import CudnnLabError, UnsupportedGraphError
from cudnn_lab.gpu.explain import explain, first_line
from cudnn_lab.specs import ConvSpec, MatmulSpec

DATA_TYPE_MSG = ("CUDNN_BACKEND_TENSOR_DESCRIPTOR: SetAttribute CUDNN_ATTR_TENSOR_DATA_TYPE Failed ... "
                 "CUDNN_STATUS_INVALID_VALUE")
NO_ENGINE_MSG = "cudnnGraphNotSupportedError: no engine ... proposed a plan"
CHANNELS_MSG = ("RuntimeError: detail::finalize(...) failed with message: (0 == wDimA[1]) || ... "
                "CUDNN_STATUS_BAD_PARAM")
GENERIC = "cuDNN could not build this graph."


def test_unset_data_type_message_explains_data_types() -> None:
    text = explain(DATA_TYPE_MSG)
    assert "data type" in text and "io/intermediate/compute" in text
    assert "CUDNN_" not in text


def test_no_engine_message_explains_no_engine_supports_it() -> None:
    text = explain(NO_ENGINE_MSG)
    assert text.startswith("No cuDNN engine on this GPU supports")
    assert "cudnnGraphNotSupportedError" not in text


def test_mismatched_channels_message_explains_channels() -> None:
    text = explain(CHANNELS_MSG)
    assert "input channels do not match" in text
    assert "wDimA" not in text and "BAD_PARAM" not in text


@pytest.mark.parametrize("message", [DATA_TYPE_MSG, NO_ENGINE_MSG, CHANNELS_MSG])
def test_explanations_are_distinct_readable_sentences(message: str) -> None:
    text = explain(message)
    assert text != GENERIC and text.endswith(".") and text[0].isupper()
    assert len({explain(m) for m in (DATA_TYPE_MSG, NO_ENGINE_MSG, CHANNELS_MSG)}) == 3


@pytest.mark.parametrize("message,words", [
    ("CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "No cuDNN engine"),
    ("stride of tensor X is not aligned", "aligned"),
    ("CUDNN_STATUS_ALLOC_FAILED", "out of memory"),
    ("CUDNN_STATUS_BAD_PARAM: something", "rejected a parameter"),
])
def test_other_backend_statuses_get_their_sentence(message: str, words: str) -> None:
    assert words in explain(message)


@pytest.mark.parametrize("message", ["", "segfault in kernel 42", "unknown thing happened"])
def test_unknown_message_gives_generic_sentence(message: str) -> None:
    assert explain(message) == GENERIC


def test_no_engine_with_fp16_channels_not_multiple_of_8_hints_at_tensor_cores() -> None:
    spec = ConvSpec(n=1, c=3, h=8, w=8, k=16, dtype="fp16")
    text = explain(NO_ENGINE_MSG, spec)
    assert text.startswith("No cuDNN engine")
    assert "c=3" in text and "k=16" in text and "multiples of 8" in text


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_channel_hint_names_k_too(dtype: str) -> None:
    assert "k=12" in explain(NO_ENGINE_MSG, ConvSpec(n=1, c=8, h=8, w=8, k=12, dtype=dtype))


def test_fp32_channels_get_no_tensor_core_hint() -> None:
    assert "multiples of 8" not in explain(NO_ENGINE_MSG, ConvSpec(n=1, c=3, h=8, w=8, k=5, dtype="fp32"))


def test_grouped_conv_hint() -> None:
    assert "Grouped" in explain(NO_ENGINE_MSG, ConvSpec(n=1, c=16, h=8, w=8, k=16, groups=4))


@pytest.mark.parametrize("spec", [ConvSpec(n=1, c=16, h=8, w=8, k=16, epilogue=("bias",)),
                                  MatmulSpec(m=8, n=8, k=8, epilogue=("gelu",))], ids=["conv", "matmul"])
def test_epilogue_hint(spec) -> None:
    assert "epilogue" in explain(NO_ENGINE_MSG, spec)


def test_hint_only_accompanies_no_engine() -> None:
    spec = ConvSpec(n=1, c=3, h=8, w=8, k=16, dtype="fp16")
    assert explain(DATA_TYPE_MSG, spec) == explain(DATA_TYPE_MSG)


def test_plain_spec_gets_no_hint() -> None:
    assert explain(NO_ENGINE_MSG, ConvSpec(n=1, c=16, h=8, w=8, k=16)) == explain(NO_ENGINE_MSG)


def test_first_line_joins_lines_and_truncates() -> None:
    assert first_line("a\n  b\tc") == "a b c"
    long = first_line("x" * 500, limit=50)
    assert len(long) == 50 and long.endswith("...")


def test_unsupported_graph_error_starts_with_summary_and_names_device_and_version() -> None:
    summary = explain(NO_ENGINE_MSG)
    err = UnsupportedGraphError(summary, detail=NO_ENGINE_MSG, device="NVIDIA H100 80GB HBM3",
                                cudnn_version="91900")
    text = str(err)
    assert text.startswith(summary)
    assert "NVIDIA H100 80GB HBM3" in text and "cuDNN 91900" in text
    assert NO_ENGINE_MSG in text
    assert (err.summary, err.detail, err.device, err.cudnn_version) == (summary, NO_ENGINE_MSG,
                                                                        "NVIDIA H100 80GB HBM3", "91900")


def test_unsupported_graph_error_keeps_raw_detail_after_the_summary() -> None:
    err = UnsupportedGraphError(explain(CHANNELS_MSG), detail=f"  {CHANNELS_MSG}\n")
    text = str(err)
    assert text.index(explain(CHANNELS_MSG)) < text.index("Backend message:") < text.index(CHANNELS_MSG)
    assert "(on " not in text  # no device or version given


def test_unsupported_graph_error_suggests_what_to_try() -> None:
    assert "Try another layout" in str(UnsupportedGraphError("S."))


def test_unsupported_graph_error_is_a_runtime_error() -> None:
    with pytest.raises(RuntimeError):
        raise UnsupportedGraphError("x")
    assert issubclass(UnsupportedGraphError, CudnnLabError)
