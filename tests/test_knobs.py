"""The backend knob table: plan names decoded by backend number, replayed through the frontend by name."""

import glob
import json
import os

import pytest

from cudnn_lab import knobs
from cudnn_lab.errors import PlanError

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "cudnn_lab", "data", "recorded")


def test_plan_name_decodes_to_named_knobs_of_the_backend_enum():
    assert knobs.parse_plan_name("eng62_k2=0_k13=1_k18=0_k25=1_k27=8_k28=1") == (
        62, {2: 0, 13: 1, 18: 0, 25: 1, 27: 8, 28: 1})
    assert knobs.named("eng62_k2=0_k13=1_k18=0_k25=1_k27=8_k28=1", 91900) == {
        "TILE_SIZE": 0, "TILEK": 1, "IDX_MODE": 0, "WORKSPACE": 1, "TILE_CGA_M": 8, "TILE_CGA_N": 1}
    assert knobs.label("eng4_k24=27", "9.19.0") == "KERNEL_CFG=27"
    assert knobs.label("eng8", 91900) == ""
    # an operation tag before the engine (as the frontend's logs print it) is allowed
    assert knobs.parse_plan_name("ConvFwd_Add_Add_eng15_k5=1_k6=0") == (15, {5: 1, 6: 0})
    assert knobs.parse_plan_name("sdpa_fwd_prefill_sm100[TILE_M=128]") is None


def test_every_form_of_a_knob_key_means_the_same_backend_knob():
    import cudnn

    forms = [{"k13": 1}, {13: 1}, {"13": 1}, {"TILEK": 1}, '{"k13": 1}', "eng3_k13=1", {cudnn.knob_type.TILEK: 1}]
    assert all(knobs.backend_numbers(f) == {13: 1} for f in forms)
    # the frontend member TILEK is numbered 6 in the frontend; mapping it by value would be wrong
    assert int(cudnn.knob_type.TILEK.value) != 13


def test_unknown_numbers_are_shown_never_guessed():
    (k,) = knobs.decode({"k47": 3}, 91900)
    assert not k.known and k.label == "k47=3 (unknown knob type in cuDNN 9.19.0)"
    # numbers added after the cuDNN in use are unknown in it
    assert knobs.decode("eng1_k43=1", "9.17.0")[0].name is None
    assert knobs.decode("eng1_k43=1", "9.18.0")[0].name == "SWAP_AB"
    assert knobs.decode("eng1_k44=1", 91900)[0].name is None
    assert knobs.decode("eng1_k44=1", 92200)[0].name == "INPUT_TMA_ENABLE"
    assert knobs.known_count(92200) == 46 and knobs.known_count(91900) == 44


def test_the_table_is_dense_and_append_only():
    assert [k.number for k in knobs.KNOB_TYPES] == list(range(len(knobs.KNOB_TYPES)))
    since = [k.since for k in knobs.KNOB_TYPES]
    assert since == sorted(since)  # a later number never predates an earlier one
    assert knobs.BY_NUMBER[13].name == "TILEK" and knobs.BY_NUMBER[25].name == "WORKSPACE"
    assert all(k.meaning for k in knobs.KNOB_TYPES)


def test_frontend_names_match_the_installed_frontend():
    import cudnn

    members = {n for n, m in cudnn.knob_type.__members__.items()
               if n != "NOT_SET" and int(m.value) < 1000}
    assert members == knobs.FRONTEND_1_32_NAMES
    assert members <= set(knobs.BY_NAME)


def test_replay_maps_backend_numbers_to_frontend_members_by_name():
    import cudnn

    fe = knobs.frontend_knobs("eng62_k2=0_k13=1_k18=0_k25=1_k27=8_k28=1", cudnn.knob_type, 91900, engine_id=62)
    assert fe == {cudnn.knob_type.TILE_SIZE: 0, cudnn.knob_type.TILEK: 1, cudnn.knob_type.IDX_MODE: 0,
                  cudnn.knob_type.WORKSPACE: 1, cudnn.knob_type.TILE_CGA_M: 8, cudnn.knob_type.TILE_CGA_N: 1}
    assert knobs.from_frontend(fe) == {2: 0, 13: 1, 18: 0, 25: 1, 27: 8, 28: 1}


@pytest.mark.parametrize("number,name", [(0, "SPLIT_K"), (16, "CTA_SPLIT_K_MODE"), (32, "NUM_C_PER_BLOCK")])
def test_knobs_without_a_frontend_name_cannot_be_replayed_and_say_which(number, name):
    import cudnn

    with pytest.raises(PlanError) as err:
        knobs.frontend_knobs({f"k{number}": 1, "k2": 3}, cudnn.knob_type, 91900, engine_id=7)
    assert f"k{number}" in str(err.value) and name in str(err.value) and "engine 7" in str(err.value)
    assert not knobs.replayable({f"k{number}": 1})
    assert knobs.replayable({"k2": 3, "k13": 0})


def test_unknown_number_cannot_be_replayed():
    import cudnn

    with pytest.raises(PlanError, match="k47"):
        knobs.frontend_knobs({"k47": 1}, cudnn.knob_type, 91900)


@pytest.mark.parametrize("bad", [{"FOO": 1}, {"k2": "x"}, {"k2": 1.5}, "not a name {", 42])
def test_bad_knob_input_is_a_plan_error(bad):
    with pytest.raises(PlanError):
        knobs.backend_numbers(bad)
    assert knobs.safe_label(bad) == str(bad)  # tables over recorded data show it as it is, never fail


def test_versions_parse_from_every_recorded_form():
    assert knobs.parse_version(91900) == knobs.parse_version("9.19.0") == knobs.parse_version((9, 19)) == (9, 19, 0)
    assert knobs.parse_version("9.19") == (9, 19, 0)
    assert knobs.parse_version(None) is None and knobs.parse_version("n/a") is None


def test_every_recorded_plan_decodes_fully_and_agrees_with_its_knobs_column():
    files = sorted(glob.glob(os.path.join(DATA, "*.json")))
    assert files
    seen = 0
    for path in files:
        with open(path) as f:
            data = json.load(f)
        version = data["device"]["cudnn_backend"]
        for row in data["plans"]:
            parsed = knobs.parse_plan_name(row["plan"])
            if parsed is None:
                continue
            assert parsed[0] == row["engine_id"]
            assert knobs.backend_numbers(row["knobs"]) == parsed[1]
            assert all(k.known for k in knobs.decode(row["plan"], version)), row["plan"]
            seen += 1
    assert seen > 20


def test_header_enum_parses_and_is_checked_against_the_table():
    header = """
    typedef enum {
        CUDNN_KNOB_TYPE_SPLIT_K CUDNN_DEPRECATED_ENUM = 0,
        CUDNN_KNOB_TYPE_SWIZZLE                       = 1,
        CUDNN_KNOB_TYPE_TILE_SIZE                     = 2,
        CUDNN_KNOB_TYPE_USE_TEX CUDNN_DEPRECATED_ENUM = 3,  /* comment, with a comma */
        CUDNN_KNOB_TYPE_EDGE                          = 4,
        CUDNN_KNOB_TYPE_COUNTS,
    } cudnnBackendKnobType_t;
    """
    enum = knobs.parse_header(header)
    assert enum == {"SPLIT_K": 0, "SWIZZLE": 1, "TILE_SIZE": 2, "USE_TEX": 3, "EDGE": 4, "COUNTS": 5}
    problems = knobs.check_against_header(enum, 91900)
    assert any("KBLOCK" in p for p in problems)  # the table has more than this cut-down header
    assert any("COUNTS is 5" in p for p in problems)
    full = {k.name: k.number for k in knobs.KNOB_TYPES if k.since <= (9, 19, 0)} | {"COUNTS": 44}
    assert knobs.check_against_header(full, 91900) == []
    assert knobs.check_against_header(full | {"TILEK": 14}, 91900)


def test_plan_labels_for_tables():
    assert knobs.plan_label("eng4_k24=27", 91900) == "KERNEL_CFG=27"
    assert knobs.plan_label("eng8") == ""
    assert knobs.plan_label("sdpa_fwd_prefill_sm90[TILE_M=128, TILE_N=64]") == "TILE_M=128, TILE_N=64"
    assert knobs.plan_label("cudnnPoolingForward") == "" and knobs.plan_label(None) == ""
