"""RunOptions(kernel_cache=...): validated, reaching the CLI, on by default for sweeps over one dimension, and part
of a sweep point's id only when set (stores written before it still resume). No GPU needed."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.cli import _parser, _run_overrides
from cudnn_lab.errors import OptionError
from cudnn_lab.options import RunOptions
from cudnn_lab.sweeps.points import id_settings, point_id
from cudnn_lab.sweeps.runner import with_kernel_cache


def test_default_is_none_and_bools_round_trip() -> None:
    assert RunOptions().kernel_cache is None
    for value in (True, False):
        opts = RunOptions(kernel_cache=value)
        assert opts.kernel_cache is value and RunOptions.from_dict(opts.to_dict()) == opts


@pytest.mark.parametrize("bad", [1, 0, "yes", "True", 1.0, [True]])
def test_anything_else_is_refused_naming_the_field(bad) -> None:
    with pytest.raises(OptionError, match="kernel_cache") as e:
        RunOptions(kernel_cache=bad)
    assert "True or False" in str(e.value)
    with pytest.raises(OptionError, match="kernel_cache"):
        RunOptions().replace(kernel_cache=bad)


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_the_cli_flag_turns_it_on(command: str, tmp_path) -> None:
    args = _parser().parse_args([command, str(tmp_path / "x.json"), "--kernel-cache"])
    assert _run_overrides(args)["kernel_cache"] is True
    plain = _parser().parse_args([command, str(tmp_path / "x.json")])
    assert "kernel_cache" not in _run_overrides(plain)


def test_sweeps_over_one_dimension_use_it_unless_told() -> None:
    base = RunOptions()
    assert with_kernel_cache(base, {"n": [1, 2]}).kernel_cache is True
    assert with_kernel_cache(base, {"n": [1, 2], "m": [3]}).kernel_cache is None  # two dimensions: off (None)
    assert with_kernel_cache(base, {}).kernel_cache is None
    assert with_kernel_cache(base.replace(kernel_cache=False), {"n": [1, 2]}).kernel_cache is False


def test_point_ids_change_with_it_only_when_set() -> None:
    spec = cl.MatmulSpec(m=64, n=64, k=64, dtype="bf16")
    plain = id_settings(RunOptions().to_dict())
    assert "kernel_cache" not in plain  # a store written before the option existed still resumes
    on = id_settings(RunOptions(kernel_cache=True).to_dict())
    off = id_settings(RunOptions(kernel_cache=False).to_dict())
    ids = {point_id(spec, s, "H100") for s in (plain, on, off)}
    assert len(ids) == 3
