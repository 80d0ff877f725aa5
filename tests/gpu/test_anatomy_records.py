"""Plan anatomy without a GPU: knob-range checks, engine-space sampling, the 'did anything beat the heuristics'
answer, note-filter messages read per plan, and kernel records (the GPU parts are in test_anatomy_gpu.py)."""

from __future__ import annotations

import pytest

from cudnn_lab.errors import OptionError, PlanError
from cudnn_lab.gpu.engine_space import EngineInfo, neighbours, sample_configs, space_size
from cudnn_lab.gpu.kernels import KernelStat, PlanKernels, split_segments, summarize
from cudnn_lab.gpu.notes import NotesResult, classify
from cudnn_lab.gpu.pin import KnobRange, check_config, status_of
from cudnn_lab.results.anatomy import answer_text, beat_heuristics, knob_points

# Engine 62's knobs as get_knobs_for_engine reported them for an NHWC fp16 3x3 conv on an H100 (GPU_FACTS).
E62 = EngineInfo(62, True, "", (KnobRange("TILE_SIZE", 0, 23), KnobRange("TILEK", 0, 3), KnobRange("IDX_MODE", 0, 1),
                                KnobRange("WORKSPACE", 0, 1), KnobRange("TILE_CGA_M", 1, 8),
                                KnobRange("TILE_CGA_N", 1, 8)))
E7 = EngineInfo(7, True, "", (KnobRange("KERNEL_CFG", 0, 40, 2), KnobRange("NOT_SET", 0, 3)))
E90 = EngineInfo(90, False, "NOT_SUPPORTED_ARCH_MISMATCH")
PROPOSED = "eng62_k2=0_k13=1_k18=0_k25=1_k27=8_k28=1"


def test_knob_values_outside_the_engine_range_name_engine_knob_and_range():
    check_config(62, E62.knobs, {"TILE_SIZE": 23, "TILEK": 0})
    with pytest.raises(PlanError) as err:
        check_config(62, E62.knobs, {"TILE_SIZE": 24})
    assert "engine 62" in str(err.value) and "TILE_SIZE=24" in str(err.value) and "0..23" in str(err.value)
    assert (err.value.engine_id, err.value.knob, err.value.allowed) == (62, "TILE_SIZE", "0..23")
    with pytest.raises(PlanError, match="steps of 2"):
        check_config(7, E7.knobs, {"KERNEL_CFG": 3})
    with pytest.raises(PlanError, match="engine 62 has no knob STAGES; its knobs are: TILE_SIZE 0..23"):
        check_config(62, E62.knobs, {"STAGES": 1})


def test_backend_status_names_are_read_from_messages():
    assert status_of("get_knobs_for_engine failed: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (3007)") == \
        "NOT_SUPPORTED_ARCH_MISMATCH"
    assert status_of("nothing here") == ""


def test_engine_records_count_settable_configurations():
    assert E62.configs == 24 * 4 * 2 * 2 * 8 * 8
    assert E7.configs == 21 and E7.unnamed == 1 and E90.configs == 0
    assert space_size([E62, E7, E90]) == E62.configs + 21


def test_neighbourhood_moves_one_knob_one_step():
    base = {"TILE_SIZE": 0, "TILEK": 1, "IDX_MODE": 0, "WORKSPACE": 1, "TILE_CGA_M": 8, "TILE_CGA_N": 1}
    nbrs = neighbours(E62, base)
    assert all(sum(n[k] != base[k] for k in base) == 1 for n in nbrs)
    assert any(n["TILE_SIZE"] == 1 for n in nbrs) and any(n["TILE_CGA_M"] == 7 for n in nbrs)
    assert not any(n["TILE_SIZE"] == -1 or n["TILE_CGA_M"] == 9 for n in nbrs)  # ranges hold
    assert len(nbrs) == 1 + 2 + 1 + 1 + 1 + 1


def test_sample_excludes_proposals_neighbours_first_then_random_within_budget():
    configs = sample_configs([E62, E7, E90], [PROPOSED], budget=40, seed=3, version=91900)
    assert len(configs) == 40 and len({c.key for c in configs}) == 40
    proposed_values = (62, tuple(sorted({"TILE_SIZE": 0, "TILEK": 1, "IDX_MODE": 0, "WORKSPACE": 1,
                                         "TILE_CGA_M": 8, "TILE_CGA_N": 1}.items())))
    assert proposed_values not in {c.key for c in configs}
    assert configs[0].origin == f"neighbour of {PROPOSED}"
    assert any(c.origin == "random" for c in configs)
    assert all(c.engine_id != 90 for c in configs)  # never an engine that cannot run here
    assert all(k.allows(c.values[k.name]) for c in configs for k in
               {62: E62, 7: E7}[c.engine_id].settable)
    assert all("NOT_SET" not in c.values for c in configs)
    assert configs == sample_configs([E62, E7, E90], [PROPOSED], budget=40, seed=3, version=91900)
    assert sample_configs([E62], [PROPOSED], budget=0) == []
    assert configs[0].backend_knobs().keys() <= {2, 13, 18, 25, 27, 28}


# Engine 45 as the small-conv heuristics propose it: KBLOCK (backend k5) has no frontend name, so it reads NOT_SET.
E45 = EngineInfo(45, True, "", (KnobRange("TILE_SIZE", 0, 8), KnobRange("NOT_SET", 0, 4), KnobRange("STAGES", 2, 6)))
PROPOSED_45 = "eng45_k2=7_k5=3_k14=5"


def test_proposals_whose_knobs_all_carry_over_are_explored_first_then_near_them():
    from cudnn_lab.gpu.engine_space import keeps_all_knobs, ordered_proposals, proposal_values

    assert keeps_all_knobs(PROPOSED, E62, 91900) and not keeps_all_knobs(PROPOSED_45, E45, 91900)
    order = [name for name, _, _ in ordered_proposals([E62, E45, E90], [PROPOSED_45, "eng90_k2=1", PROPOSED], 91900)]
    assert order == [PROPOSED, PROPOSED_45]  # engine 90 cannot run here
    # A budget of 12 with the heuristics' first proposal on engine 45 (whose neighbours lose KBLOCK=3) still
    # starts from engine 62's neighbourhood, and its random half draws near engine 62's proposal.
    configs = sample_configs([E62, E45, E7, E90], [PROPOSED_45, PROPOSED], budget=12, seed=0, version=91900)
    assert len(configs) == 12
    assert [c.origin for c in configs[:7]] == [f"neighbour of {PROPOSED}"] * 7
    near = [c for c in configs if c.origin == f"random near {PROPOSED}"]
    assert near and all(c.engine_id == 62 for c in near)
    base = proposal_values(PROPOSED, E62, 91900)
    assert all(sum(c.values[k] != v for k, v in base.items()) <= 2 for c in near)
    assert any(c.origin == "random" for c in configs)


def test_sampling_stops_when_the_space_is_exhausted():
    tiny = EngineInfo(1, True, "", (KnobRange("KERNEL_CFG", 0, 2),))
    configs = sample_configs([tiny], ["eng1_k24=0"], budget=50)
    assert sorted(c.values["KERNEL_CFG"] for c in configs) == [1, 2]


def test_did_anything_beat_the_heuristics_and_by_how_much():
    rows = [{"plan": "eng1", "proposed": True, "median_ms": 0.050, "status": "ok", "pass_cudnn": True},
            {"plan": "eng2", "proposed": True, "median_ms": 0.060, "status": "ok", "pass_cudnn": True},
            {"plan": "eng3_x", "proposed": False, "median_ms": 0.040, "status": "ok", "pass_cudnn": True},
            {"plan": "eng4_fast_but_wrong", "proposed": False, "median_ms": 0.010, "status": "ok",
             "pass_cudnn": False},
            {"plan": "eng5", "proposed": False, "median_ms": None, "status": "build_failed"}]
    answer = beat_heuristics(rows)
    assert answer["beaten"] is True and answer["best_other"]["plan"] == "eng3_x"
    assert answer["speedup"] == pytest.approx(1.25) and answer["explored"] == 1
    assert answer_text(answer).startswith("Yes: eng3_x") and "25.0%" in answer_text(answer)
    slower = beat_heuristics(rows[:2] + [{**rows[2], "median_ms": 0.055}])
    assert slower["beaten"] is False and answer_text(slower).startswith("No:")
    assert beat_heuristics(rows[:2])["beaten"] is None


@pytest.mark.parametrize("option,bad", [("explore", -1), ("explore", 1.5), ("explore", True), ("explore", 10**9),
                                        ("explore_time_s", 0), ("kernels", 1), ("notes", "yes")])
def test_anatomy_options_are_checked(option, bad):
    from cudnn_lab.options import RunOptions

    with pytest.raises(OptionError, match=option):
        RunOptions.coerce(None, **{option: bad})
    opts = RunOptions.coerce({"explore": 200, "explore_time_s": 30})
    assert (opts.explore, opts.explore_time_s, opts.kernels, opts.notes) == (200, 30.0, True, True)
    assert RunOptions.from_dict(opts.to_dict()) == opts


def test_cli_refuses_a_bad_exploration_budget_before_the_gpu(tmp_path, capsys):
    import cudnn_lab as cl
    from cudnn_lab import cli

    spec = tmp_path / "spec.json"
    spec.write_text(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8).to_json())
    assert cli.main(["run", str(spec), "--explore", "-3"]) == 2
    assert "explore" in capsys.readouterr().err


def test_note_filter_failure_message_is_read_plan_by_plan():
    message = ("[cudnn_frontend] Error: No execution plans support the graph.\n"
               "Plan at index 0: [cudnn_frontend] Error: Skipping plan since workspace violation. Requires 0\n"
               "Plan at index 1: Deselecting execution plan\n"
               "Plan at index 2: [cudnn_frontend] Error: Skipping plan since shared memory violation. Requires 9\n"
               "Plan at index 3: Deselecting execution plan")
    assert classify(message) == {0: True, 1: False, 2: None, 3: False}
    assert classify("No execution plans support the graph.") == {}
    result = NotesResult(notes={"eng1": ("TENSOR_CORE",), "eng2": ()}, unknown={"eng3": ("FFT",)})
    assert result.of("eng1") == "TENSOR_CORE" and result.of("eng2") == "" and result.of("eng3") == "?"


def test_kernel_timeline_is_cut_at_markers_and_summarised_per_execution():
    fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(...)"
    t = "void cudnn::engines_precompiled::nchwToNhwcKernel<__half>(...)"
    x = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroup"
    ev = [(0, 1, fill, "kernel")]
    clock = 10
    for _ in range(2):  # plan A: two runs of transpose, transpose, gemm
        for name, dur in ((t, 3000), (t, 4000), (x, 18000)):
            ev.append((clock, clock + dur, name, "kernel"))
            clock += dur + 100
    ev.append((clock, clock + 1, fill, "kernel"))
    ev.append((clock + 10, clock + 2010, "Memset (Device)", "memset"))
    ev.append((clock + 3000, clock + 3001, fill, "kernel"))
    segs = split_segments(list(reversed(ev)), 2)
    assert [len(s) for s in segs] == [6, 1]
    stats = summarize(segs[0], runs=2)
    assert [(s.name, s.count) for s in stats] == [(t, 2.0), (x, 1.0)]
    assert stats[0].us == pytest.approx(3.5) and stats[1].us == pytest.approx(18.0)
    pk = PlanKernels(stats, runs=2)
    assert pk.kernel_ms == pytest.approx(0.025) and pk.kernel_count == 3
    back = PlanKernels.from_json(pk.to_json())
    assert back.kernels[0].name == t and back.kernel_ms == pytest.approx(0.025)
    assert split_segments(ev[:-1], 2) is None  # a missing marker: no attribution rather than a wrong one
    assert PlanKernels(error="x").kernel_ms is None
    assert KernelStat("k", "kernel", 2, 1.5).to_dict()["count"] == 2


def test_engine_space_points_name_each_knob_of_each_plan():
    rows = [{"plan": PROPOSED, "engine_id": 62, "proposed": True, "median_ms": 0.05, "status": "ok"},
            {"plan": "eng8", "engine_id": 8, "proposed": False, "median_ms": 0.2, "status": "ok"}]
    pts = knob_points(rows, 91900)
    assert len(pts) == 6 + 1
    assert {(p["knob"], p["value"]) for p in pts if p["plan"] == PROPOSED} >= {("TILE_SIZE", 0), ("TILE_CGA_M", 8)}
    assert [p for p in pts if p["plan"] == "eng8"][0]["knob"] is None
    assert all(p["proposed"] is (p["plan"] == PROPOSED) for p in pts)


def test_pin_plan_is_public_and_light_to_import():
    import subprocess
    import sys

    code = ("import sys, cudnn_lab as cl; from cudnn_lab.gpu.pin import pin_plan; assert cl.pin_plan is pin_plan; "
            "print('torch' in sys.modules, 'cudnn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]  # no torch or cudnn until a pin is made


@pytest.mark.parametrize(("spec", "nodes"), [
    (dict(epilogue=("bias", "relu")), 3), (dict(epilogue=()), 1)])
def test_fused_graphs_are_not_explored_where_exploring_them_crashed(spec, nodes):
    """Exploring a conv+bias+relu graph's engine space took the process down on cuDNN 9.19 (FINDINGS): the kit
    refuses it there with a reason that says what to explore instead, and explores single-node graphs."""
    import cudnn_lab as cl
    from cudnn_lab.gpu.engine_space import FUSED_EXPLORE_CRASHES_UP_TO, explore_refusal

    graph = cl.build_graph(cl.ConvSpec(n=2, c=8, h=8, w=8, k=8, r=3, s=3, padding=1, **spec))
    count = len(graph.inspect()["nodes"])
    assert count == nodes
    refused = explore_refusal(count, 91900)
    if nodes > 1:
        assert refused and "9.19" in refused and "epilogue=()" in refused
        assert explore_refusal(count, FUSED_EXPLORE_CRASHES_UP_TO + 1) is None
    else:
        assert refused is None
    assert explore_refusal(count, None) is None  # no cuDNN version known: nothing to hold against it


def test_a_run_asked_to_explore_a_fused_graph_on_9_19_is_refused_before_any_gpu_work():
    """The runner's exploration step (gpu/anatomy.explore_rows) reads the proposals' real frontend graph, sees three
    nodes and returns the refusal as the engine-space record, with no rows: nothing reaches cuDNN's engine list."""
    import types

    import cudnn_lab as cl
    from cudnn_lab.gpu.anatomy import explore_rows
    from cudnn_lab.gpu.plans import PlanEntry

    spec = cl.ConvSpec(n=2, c=8, h=8, w=8, k=8, r=3, s=3, padding=1, epilogue=("bias", "relu"))
    entry = PlanEntry(name="eng0", engine_id=0, knobs={}, graph=cl.build_graph(spec), index=0)
    sess = types.SimpleNamespace(entries=[entry])  # a session holds its proposals; nothing else is read here
    rows, space, histograms = explore_rows(spec, cl.RunOptions(explore=8), sess, ["eng0"], measure=None,
                                           make_row=None, version=91900)
    assert rows == [] and histograms == {}
    assert space["error"].startswith("not explored: on cuDNN 9.19") and "3 nodes" in space["error"]
