"""Paged K/V caches and sink tokens in SdpaSpec: the pools, block tables and sink tensor it declares, what it counts,
its round trip, its form rules, each refusal naming its field (and the cuDNN rule or version behind it)."""

from __future__ import annotations

import pytest

from cudnn_lab import SdpaSpec, spec_from_dict, spec_from_json
from cudnn_lab.errors import SpecError
from cudnn_lab.specs.sdpa import SDPA_PAGED, SDPA_SINK

DECODE = dict(batch=4, heads=64, kv_heads=8, seq_q=1, seq_kv=8192, head_dim=128, dtype="bf16", causal=True,
              diagonal_alignment="bottom_right")
BASE = dict(batch=2, heads=8, seq_q=256, seq_kv=1024, head_dim=64)


def test_a_paged_decode_declares_pools_tables_and_the_padding_mask():
    s = SdpaSpec(**DECODE, page_size=64, seq_lens_kv=(8192, 5000, 100, 1))
    assert s.paged and s.padded and s.pages_per_seq == 128
    assert s.pages_needed == 128 + 79 + 2 + 1 == s.cache_pages
    ins, main = s.io_names()
    assert ins == ("Q", "K", "V", "seq_len_q", "seq_len_kv", "Page_table_K", "Page_table_V") and main == "O"
    shapes, dtypes, strides = s.tensor_shapes(), s.tensor_dtypes(), s.tensor_strides()
    assert shapes["K"] == shapes["V"] == (210, 8, 64, 128)
    assert shapes["Page_table_K"] == (4, 1, 128, 1) and dtypes["Page_table_V"] == "int32"
    assert strides["K"] == (64 * 8 * 128, 128, 8 * 128, 1)  # BSHD: [page, token, head, dim] in memory
    assert SdpaSpec(**DECODE, page_size=64, layout="BHSD").tensor_strides()["K"] == (8 * 64 * 128, 64 * 128, 128, 1)
    assert s.lens_q == (1, 1, 1, 1) and s.flops() == SdpaSpec(**DECODE, seq_lens_kv=s.seq_lens_kv).flops()
    assert "paged64" in s.label() and s.gpu_requirements() == (SDPA_PAGED,)


def test_pages_are_counted_by_what_the_tables_address_not_the_pool():
    s = SdpaSpec(**DECODE, page_size=256)
    big = s.replace(num_pages=s.pages_needed * 4)
    assert big.tensor_shapes()["K"][0] == 4 * s.tensor_shapes()["K"][0]
    assert big.min_bytes() == s.min_bytes()  # unused pages are not read
    flat = SdpaSpec(**DECODE, seq_lens_kv=(8192,) * 4)
    tables = 2 * 4 * 32 * 4  # two int32 tables [4, 1, 32, 1]
    assert s.min_bytes() == flat.min_bytes() + tables
    assert "x" in big.label() and "x" not in s.label()


def test_sink_adds_one_fp32_logit_per_query_head():
    s = SdpaSpec(**BASE, sink=True, causal=True, direction="fwd_training")
    assert s.io_names()[0] == ("Q", "K", "V", "Sink")
    assert s.tensor_shapes()["Sink"] == (1, 8, 1, 1) and s.tensor_dtypes()["Sink"] == "fp32"
    assert "sink" in s.label() and s.gpu_requirements() == (SDPA_SINK,)
    assert SDPA_SINK.min_cudnn == 91300 and SDPA_PAGED.min_cudnn == 90500
    both = SdpaSpec(**BASE, sink=True, page_size=128)
    assert both.io_names()[0][-3:] == ("Page_table_K", "Page_table_V", "Sink")


@pytest.mark.parametrize("spec", [
    SdpaSpec(**DECODE, page_size=16, seq_lens_kv=(8192, 1, 20, 4000), num_pages=1000),
    SdpaSpec(**BASE, sink=True, page_size=128, layout="BHSD", dtype="fp16"),
    SdpaSpec(**BASE, sink=True, causal=True, sliding_window=64),
], ids=["paged", "paged-sink", "sink-window"])
def test_round_trip(spec):
    assert spec_from_dict(spec.to_dict()) == spec and spec_from_json(spec.to_json()) == spec


def test_num_pages_is_dropped_without_paging():
    assert SdpaSpec(**BASE, num_pages=50).num_pages is None
    assert SdpaSpec(**BASE, page_size=0, num_pages=50) == SdpaSpec(**BASE)


@pytest.mark.parametrize("changes,field,words", [
    (dict(page_size=100), "page_size", "a power of 2"),
    (dict(page_size=48, seq_kv=480), "page_size", "a power of two"),
    (dict(page_size=2048), "page_size", "dividing seq_kv=1024"),
    (dict(page_size=-16), "page_size", "0"),
    (dict(page_size=64, num_pages=31), "num_pages", "point outside the cache"),
    (dict(page_size=64, seq_lens_kv=(1024, 1), num_pages=16), "num_pages", "need 17 pages"),
    (dict(page_size=64, num_pages=0), "num_pages", "1"),
    (dict(page_size=64, seq_lens_kv=(1024, 1025)), "seq_lens_kv", "above seq_kv=1024"),
    (dict(page_size=64, direction="bwd"), "page_size", "forward-only"),
    (dict(page_size=64, dtype="fp8_e4m3"), "page_size", "FP8"),
    (dict(page_size=64, seq_lens_q=(256, 3), ragged=True), "ragged", "cannot be packed"),
    (dict(page_size=64, bias="tensor"), "bias", "paged"),
    (dict(page_size=64, direction="fwd_training", dropout=0.1), "dropout", "paged"),
    (dict(sink=True, direction="bwd"), "sink", "forward only"),
    (dict(sink=True, dtype="fp8_e4m3"), "sink", "FP8"),
    (dict(sink=True, seq_q=1), "sink", "s_q == 1, not supported with sink_token"),
    (dict(sink=True, seq_q=1, page_size=64), "sink", "decode mode"),
    (dict(sink="yes"), "sink", "True or False"),
])
def test_refusals_name_the_field_and_the_rule(changes, field, words):
    with pytest.raises(SpecError) as e:
        SdpaSpec(**{**BASE, **changes})
    assert e.value.field == field and words in str(e.value), str(e.value)


def test_form_rules():
    assert SdpaSpec.field_limits({"seq_kv": 4096})["page_size"] == (0, 4096)
    assert SdpaSpec.field_limits({"page_size": 64, "num_pages": 9})["num_pages"] == (1, 1 << 20)
    assert "num_pages" not in SdpaSpec.field_limits({"page_size": 64, "num_pages": None})
    assert "num_pages" in SdpaSpec.hidden_fields({"page_size": 0})
    assert "num_pages" not in SdpaSpec.hidden_fields({"page_size": 64})
    assert "sink" in SdpaSpec.hidden_fields({"direction": "bwd"})
    assert "sink" not in SdpaSpec.hidden_fields({"direction": "fwd_inference", "dtype": "bf16"})
    hints = SdpaSpec.field_hints({})
    assert "dividing seq_kv" in hints["page_size"] and "seq_q > 1" in hints["sink"]
    order = SdpaSpec.field_order
    assert order.index("ragged") < order.index("page_size") < order.index("num_pages") < order.index("sink")
