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
