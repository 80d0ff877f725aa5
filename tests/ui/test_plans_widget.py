"""The Plans table widget fed the shipped 244-plan recording: cells formatted by the kit's formatters, raw sort keys
(numbers sort numerically, missing last, again to reverse), the filter, the pick and best marks, the CSV."""

from __future__ import annotations

import csv
import io

import pytest

import cudnn_lab as cl
from cudnn_lab.plots.tables import plan_table, plan_table_rows, us_text
from cudnn_lab.results import metrics
from cudnn_lab.ui.plans_widget import PlansTable


@pytest.fixture(scope="module")
def big():
    return cl.load_results("h100_conv_nhwc_fp16")


@pytest.fixture
def table(big) -> PlansTable:
    t = PlansTable()
    t.show_result(big)
    return t


def col(table: PlansTable, title: str) -> int:
    return [c["title"] for c in table.columns].index(title)


def test_rows_carry_the_kits_formatted_cells_and_raw_keys(big, table: PlansTable) -> None:
    assert len(table.rows) == len(big.plans) == 244
    compact = plan_table(big)
    m = col(table, "median (µs)")
    for row, (_, want) in zip(table.rows, compact.iterrows()):
        assert row["cells"][m] == want["median (µs)"]  # plots.tables' formatting, as the static table
    ok = [r for r in table.rows if r["status"] == "ok"]
    assert all(isinstance(r["keys"][m], float) for r in ok)
    assert all(r["keys"][m] is None for r in table.rows if r["status"] != "ok")
    assert all(us_text(r["keys"][m]) == r["cells"][m] for r in ok)
    assert table.pick == str(metrics.pick(big.plans)["plan"]) and table.best == str(metrics.best(big.plans)["plan"])
    assert table.pick != table.best  # this recording's pick is not the fastest: both are marked
    assert table.csv_name.endswith(".csv")


def test_sorting_is_numeric_reversible_and_keeps_missing_last(big, table: PlansTable) -> None:
    m = col(table, "median (µs)")
    table.sort_by("median (µs)")
    shown = table.rows_shown()
    times = [r["keys"][m] for r in shown if r["keys"][m] is not None]
    assert times == sorted(times) and len(times) == int((big.plans["status"] == "ok").sum())
    assert all(r["keys"][m] is None for r in shown[len(times):])  # failed plans last
    assert shown[0]["plan"] == table.best  # the fastest passing plan is first here
    table.sort_by("median (µs)", descending=True)
    again = [r["keys"][m] for r in table.rows_shown() if r["keys"][m] is not None]
    assert again == sorted(times, reverse=True)
    w = col(table, "workspace")
    table.sort_by("workspace")  # '131 B' < '2.00 KiB' < '1.50 MiB' by bytes, not by text
    ws = [r["keys"][w] for r in table.rows_shown() if r["keys"][w] is not None]
    assert ws == sorted(ws)
    table.sort_by(None)
    assert table.plans_shown() == [r["plan"] for r in table.rows]
    with pytest.raises(cl.OptionError):
        table.sort_by("speed")


def test_the_filter_matches_any_column(table: PlansTable) -> None:
    table.filter_text = "eng62"
    assert table.rows_shown() and all("eng62" in r["plan"] for r in table.rows_shown())
    table.filter_text = "runtime_compilation"  # a behaviour note, case-blind
    assert len(table.rows_shown()) == 3
    table.filter_text = "refused"
    assert table.rows_shown() and all(r["status"] != "ok" for r in table.rows_shown())
    table.filter_text = "no such plan"
    assert table.rows_shown() == []


def test_csv_is_the_table_as_shown(table: PlansTable) -> None:
    table.filter_text = "eng62"
    table.sort_by("median (µs)", descending=True)
    rows = list(csv.reader(io.StringIO(table.csv())))
    assert rows[0] == [c["title"] for c in table.columns]
    assert [r[0] for r in rows[1:]] == table.plans_shown()
    assert rows[1][col(table, "median (µs)")] == table.rows_shown()[0]["cells"][col(table, "median (µs)")]


def test_no_result_is_an_empty_table() -> None:
    columns, rows = plan_table_rows(None)
    assert rows == [] and [c["key"] for c in columns][:2] == ["plan", "rank"]
    t = PlansTable()
    t.show_result(None)
    assert t.rows == [] and t.pick is None and t.csv().count("\n") == 1
