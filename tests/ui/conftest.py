"""Recordings made on real GPUs and shipped in cudnn_lab/data: what the Lab's result views are tested with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lab_samples import CONV_RECORDING, MATMUL_RECORDING

import cudnn_lab as cl


@pytest.fixture
def recorded_result() -> Any:
    return cl.load_results(CONV_RECORDING)


@pytest.fixture
def matmul_result() -> Any:
    return cl.load_results(MATMUL_RECORDING)


@pytest.fixture
def recorded_path(tmp_path: Path, recorded_result: Any) -> Path:
    """The conv recording saved as a file elsewhere (the Lab loads a path as it loads a name)."""
    return recorded_result.save(tmp_path / "conv.json")
