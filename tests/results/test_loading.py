"""The loading layer on good files: specs, sweep descriptions, Lab states and results read back as written."""

from __future__ import annotations

import json

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError
from cudnn_lab.results import loading


def test_spec_file_round_trip(tmp_path) -> None:
    spec = cl.SdpaSpec(batch=2, heads=4, seq_q=64, seq_kv=64, head_dim=64, causal=True)
    (tmp_path / "s.json").write_text(spec.to_json(), encoding="utf-8")
    assert loading.read_spec_file(tmp_path / "s.json") == spec


def test_spec_file_with_a_bom_reads(tmp_path) -> None:
    (tmp_path / "s.json").write_bytes(b"\xef\xbb\xbf" + cl.ConvSpec().to_json().encode())
    assert loading.read_spec_file(tmp_path / "s.json") == cl.ConvSpec()


def test_spec_file_with_a_bad_field_names_file_and_field(tmp_path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({**cl.ConvSpec().to_dict(), "padding": -3}))
    with pytest.raises(DataError, match=r"s\.json'?: field spec: .*padding=-3"):
        loading.read_spec_file(tmp_path / "s.json")


def test_sweep_file_gives_specs_over_and_options(tmp_path) -> None:
    data = {"spec": cl.ConvSpec().to_dict(), "over": {"n": [1, 8], "layout": ["NCHW", "NHWC"]},
            "plans": "heuristic", "heuristics": ["A"], "time_cap_s": 0.1}
    (tmp_path / "w.json").write_text(json.dumps(data))
    sweep = loading.read_sweep_file(tmp_path / "w.json")
    assert sweep["spec"] == cl.ConvSpec() and sweep["over"]["n"] == [1, 8]
    assert sweep["options"] == {"plans": "heuristic", "heuristics": ["A"], "time_cap_s": 0.1}


def test_sweep_file_of_several_specs(tmp_path) -> None:
    specs = [cl.MatmulSpec(m=64), cl.MatmulSpec(m=128)]
    (tmp_path / "w.json").write_text(json.dumps({"specs": [s.to_dict() for s in specs], "over": {"k": [64]}}))
    assert loading.read_sweep_file(tmp_path / "w.json")["spec"] == specs


@pytest.mark.parametrize("data, needle", [
    ({"over": {}}, '"spec"'),
    ({"spec": {"op": "conv"}, "specs": []}, '"spec"'),
    ({"spec": {"op": "conv"}, "over": {"nope": [1]}}, "over.nope"),
    ({"spec": {"op": "conv"}, "over": {"n": 8}}, "over.n"),
    ({"spec": {"op": "conv"}, "over": {"n": []}}, "over.n"),
    ({"spec": {"op": "conv"}, "plans": "some"}, "plans"),
    ({"spec": {"op": "conv"}, "bogus": 1}, "bogus"),
    ({"specs": []}, "specs"),
    ([1, 2], "object"),
])
def test_bad_sweep_descriptions_name_the_key(tmp_path, data, needle) -> None:
    (tmp_path / "w.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=needle):
        loading.read_sweep_file(tmp_path / "w.json")


STATE = {"version": 1, "spec": cl.ConvSpec().to_dict(), "view": "Graph", "selected": None,
         "run": {"heuristics": ["A"], "plans": "all", "timing": "auto", "cold_l2": False}, "source": "live",
         "recorded": None}


def test_state_file_round_trip(tmp_path) -> None:
    (tmp_path / "lab.json").write_text(json.dumps(STATE))
    assert loading.read_state_file(tmp_path / "lab.json", views=("Graph", "Plans")) == STATE


@pytest.mark.parametrize("change, needle", [
    ({"version": 2}, "version"), ({"spec": {"op": "conv", "n": 0}}, "field spec"), ({"view": 3}, "view"),
    ({"view": "Nope"}, "view"), ({"selected": 5}, "selected"), ({"source": "gpu"}, "source"),
    ({"run": {"plans": "most"}}, "run.plans"), ({"run": {"bogus": 1}}, "run.bogus"), ({"run": []}, "run"),
    ({"recorded": ["x"]}, "recorded"),
])
def test_bad_states_name_the_field(tmp_path, change, needle) -> None:
    (tmp_path / "lab.json").write_text(json.dumps({**STATE, **change}))
    with pytest.raises(DataError, match=needle):
        loading.read_state_file(tmp_path / "lab.json", views=("Graph", "Plans"))


def test_state_without_spec_is_refused() -> None:
    with pytest.raises(DataError, match="field spec: is missing"):
        loading.check_state({"version": 1}, "state")


def test_result_file_checked_against_the_schema_reads_back(tmp_path) -> None:
    result = cl.load_results("h200_conv_nhwc_fp16")
    data = loading.read_result_file(result.save(tmp_path / "r.json"))
    assert data["schema"] == loading.SCHEMA_VERSION and len(data["plans"]) == len(result.plans)


def test_read_json_allows_large_but_sane_integers(tmp_path) -> None:
    (tmp_path / "n.json").write_text(json.dumps({"bytes": 2**62, "neg": -(2**62)}))
    assert loading.read_json(tmp_path / "n.json", "test JSON") == {"bytes": 2**62, "neg": -(2**62)}
