"""Which backend wins where (results/backend_map.py): the tie rule, the JSON table's round trip and its checks, and
the map read from a sweep frame's ``baselines`` cells. The times below are inputs to the decision logic, stated here;
the recorded map from a GPU is checked in test_backend_map_recorded.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError, OptionError
from cudnn_lab.results import metrics
from cudnn_lab.results.backend_map import CONTENDERS, BackendMap, MapRow, backend_map, has_backends, shape_label
from cudnn_lab.results.result_checks import check_cell
from cudnn_lab.sweeps.points import other_baselines

SHAPE = {"direction": "fwd_inference", "dtype": "bf16", "batch": 1, "heads": 32, "kv_heads": 8, "seq_q": 2048,
         "seq_kv": 2048, "head_dim": 128, "head_dim_v": None, "causal": True}


def test_the_fastest_wins_by_its_margin_over_the_next() -> None:
    row = MapRow.decide(SHAPE, {"cudnn": 1.0, "sdpa_flash": 1.2, "sdpa_math": 5.0}, {}, metrics.TIE_REL)
    assert row.winner == "cudnn" and row.tied == ("cudnn",) and row.verdict == "cudnn"
    assert row.margin == pytest.approx(0.2)


def test_times_within_the_tie_rule_tie_and_the_margin_skips_them() -> None:
    row = MapRow.decide(SHAPE, {"cudnn": 1.0, "sdpa_flash": 1.02, "sdpa_math": 2.0}, {}, 0.03)
    assert row.winner == "cudnn" and set(row.tied) == {"cudnn", "sdpa_flash"}
    assert row.verdict.startswith("tie:") and row.margin == pytest.approx(1.0)
    strict = MapRow.decide(SHAPE, {"cudnn": 1.0, "sdpa_flash": 1.02}, {}, 0.0)
    assert strict.tied == ("cudnn",) and strict.margin == pytest.approx(0.02)


def test_a_shape_nothing_ran_has_no_winner() -> None:
    row = MapRow.decide(SHAPE, {}, {"cudnn": "no plan ran", "sdpa_flash": "head dim"}, 0.03)
    assert row.winner is None and row.verdict == "none ran" and row.margin is None


def _map() -> BackendMap:
    rows = (MapRow.decide(SHAPE, {"cudnn": 1.0, "sdpa_flash": 1.5}, {"sdpa_cudnn": "GQA"}, 0.03, 1.4),
            MapRow.decide({**SHAPE, "seq_q": 512, "seq_kv": 512}, {"cudnn": 0.3, "sdpa_flash": 0.2}, {}, 0.03))
    return BackendMap("NVIDIA H200", 91900, rows, 0.03, "2.11.0", "2026-11-29T07:00:00+00:00")


def test_the_json_table_round_trips_and_says_who_wins() -> None:
    bmap = _map()
    back = BackendMap.from_dict(json.loads(bmap.to_json()))
    assert back == bmap
    assert bmap.wins()["cudnn"] == 1 and bmap.wins()["flash"] == 1
    assert bmap.rows[0].backend_margin == pytest.approx(0.5) and bmap.rows[0].kit_vs_pytorch_cudnn is None
    assert "faster in" not in bmap.summary() and "cudnn 1, flash 1" in bmap.summary()
    assert bmap.winner_for(seq_q=512).winner == "sdpa_flash"
    assert bmap.winner_for(seq_q=999) is None
    frame = bmap.frame()
    assert list(frame["verdict"]) == ["cudnn", "sdpa_flash"] and "sdpa_math_ms" in frame.columns


def test_a_lookup_by_an_unknown_field_names_it() -> None:
    with pytest.raises(OptionError, match="seq_len"):
        _map().winner_for(seq_len=512)


@pytest.mark.parametrize("damage, field", [
    (lambda d: d.update(kind="something else"), "kind"),
    (lambda d: d.update(tie_rel=float("nan")), "tie_rel"),
    (lambda d: d.update(rows=[]), "rows"),
    (lambda d: d["rows"][0]["ms"].update(cudnn=-1.0), "rows[0].ms.cudnn"),
    (lambda d: d["rows"][0]["ms"].update(triton=1.0), "rows[0].ms.triton"),
    (lambda d: d["rows"][0].update(winner="sdpa_flash"), "rows[0].winner"),
    (lambda d: d["rows"][1].update(batch=0), "rows[1].batch"),
    (lambda d: d["rows"][1].update(causal="yes"), "rows[1].causal"),
    (lambda d: d.update(gpu=""), "gpu"),
    (lambda d: d["rows"][0].update(backend="flash"), "rows[0].backend"),
    (lambda d: d.update(contenders="junk"), "contenders"),
])
def test_a_damaged_table_is_refused_naming_the_field(damage, field) -> None:
    data = json.loads(_map().to_json())
    damage(data)
    with pytest.raises(DataError) as e:
        BackendMap.from_dict(data, source="map.json")
    assert field in str(e.value) and "map.json" in str(e.value)


def _frame(cells: list[str | None]) -> pd.DataFrame:
    """A sweep frame's columns that backend_map reads, one plan row per point (what cl.sweep writes)."""
    rows = []
    for i, cell in enumerate(cells):
        rows.append({"point_id": f"p{i}", "op": "sdpa", "point_status": "ok", "plan": "eng0", "status": "ok",
                     "median_ms": 1.0 + i, "is_best": True, "is_pick": True, "gpu": "NVIDIA H200", "cudnn": 91900,
                     "torch_off_ms": 1.1, "baselines": cell, "created": "2026-11-29T07:00:00+00:00",
                     "spec": json.dumps({**SHAPE, "seq_q": 512 << i, "seq_kv": 512 << i}),
                     **{f"spec_{k}": v for k, v in {**SHAPE, "seq_q": 512 << i, "seq_kv": 512 << i}.items()}})
    return pd.DataFrame(rows)


def test_the_map_of_a_sweep_reads_each_points_baselines_cell() -> None:
    torch_info = {"benchmark_off_ms": 1.1, "benchmark_off_iqr_ms": 0.01, "sdpa_flash_ms": 0.5,
                  "sdpa_flash_iqr_ms": 0.01, "sdpa_cudnn_error": "PyTorch's CUDNN_ATTENTION backend refused this "
                  "shape: GQA", "grouped_mm_ms": 2.0, "grouped_mm_iqr_ms": 0.1}
    cell = other_baselines(torch_info)
    assert set(json.loads(cell)) == {"sdpa_flash", "sdpa_cudnn", "grouped_mm"}  # the eager op has its own columns
    assert check_cell("sweep.parquet", "baselines", "baselines", cell) == json.loads(cell)
    frame = _frame([cell, json.dumps({"sdpa_flash": {"ms": 9.0, "iqr_ms": 0.1}})])
    assert has_backends(frame)
    bmap = backend_map(frame)
    assert [r.winner for r in bmap.rows] == ["sdpa_flash", "cudnn"]
    assert bmap.rows[0].refused["sdpa_cudnn"].endswith("GQA") and bmap.rows[0].pytorch_default_ms == 1.1
    assert bmap.gpu == "NVIDIA H200" and bmap.cudnn == 91900


def test_a_sweep_without_backends_is_told_how_to_get_them() -> None:
    assert not has_backends(_frame([None]))
    with pytest.raises(OptionError, match="backends=True"):
        backend_map(_frame([None]))


@pytest.mark.parametrize("cell, field", [
    (json.dumps({"sdpa_flash": {"ms": -1.0, "iqr_ms": 0.0}}), "sdpa_flash.ms"),
    (json.dumps({"sdpa_flash": {"ms": "fast"}}), "sdpa_flash.ms"),
    (json.dumps({"sdpa_flash": {"error": 3}}), "sdpa_flash.error"),
    (json.dumps(["sdpa_flash"]), "baselines"),
])
def test_a_damaged_baselines_cell_is_refused_naming_the_field(cell, field) -> None:
    with pytest.raises(DataError, match=field.replace(".", r"\.")):
        check_cell("sweep.parquet", "baselines", "baselines", cell)


def test_backends_need_the_baseline_and_enter_the_point_id_only_when_asked() -> None:
    with pytest.raises(OptionError, match="backends"):
        cl.RunOptions(baselines=False, backends=True)
    from cudnn_lab.sweeps.points import id_settings
    assert "backends" not in id_settings(cl.RunOptions().to_dict())
    assert id_settings(cl.RunOptions(backends=True).to_dict())["backends"] is True


def test_a_tie_between_the_kits_plan_and_pytorchs_cudnn_path_is_a_cudnn_win() -> None:
    row = MapRow.decide(SHAPE, {"cudnn": 1.0, "sdpa_cudnn": 1.01, "sdpa_flash": 1.6}, {}, 0.03)
    assert row.backend == "cudnn" and row.verdict.startswith("tie:") and row.backend_margin == pytest.approx(0.6)
    assert row.kit_vs_pytorch_cudnn == pytest.approx(1.01)
    mixed = MapRow.decide(SHAPE, {"cudnn": 1.0, "sdpa_flash": 1.01}, {}, 0.03)
    assert mixed.backend == "tie" and mixed.backend_margin is None


def test_the_recorded_map_decides_every_shape_and_says_the_kit_against_pytorch() -> None:
    """The map shipped from a GPU (data/backend_maps) and the sweep it came from agree (one rule, read twice)."""
    from cudnn_lab.results.backend_map import recorded_maps

    maps = recorded_maps()
    assert maps, "no backend map ships"
    for bmap in maps:
        assert len(bmap.rows) >= 60 and all(r.winner is not None for r in bmap.rows)
        sweep = cl.load_results(cl.results.SWEEPS_DIR / "h200_attention_backends.parquet")
        again = backend_map(sweep, tie_rel=bmap.tie_rel)
        assert [r.to_dict() for r in again.rows] == [r.to_dict() for r in bmap.rows]
        assert "PyTorch's cuDNN path" in bmap.summary()


def test_shape_labels_name_what_differs() -> None:
    assert shape_label(SHAPE) == "b1 h32/8 s2048 d128 causal fwd_inference"
    assert set(CONTENDERS) >= {"cudnn", "sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_math"}


def test_the_cli_says_the_map_and_writes_its_table(tmp_path, capsys) -> None:
    from cudnn_lab.cli import main

    out = tmp_path / "map.json"
    assert main(["backend-map", "h200_attention_backends", "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert "shapes won by backend" in said and f"saved {out}" in said
    assert BackendMap.from_dict(json.loads(out.read_text())).rows
    assert main(["backend-map", "h100_standard"]) != 0
    assert "backends=True" in capsys.readouterr().err
