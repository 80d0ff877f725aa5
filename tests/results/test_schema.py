"""results/schema.py: every plan column has one schema entry, and the plan columns, the loaders' dtype lists, the
frames' dtypes and the tables' headers all come from it."""

from __future__ import annotations

import dataclasses

import pytest

from cudnn_lab.plots.tables import ALL_COLUMN_TITLES
from cudnn_lab.results import PLAN_COLUMNS, loading, plans_frame, schema

PANDAS_DTYPE = {"int": "Int64", "float": "float64", "bool": "boolean", "text": "object"}


def test_every_plan_column_has_exactly_one_schema_entry() -> None:
    names = [c.name for c in schema.PLAN_SCHEMA]
    assert len(names) == len(set(names))
    assert tuple(names) == tuple(PLAN_COLUMNS)
    for name in PLAN_COLUMNS:
        entry = schema.column(name)
        assert entry.dtype in schema.DTYPES and entry.title and entry.doc, name


def test_the_loaders_dtype_lists_split_the_columns_as_the_schema_does() -> None:
    lists = {"int": loading.INT_COLUMNS, "float": loading.FLOAT_COLUMNS, "bool": loading.BOOL_COLUMNS,
             "text": loading.TEXT_COLUMNS}
    assert sorted(n for cols in lists.values() for n in cols) == sorted(PLAN_COLUMNS)
    for dtype, cols in lists.items():
        assert set(cols) == {c.name for c in schema.PLAN_SCHEMA if c.dtype == dtype}, dtype


def test_an_empty_plan_frame_has_each_columns_schema_dtype() -> None:
    frame = plans_frame([])
    assert tuple(frame.columns) == tuple(PLAN_COLUMNS)
    for c in schema.PLAN_SCHEMA:
        assert str(frame[c.name].dtype) == PANDAS_DTYPE[c.dtype], c.name


def test_table_titles_and_the_documented_schema_come_from_it() -> None:
    assert ALL_COLUMN_TITLES == {c.name: c.title for c in schema.PLAN_SCHEMA}
    table = schema.doc_table().splitlines()
    assert len(table) == 2 + len(PLAN_COLUMNS)
    assert all(f"| {name} |" in row for name, row in zip(PLAN_COLUMNS, table[2:]))
    assert schema.column("median_ms").unit == "ms" and schema.column("workspace_bytes").unit == "bytes"


def test_a_column_of_an_unknown_dtype_is_refused() -> None:
    with pytest.raises(ValueError, match="dtype must be one of"):
        schema.Column("x", "complex", "", "x", "x")
    with pytest.raises(ValueError, match="dtype must be one of"):
        schema.columns_of("complex")
    with pytest.raises(dataclasses.FrozenInstanceError):
        schema.column("plan").dtype = "int"  # type: ignore[misc]


def test_the_sweep_point_columns_come_from_the_schema() -> None:
    from cudnn_lab.sweeps import POINT_COLUMNS

    names = [c.name for c in schema.POINT_SCHEMA]
    assert tuple(names) == POINT_COLUMNS == schema.POINT_COLUMNS and len(set(names)) == len(names)
    assert not set(names) & set(PLAN_COLUMNS)  # a sweep frame holds both: no column means two things
    for name in names:
        entry = schema.point_column(name)
        assert entry.dtype in schema.DTYPES and entry.title and entry.doc, name
    numbers = set(schema.point_columns_of("int") + schema.point_columns_of("float"))
    assert {"flops", "sm_count", "ceiling_tflops", "point_s"} <= numbers
    assert numbers <= set(loading.SWEEP_NUMBER_COLUMNS)  # the loader checks what the schema calls a number


def test_a_points_rows_have_the_schemas_dtypes() -> None:
    from cudnn_lab.errors import SpecError
    from cudnn_lab.sweeps.points import invalid_row, typed_point

    frame = typed_point(plans_frame([{"plan": "eng0"}]).assign(
        point_id="p", flops=12, sm_count=None, is_pick=True, ceiling_tflops=700, cudnn=91900))
    for name in ("point_id", "flops", "sm_count", "is_pick", "ceiling_tflops", "cudnn"):
        assert str(frame[name].dtype) == PANDAS_DTYPE[schema.point_column(name).dtype], name
    assert str(frame["median_ms"].dtype) == "float64" and str(frame["engine_id"].dtype) == "Int64"  # the plan's
    refused = invalid_row(SpecError("n", 0, "must be at least 1"))
    for name in refused.columns:
        assert str(refused[name].dtype) == PANDAS_DTYPE[schema.point_column(name).dtype], name


def test_the_sweep_reports_point_table_is_titled_from_the_schema() -> None:
    import cudnn_lab as cl
    from cudnn_lab.report import sweep_report_html

    text = sweep_report_html(cl.load_results("h100_fp8_gemm"))
    for name in ("op", "label"):
        assert f">{schema.point_column(name).title}</th>" in text
