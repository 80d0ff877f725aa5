"""reference/common.uniform: seeded inputs, the same for any thread count; a large tensor is drawn in chunks with
generators of their own (issue 27: an FP8 GEMM's operands took 1.8 s from one generator)."""

from __future__ import annotations

import math
import zlib

import pytest

from cudnn_lab.reference import common


def test_a_tensor_up_to_one_chunk_keeps_the_values_of_one_generator() -> None:
    import torch

    got = common.uniform("B", (3, 5), (5, 1), "fp32", 7, -2.0, 2.0)
    gen = torch.Generator().manual_seed((7 * 1_000_003 + zlib.crc32(b"B")) % 2**63)
    assert torch.equal(got, (torch.rand(15, generator=gen) * 4.0 - 2.0).reshape(3, 5))


@pytest.mark.parametrize("threads", [1, 3])
def test_a_large_tensor_is_the_same_for_any_thread_count_and_its_chunks_differ(monkeypatch, threads) -> None:
    import torch

    monkeypatch.setattr(common, "DRAW_CHUNK", 1000)
    dims = (5, 450)  # 2,250 values: three chunks, the last one short
    monkeypatch.setattr(common, "DRAW_THREADS", 1)
    one = common.uniform("A", dims, (450, 1), "fp32", 3, -1.0, 1.0)
    monkeypatch.setattr(common, "DRAW_THREADS", threads)
    again = common.uniform("A", dims, (450, 1), "fp32", 3, -1.0, 1.0)
    assert torch.equal(one, again)
    flat = one.reshape(-1)
    assert float(flat.min()) >= -1.0 and float(flat.max()) < 1.0
    assert not torch.equal(flat[:1000], flat[1000:2000])  # each chunk its own generator
    assert not torch.equal(flat, common.uniform("A", dims, (450, 1), "fp32", 4, -1.0, 1.0).reshape(-1))
    assert math.isclose(float(flat.mean()), 0.0, abs_tol=0.1)


def test_a_large_strided_tensor_sees_its_buffer_through_the_strides(monkeypatch) -> None:
    monkeypatch.setattr(common, "DRAW_CHUNK", 64)
    x = common.uniform("X", (2, 3, 10, 10), (300, 1, 30, 3), "bf16", 0)  # NHWC strides
    assert x.stride() == (300, 1, 30, 3) and str(x.dtype) == "torch.bfloat16"


def test_a_host_device_draws_on_the_host_at_any_size(monkeypatch) -> None:
    import torch

    monkeypatch.setattr(common, "DEVICE_DRAW_MIN", 10)
    monkeypatch.setattr(common, "DRAW_CHUNK", 64)
    on_cpu = common.uniform("A", (20, 20), (20, 1), "fp32", 1, device="cpu")
    assert on_cpu.device.type == "cpu" and torch.equal(on_cpu, common.uniform("A", (20, 20), (20, 1), "fp32", 1))
