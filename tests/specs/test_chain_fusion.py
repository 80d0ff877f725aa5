"""cl.chain beyond epilogues: the fusion patterns it builds (prologue before conv, genstats after it) and the words
for what cuDNN fuses apart from what the kit builds (softmax, RNNs, transforms, genstats after an epilogue)."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

GEO = dict(n=2, c=8, h=6, w=6, k=16)


def test_conv_genstats_becomes_a_conv_genstats_spec() -> None:
    assert cl.chain("conv", "genstats", **GEO) == cl.ConvGenstatsSpec(**GEO)


@pytest.mark.parametrize("tail,genstats", [((), False), (("genstats",), True)])
def test_scale_bias_relu_conv_becomes_the_prologue_spec(tail: tuple, genstats: bool) -> None:
    spec = cl.chain("scale", "bias", "relu", "conv", *tail, **GEO, param_dtype="fp16")
    assert spec == cl.ConvPrologueSpec(**GEO, param_dtype="fp16", genstats=genstats)


@pytest.mark.parametrize("steps,words", [
    (("conv", "bias", "relu", "genstats"), "right after the convolution"),
    (("relu", "conv"), "chain('scale', 'bias', 'relu', 'conv')"),
    (("scale", "bias", "conv"), "prologue"),
    (("genstats",), "chain('conv', 'genstats')"),
    (("matmul", "softmax"), "only inside its attention node"),
    (("conv", "relu", "lstm"), "RnnSpec(cell='lstm')"),
    (("conv", "softmax"), "SoftmaxSpec"),
    (("transpose",), "9.22.0"),
    (("conv", "concatenate"), "9.8.0"),
    (("rnn", "relu"), "classic RNN API")])
def test_what_cuDNN_fuses_apart_from_what_the_kit_builds(steps: tuple, words: str) -> None:
    with pytest.raises(cl.SpecError) as info:
        cl.chain(*steps, **GEO)
    assert info.value.field == "chain" and words in str(info.value)


def test_pattern_sizes_are_checked_by_the_fusion_spec() -> None:
    with pytest.raises(cl.SpecError) as info:
        cl.chain("conv", "genstats", **{**GEO, "c": 12})
    assert info.value.field == "c" and info.value.spec == "ConvGenstatsSpec"
    with pytest.raises(cl.SpecError) as info:
        cl.chain("scale", "bias", "relu", "conv", genstats=True, **GEO)
    assert info.value.field == "genstats"
