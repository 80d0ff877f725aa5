"""Plan anatomy on a real GPU: knob names against the installed header, pinning a non-first plan (same kernel, same
numbers), kernels per plan (CUPTI), numerical notes by filtering, determinism, and the engine space."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab import kernel_names, knobs
from cudnn_lab.errors import PlanError

pytestmark = pytest.mark.gpu

NHWC = cl.ConvSpec(n=8, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
NCHW = cl.ConvSpec(n=8, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NCHW", dtype="fp16")
FP32_NCHW = cl.ConvSpec(n=4, c=32, h=28, w=28, k=32, r=3, s=3, padding=1, layout="NCHW", dtype="fp32")


class Bench:
    """Inputs, NaN-poisoned outputs, a stream-bound handle and a workspace for one spec (what a session holds)."""

    def __init__(self, spec):
        import cudnn
        import torch

        from cudnn_lab.reference import make_inputs, make_outputs

        self.spec = spec
        self.handle = cudnn.create_handle()
        self.stream = torch.cuda.Stream()
        cudnn.set_stream(handle=self.handle, stream=self.stream.cuda_stream)
        self.inputs = make_inputs(spec, device="cuda", seed=0)
        self.outputs = make_outputs(spec, device="cuda")
        self.workspace = torch.empty(1, dtype=torch.uint8, device="cuda")
        self.stream.wait_stream(torch.cuda.current_stream())  # the NaN fill above is on the default stream

    def heuristics(self, modes=("A", "FALLBACK")):
        import cudnn

        lab = cl.build_graph(self.spec, handle=self.handle)
        g = lab.pygraph
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([getattr(cudnn.heur_mode, m) for m in modes])
        return lab

    def call(self, lab, index):
        import torch

        g = lab.pygraph
        size = int(g.get_workspace_size_plan_at_index(index))
        if size > self.workspace.numel():
            self.workspace = torch.empty(size, dtype=torch.uint8, device="cuda")
        feed = {lab.tensors[n]: t for n, t in {**self.inputs, **self.outputs}.items()}
        ws, handle = self.workspace, self.handle

        def run():
            g.execute_plan_at_index(feed, ws, index=index, handle=handle)

        return run

    def output_after(self, run):
        import torch

        main = next(iter(self.outputs.values()))
        with torch.cuda.stream(self.stream):
            main.fill_(float("nan"))
            run()
        self.stream.synchronize()
        return main.clone()


def _built(lab, limit=None):
    g = lab.pygraph
    out = []
    for i in range(g.get_execution_plan_count() if limit is None else min(limit, g.get_execution_plan_count())):
        try:
            g.build_plan_at_index(i)
            out.append(i)
        except Exception:  # noqa: BLE001 - plans that do not build here are not under test
            pass
    return out


def test_knob_table_matches_the_installed_cudnn_header():
    import cudnn

    import nvidia  # the nvidia-cudnn wheel's namespace package

    roots = [os.path.join(p, "cudnn", "include") for p in getattr(nvidia, "__path__", [])]
    headers = [h for r in roots for h in sorted(glob.glob(os.path.join(r, "cudnn_backend*.h")))
               + sorted(glob.glob(os.path.join(r, "cudnn_graph*.h")))]
    enums = [e for e in (knobs.parse_header(Path(h).read_text(errors="replace")) for h in headers) if e]
    if not enums:
        pytest.skip(f"no cudnnBackendKnobType_t in the wheel's headers ({headers or 'none found under ' + str(roots)})")
    assert knobs.check_against_header(enums[0], cudnn.backend_version()) == []


def test_every_proposed_plan_decodes_to_named_knobs_agreeing_with_the_frontend():
    import cudnn

    bench = Bench(NHWC)
    lab = bench.heuristics()
    g = lab.pygraph
    version = cudnn.backend_version()
    assert g.get_execution_plan_count() > 1
    for i in range(g.get_execution_plan_count()):
        name = g.get_plan_name_at_index(i)
        engine_id, fe = g.get_engine_and_knobs_at_index(i)
        parsed = knobs.parse_plan_name(name)
        assert parsed is not None and parsed[0] == engine_id, name
        decoded = knobs.decode(name, version)
        assert all(k.known for k in decoded), name
        # what the frontend could name agrees with the name's backend numbers
        assert knobs.from_frontend(fe).items() <= parsed[1].items(), (name, fe)


def test_pinning_a_non_first_plan_gives_the_same_kernel_and_the_same_numbers():
    import cudnn
    import torch

    from cudnn_lab.gpu.kernels import profile_plans
    from cudnn_lab.gpu.pin import pin_plan

    bench = Bench(NHWC)
    lab = bench.heuristics()
    g = lab.pygraph
    version = cudnn.backend_version()
    built = _built(lab, limit=12)
    chosen = next(i for i in built if i > 0 and knobs.replayable(g.get_plan_name_at_index(i), version,
                                                                  knobs.enum_names(cudnn.knob_type)))
    name = g.get_plan_name_at_index(chosen)
    original = bench.call(lab, chosen)
    expected = bench.output_after(original)

    pinned = pin_plan(NHWC, plan=name, handle=bench.handle)
    assert pinned.name == name and pinned.engine_id == knobs.parse_plan_name(name)[0]
    assert pinned.index == pinned.lab.pygraph.get_execution_plan_count() - 1
    again = bench.call(pinned.lab, pinned.index)
    got = bench.output_after(again)
    assert torch.equal(got.view(torch.int16), expected.view(torch.int16))  # bit for bit

    kernels = profile_plans({"original": original, "pinned": again}, bench.stream, runs=3)
    names_a = [k.name for k in kernels["original"].kernels]
    names_b = [k.name for k in kernels["pinned"].kernels]
    assert names_a and names_a == names_b

    # the same plan by (engine id, knobs by name) as the course pins it
    by_pair = pin_plan(NHWC, pinned.engine_id, knobs.named(name, version), handle=bench.handle)
    assert by_pair.name == name


def test_pinning_refuses_bad_engines_and_knobs_naming_engine_knob_and_range():
    from cudnn_lab.gpu.pin import engine_count, engine_knobs, pin_plan, prepared_graph

    bench = Bench(NHWC)
    g = prepared_graph(NHWC, bench.handle).pygraph
    count = engine_count(g)
    with pytest.raises(PlanError, match=rf"engine {count + 5} .*0\.\.{count - 1}"):
        pin_plan(NHWC, count + 5, {}, handle=bench.handle)
    runnable = None
    for eid in range(count):
        try:
            ranges = [r for r in engine_knobs(g, eid) if r.settable]
        except PlanError:
            continue
        if ranges:
            runnable = (eid, ranges[0])
            break
    assert runnable is not None
    eid, r = runnable
    with pytest.raises(PlanError) as err:
        pin_plan(NHWC, eid, {r.name: r.max + r.step}, handle=bench.handle)
    assert f"engine {eid}" in str(err.value) and r.name in str(err.value) and r.allowed in str(err.value)
    with pytest.raises(PlanError, match="k16.*CTA_SPLIT_K_MODE"):
        pin_plan(NHWC, eid, {"k16": 1}, handle=bench.handle)


def test_kernels_per_plan_show_the_nchw_transposes_and_a_kernel_time():
    from cudnn_lab.gpu.kernels import profile_plans

    bench = Bench(NCHW)
    lab = bench.heuristics()
    g = lab.pygraph
    built = _built(lab, limit=6)
    calls = {g.get_plan_name_at_index(i): bench.call(lab, i) for i in built}
    found = profile_plans(calls, bench.stream, runs=3)
    assert set(found) == set(calls)
    ran = {n: k for n, k in found.items() if not k.error}
    assert ran, {n: k.error for n, k in found.items()}
    for pk in ran.values():
        assert pk.kernel_ms > 0 and pk.kernel_count >= 1
    kinds = {kernel_names.read(k.name).kind for pk in ran.values() for k in pk.kernels}
    assert "transpose" in kinds, [k.name for pk in ran.values() for k in pk.kernels]
    # CUPTI's start is a one-time process cost, recorded apart and not paid again
    from cudnn_lab.gpu.kernels import cupti_first_use_s, start_cupti

    assert cupti_first_use_s() is not None and cupti_first_use_s() > 0
    assert start_cupti() == 0.0


def test_numerical_notes_by_filtering_and_determinism():
    import torch

    from cudnn_lab.gpu.notes import check_determinism, numeric_notes

    bench = Bench(FP32_NCHW)
    lab = bench.heuristics()
    g = lab.pygraph
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    result = numeric_notes(FP32_NCHW, bench.handle, ("A", "FALLBACK"))
    assert not result.errors, result.errors
    assert set(names) <= set(result.notes), set(names) - set(result.notes)
    tensor_core = [n for n in names if "TENSOR_CORE" in result.notes[n]]
    assert tensor_core and len(tensor_core) < len(names)  # fp32 conv: TF32 tensor-core plans and others
    built = _built(lab)
    # under a filter that keeps only TENSOR_CORE plans, a TENSOR_CORE plan still builds and another is deselected
    import cudnn

    check = bench.heuristics()
    check.pygraph.select_numeric_notes([cudnn.numerical_note.TENSOR_CORE])
    check.pygraph.build_plan_at_index(next(i for i in built if names[i] in tensor_core))
    other = next((i for i in built if names[i] not in tensor_core), None)
    if other is not None:
        with pytest.raises(Exception, match="(?i)deselect|excluded"):  # the frontend's own error type
            check.pygraph.build_plan_at_index(other)

    plain = next(i for i in built if "NONDETERMINISTIC" not in result.notes[names[i]])
    verdict = check_determinism(bench.call(lab, plain), bench.outputs, bench.stream, runs=3)
    assert verdict.deterministic is True and verdict.differing == 0 and verdict.runs == 3, (names[plain], verdict)
    assert verdict.unwritten == 0, (names[plain], verdict)
    assert torch.isfinite(next(iter(bench.outputs.values()))).all()


def test_engine_space_lists_every_engine_and_explores_beyond_the_proposals():
    import cudnn
    import torch

    from cudnn_lab.gpu.engine_space import Explorer, explore, keeps_all_knobs, sample_configs

    bench = Bench(NHWC)
    lab = bench.heuristics()
    g = lab.pygraph
    version = cudnn.backend_version()
    proposals = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    reference = bench.output_after(bench.call(lab, _built(lab, limit=1)[0])).float()

    explorer = Explorer(NHWC, bench.handle)
    engines = explorer.engines
    by_id = {e.engine_id: e for e in engines}
    assert len(engines) > 10
    assert any(e.runnable and e.settable for e in engines)
    assert all(e.reason for e in engines if not e.runnable)
    configs = sample_configs(engines, proposals, budget=16, seed=0, version=version)
    assert len(configs) == 16
    # a small budget starts from the neighbourhood of a proposal whose knobs all carry over
    first = configs[0].origin.removeprefix("neighbour of ")
    assert first in proposals and keeps_all_knobs(first, by_id[configs[0].engine_id], version), configs[0]
    cands = explorer.append(configs, known=proposals, version=version)
    assert len(cands) == 16 and all(c.name or c.status == "refused" for c in cands)
    assert not any(c.name in proposals and c.status == "proposed" for c in cands)
    for c in cands:
        if c.status == "refused":  # the kit's message names the engine and the knobs it was given
            assert f"engine {c.config.engine_id}" in c.error and "refused" in c.error, c.error

    def evaluate(c):
        explorer.lab.pygraph.build_plan_at_index(c.index)
        out = bench.output_after(bench.call(explorer.lab, c.index)).float()
        c.status = "ok" if torch.allclose(out, reference, rtol=2e-2, atol=2e-2) else "wrong"

    progress = []
    explore(cands, evaluate, time_budget_s=60, progress=lambda i, n, msg: progress.append((i, n)))
    assert progress and progress[-1][0] == progress[-1][1]
    outcome = [(c.config.origin, c.name, c.status, c.error[:120]) for c in cands]
    # Configurations beyond the proposals that cuDNN ran, with the right numbers. Neighbours of one proposal may all
    # be refused (on an H100, 2026-11-25, every neighbour of engine 22 was): what was sampled near the others counts.
    ran_beyond = [c for c in cands if c.status == "ok" and c.config.origin != "random"]
    assert ran_beyond, outcome
    assert all(c.name not in proposals for c in ran_beyond)
    assert not any(c.status == "wrong" for c in cands), outcome


def test_a_run_records_knob_names_kernels_notes_determinism_and_explored_plans(tmp_path):
    from cudnn_lab.cli import plan_table
    from cudnn_lab.results.anatomy import kernels_table

    result = cl.run(NCHW, plans="all", max_plans=8, explore=6, explore_time_s=60, baselines=False)
    plans = result.plans
    ok = result.ok
    proposed = ok[ok["proposed"].astype(bool)]
    assert not proposed.empty
    assert proposed["knob_names"].str.len().gt(0).any()
    assert proposed["kernel_ms"].notna().all() and (proposed["kernel_ms"] > 0).all()
    assert proposed["launch_gap_ms"].notna().all()
    assert proposed["deterministic"].notna().all()
    assert proposed["numeric_notes"].notna().any()
    assert "transpose" in set(kernels_table(proposed)["kind"])  # NCHW: layout transposes around the NHWC kernel
    explored = plans[~plans["proposed"].astype(bool)]
    assert len(explored) >= 1 and explored["origin"].str.len().gt(0).all()
    assert not set(explored["plan"]) & set(plans[plans["proposed"].astype(bool)]["plan"])
    assert result.engine_space["engines"] and result.engine_space["sampled"] == 6
    assert result.exploration["best_proposed"] is not None
    back = cl.RunResult.load(result.save(tmp_path / "r.json"))
    assert back.plans["kernels"].equals(plans["kernels"]) and back.engine_space == result.engine_space
    assert "knob_names" in plan_table(back).columns
    # a repeated run reuses the session's anatomy (same plans, same kernels)
    again = cl.run(NCHW, plans="all", max_plans=8, baselines=False)
    same = again.ok.set_index("plan")["kernels"].dropna()
    assert (same == proposed.set_index("plan")["kernels"].reindex(same.index)).all()
