"""Block-scaled formats (MXFP8, NVFP4) emulated in float64: the element grids, E8M0 and E4M3 block scales, amax
handling, saturation, and the kit's errors for formats cuDNN does not know."""

from __future__ import annotations

import math

import pytest
import torch

from cudnn_lab.errors import SpecError
from cudnn_lab.reference.block_formats import (BLOCK_FORMATS, ELEMENT_GRIDS, BlockFormat, block_dequantize,
                                               block_format, block_quantization_error, block_quantize, e8m0_scale,
                                               grid_values, round_to_grid)


def test_e2m1_grid_is_the_nvfp4_value_set():
    assert grid_values(ELEMENT_GRIDS["e2m1"]) == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@pytest.mark.parametrize("name,count,torch_dtype", [("e4m3", 127, torch.float8_e4m3fn), ("e5m2", 124, None)])
def test_fp8_grids_hold_every_finite_code(name, count, torch_dtype):
    values = grid_values(ELEMENT_GRIDS[name])
    assert len(values) == count  # e4m3: codes 0x00-0x7E; e5m2: 0x00-0x7B (0x7C is inf)
    assert values[-1] == ELEMENT_GRIDS[name].max
    if torch_dtype is not None:  # every code torch decodes as finite and non-negative is on the grid
        codes = torch.arange(0, 128, dtype=torch.uint8).view(torch_dtype).to(torch.float64)
        assert sorted(set(codes[torch.isfinite(codes)].tolist())) == values


@pytest.mark.parametrize("name", list(ELEMENT_GRIDS))
def test_every_representable_value_round_trips(name):
    grid = ELEMENT_GRIDS[name]
    v = torch.tensor(grid_values(grid), dtype=torch.float64)
    both = torch.cat([v, -v])
    assert torch.equal(round_to_grid(both, grid), both)


@pytest.mark.parametrize("name,torch_dtype", [("e4m3", torch.float8_e4m3fn), ("e5m2", torch.float8_e5m2)])
def test_rounding_matches_torchs_nearest_even_cast(name, torch_dtype):
    grid = ELEMENT_GRIDS[name]
    x = torch.randn(20000, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * grid.max / 8
    x32 = x.to(torch.float32).to(torch.float64)  # representable in float32: torch's cast rounds once
    expected = x32.clamp(-grid.max, grid.max).to(torch.float32).to(torch_dtype).to(torch.float64)
    assert torch.equal(round_to_grid(x32, grid), expected)


def test_e2m1_ties_go_to_even_and_large_values_saturate():
    grid = ELEMENT_GRIDS["e2m1"]
    x = torch.tensor([0.25, 0.75, 1.25, 2.5, 3.5, 5.0, 7.0, 1e9, -1e9], dtype=torch.float64)
    assert round_to_grid(x, grid).tolist() == [0.0, 1.0, 1.0, 2.0, 4.0, 4.0, 6.0, 6.0, -6.0]


@pytest.mark.parametrize("rule", ["floor", "ceil"])
def test_e8m0_scales_are_powers_of_two_in_range(rule):
    grid = ELEMENT_GRIDS["e4m3"]
    amax = torch.cat([torch.rand(1000, dtype=torch.float64) * 10.0 ** torch.randint(-30, 30, (1000,)),
                      torch.tensor([0.0, 1e-300, 1e300], dtype=torch.float64)])
    s = e8m0_scale(amax, grid, rule)
    m, e = torch.frexp(s)
    assert bool((m == 0.5).all())  # a power of two, nothing else
    assert bool(((e - 1 >= -127) & (e - 1 <= 127)).all())
    assert float(s[-3]) == 2.0**-127  # an all-zero block: the smallest E8M0 scale


def test_e8m0_floor_is_ocp_and_ceil_clips_nothing():
    grid = ELEMENT_GRIDS["e4m3"]
    amax = torch.tensor([1.0, 0.97, 448.0, 500.0], dtype=torch.float64)
    floor = e8m0_scale(amax, grid, "floor")
    assert floor.tolist() == [2.0**-8, 2.0**-9, 1.0, 1.0]  # 2**(floor(log2 amax) - 8)
    ceil = e8m0_scale(amax, grid, "ceil")
    assert bool((amax / ceil <= grid.max).all()) and bool((amax / ceil > grid.max / 2).all())


def test_all_zero_block_stays_zero_without_nan():
    x = torch.zeros(2, 64, dtype=torch.float64)
    x[1, :32] = torch.linspace(-1, 1, 32, dtype=torch.float64)
    for fmt in BLOCK_FORMATS:
        q = block_quantize(x, fmt)
        d = block_dequantize(q)
        assert bool(torch.isfinite(d).all()) and bool((d[0] == 0).all()) and bool((d[1, 32:] == 0).all())
        assert q.flushed == int(((d == 0) & (x != 0)).sum())  # the zero block adds nothing to what was flushed


def test_one_huge_value_costs_only_its_own_block():
    x = torch.rand(1, 256, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) + 0.5
    x[0, 3] = 1e6
    q = block_quantize(x, "mxfp8_e4m3", axis=-1)
    err = (block_dequantize(q) - x).abs() / x.abs()
    assert float(err[0, 32:].max()) <= ELEMENT_GRIDS["e4m3"].max / 448 * 2.0**-4  # other blocks: half an ulp
    assert float(err[0, :32].max()) > 2.0**-4  # its block's small values fell below the grid's precision
    assert q.scales.shape == (1, 8)


def test_nvfp4_tensor_scale_and_block_scales():
    x = torch.randn(4, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    q = block_quantize(x, "nvfp4")
    amax = float(x.abs().max())
    assert q.tensor_scale == pytest.approx(448 * 6 / amax, rel=1e-7)
    e4m3 = torch.tensor(grid_values(ELEMENT_GRIDS["e4m3"]), dtype=torch.float64)
    assert bool(torch.isin(q.scales, e4m3).all())  # every block scale is an E4M3 value
    assert bool(torch.isin(q.elements.abs(), torch.tensor(grid_values(ELEMENT_GRIDS["e2m1"]),
                                                          dtype=torch.float64)).all())
    assert q.scales.shape == (4, 4)
    assert block_quantization_error(x, q).rel_l2 < 0.2


def test_ocp_floor_saturates_and_ceil_does_not():
    x = torch.full((1, 32), 0.99, dtype=torch.float64)  # amax 0.99: 2**-9 * 448 < 0.99 under the floor rule
    floor = block_quantize(x, "mxfp8_e4m3")
    ceil = block_quantize(x, block_format("mxfp8_e4m3", scale_rule="ceil"))
    assert floor.saturated == 32 and ceil.saturated == 0
    assert block_quantization_error(x, ceil).rel_l2 < block_quantization_error(x, floor).rel_l2


def test_blocks_run_along_the_given_axis():
    x = torch.ones(64, 3, dtype=torch.float64)
    x[:32, 0] = 100.0
    q = block_quantize(x, "mxfp8_e4m3", axis=0)
    assert q.scales.shape == (2, 3)
    assert float(q.scales[0, 0]) > float(q.scales[1, 0]) == float(q.scales[0, 1])


def test_a_length_that_is_no_multiple_of_the_block_ends_in_a_short_block():
    x = torch.linspace(-3, 3, 40, dtype=torch.float64).reshape(1, 40)
    q = block_quantize(x, "mxfp8_e4m3")
    assert q.scales.shape == (1, 2) and block_dequantize(q).shape == (1, 40)


@pytest.mark.parametrize("kwargs,field", [
    ({"block_size": 64}, "block_size"), ({"block_size": 16}, "block_size"), ({"block_size": True}, "block_size"),
    ({"scale_format": "ue5m3"}, "scale_format"), ({"scale_rule": "nearest"}, "scale_rule"),
])
def test_formats_cudnn_does_not_know_are_refused_naming_the_field(kwargs, field):
    with pytest.raises(SpecError) as e:
        block_format("mxfp8_e4m3", **kwargs)
    assert e.value.field == field and ("must be" in e.value.allowed)


def test_bad_format_names_and_pairs():
    with pytest.raises(SpecError) as e:
        block_format("mxfp6")
    assert e.value.field == "fmt" and "nvfp4" in e.value.allowed
    with pytest.raises(SpecError) as e:
        BlockFormat("x", "e4m3", 16, "e4m3")
    assert e.value.field == "element"
    with pytest.raises(SpecError) as e:
        block_format("nvfp4", scale_rule="ceil")
    assert e.value.field == "scale_rule"


@pytest.mark.parametrize("bad,field", [([1.0, 2.0], "x"), (torch.tensor([1, 2]), "x"),
                                       (torch.tensor([1.0, math.inf]), "x"), (torch.tensor(1.0), "x")])
def test_bad_tensors_are_refused(bad, field):
    with pytest.raises(SpecError) as e:
        block_quantize(bad, "mxfp8_e4m3")
    assert e.value.field == field


def test_bad_axis_is_refused():
    with pytest.raises(SpecError) as e:
        block_quantize(torch.ones(2, 32), "mxfp8_e4m3", axis=2)
    assert e.value.field == "axis"


def test_bits_per_element():
    assert BLOCK_FORMATS["mxfp8_e4m3"].bits_per_element == 8.25
    assert BLOCK_FORMATS["nvfp4"].bits_per_element == 4.5
