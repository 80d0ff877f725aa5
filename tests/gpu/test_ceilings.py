"""gpu/ceilings.py: the record (no GPU) and the measured roofline on the device (GPU)."""

from __future__ import annotations

import pytest

from cudnn_lab.gpu.ceilings import Ceilings


def test_ridge_point_is_where_the_roofs_meet() -> None:
    c = Ceilings(dtype="fp16", tflops=800.0, gbps=4000.0, matmul_size=8192, copy_bytes=1 << 30)
    assert c.ridge_flop_per_byte == pytest.approx(200.0)
    assert c.to_dict() == {"dtype": "fp16", "tflops": 800.0, "gbps": 4000.0, "matmul_size": 8192,
                           "copy_bytes": 1 << 30, "tflops_iqr": None, "gbps_iqr": None, "samples": None,
                           "measured": "", "source": "measured now"}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_measured_ceilings_are_plausible_and_cached(dtype: str) -> None:
    from cudnn_lab.gpu.ceilings import measure_ceilings

    c = measure_ceilings(dtype, 0, size=4096, copy_mib=256)
    assert 1.0 < c.tflops < 5000.0  # TFLOP/s of any GPU the kit runs on
    assert 50.0 < c.gbps < 20000.0  # GB/s of its memory
    assert c.dtype == dtype and c.copy_bytes == 256 << 20
    assert measure_ceilings(dtype, 0, size=4096, copy_mib=256).tflops == c.tflops
    assert c.tflops_iqr is not None and c.tflops_iqr >= 0 and c.samples and c.measured
