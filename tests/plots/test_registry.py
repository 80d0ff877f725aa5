"""The one registry of views (cudnn_lab/plots/registry.py): every entry (a run's figures, a sweep's, the what-if
answers' tables and figure) draws for the shipped recordings of its kind (made on real GPUs), and the views the Lab,
the HTML report and the CLI show are exactly the registry's."""

from __future__ import annotations

import ipywidgets as W
import pytest

import cudnn_lab as cl
from cudnn_lab.cli import REPORT_TEXT
from cudnn_lab.errors import OptionError
from cudnn_lab.plots.registry import (ENTRIES, RUN_FIGURES, SOURCES, VIEWS, ViewEntry, entries, entry,
                                      figures_of_view, run_figure)
from cudnn_lab.provenance import provenance
from cudnn_lab.reference.block_formats import BLOCK_FORMATS
from cudnn_lab.report import REPORT_SOURCES, _figures
from cudnn_lab.results.metrics import cell_text
from cudnn_lab.ui.figures import FigureHost
from cudnn_lab.ui.results_view import ANATOMY_FIGURES, RESULT_FIGURES, ResultView
from cudnn_lab.ui.status import Busy, StatusLog
from cudnn_lab.ui.sweepview import SWEEP_FIGURES, compare_pair
from cudnn_lab.ui.whatif_view import WhatIfView
from cudnn_lab.whatif.block_formats import block_format_whatif, recorded_block_scale_answers
from cudnn_lab.whatif.devices import targets
from cudnn_lab.whatif.heuristics import compare, drift, recorded_whatifs
from cudnn_lab.whatif.scaling import recorded_scalings
from cudnn_lab.whatif.versions import recorded_run_drifts

RUNS = sorted(cl.recorded_datasets().query("kind == 'run'")["name"])
#: An explored frontend graph, a classic call (pooling) and a recording without an engine-space sample.
SAMPLES = ("h100_conv_nhwc_fp16", "h100_pool_max_fp16", "h200_conv_nhwc_fp16_bias_relu")


def _title(fig: object) -> str:
    return fig.layout.title.text.split("<br>")[0]  # type: ignore[attr-defined]


def test_names_are_unique_and_every_view_and_title_is_given() -> None:
    names = [f.name for f in RUN_FIGURES]
    assert len(names) == len(set(names)) and all(f.title and f.view for f in RUN_FIGURES)
    assert [f.name for view in VIEWS for f in figures_of_view(view)] == names  # a view's figures are adjacent
    assert run_figure("roofline").view == "Roofline"
    with pytest.raises(KeyError, match="latency"):
        run_figure("nonesuch")


@pytest.mark.parametrize("name", RUNS)
def test_every_entry_draws_for_a_shipped_recording(name: str) -> None:
    result = cl.load_results(name)
    for figure in RUN_FIGURES:
        if figure.applies(result):
            assert _title(figure.draw(result, None)), (name, figure.name)  # the Lab's plan pick: tests/ui


def test_a_figure_a_result_does_not_have_would_not_draw() -> None:
    result = cl.load_results("h200_conv_nhwc_fp16_bias_relu")  # recorded without an engine-space sample
    unsampled = [f for f in RUN_FIGURES if not f.applies(result)]
    assert [f.view for f in unsampled] == ["Anatomy", "Anatomy"]
    for figure in unsampled:
        with pytest.raises(OptionError, match="no engine-space sample"):
            figure.draw(result, None)


def test_the_lab_shows_the_registrys_figures_in_their_views() -> None:
    log = StatusLog(W)
    host = FigureHost(W, log)
    view = ResultView(W, host, log)
    assert set(RESULT_FIGURES + ANATOMY_FIGURES) == {f.name for f in RUN_FIGURES} == set(host.figures)
    for figure in RUN_FIGURES:
        assert host.pane(figure.name) in view.views[figure.view].children, figure.name
    for name in SAMPLES:
        result = cl.load_results(name)
        view.show(result, provenance(result, recorded=True, name=name), result.spec)
        wanted = {f.name for f in RUN_FIGURES if f.applies(result) and not f.said_instead(result)}
        assert set(host.figures) == wanted, name
        for figure in RUN_FIGURES:
            if figure.name in wanted:
                assert _title(host.figures[figure.name]) == _title(figure.draw(result, view.selected)), name
    assert log.messages == []


@pytest.mark.parametrize("name", SAMPLES)
def test_the_report_shows_the_registrys_figures(name: str) -> None:
    result = cl.load_results(name)
    wanted = [_title(f.draw(result, None)) for f in RUN_FIGURES if f.in_report and f.applies(result)]
    assert [_title(f) for f in _figures(result)] == wanted and wanted


def test_the_cli_names_every_view_its_report_holds() -> None:
    for e in ENTRIES:
        shown = e.in_report and e.source not in ("sweep pair",)
        assert (e.title in REPORT_TEXT) == shown, e.name


# ------------------------------------------------------------------------------------- sweep and what-if entries

SWEEPS = sorted(cl.recorded_datasets().query("kind == 'sweep'")["name"])
#: A matmul small enough to emulate on the CPU in a test.
SMALL_MATMUL = cl.MatmulSpec(batch=1, m=64, n=32, k=128, dtype="bf16")


def test_every_entry_is_typed_and_named_once() -> None:
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names)) and all(e.title for e in ENTRIES)
    assert {e.source for e in ENTRIES} == set(SOURCES)  # every source has a view, every view a known source
    assert {e.kind for e in ENTRIES} == {"figure", "table"}
    assert entry("sm_scaling").kind == "figure" and entry("whatif_compare").kind == "table"
    assert [e.name for e in entries("compare")] == ["whatif_label", "whatif_compare", "whatif_refusals"]
    with pytest.raises(KeyError, match="whatif_compare"):
        entry("nonesuch")
    with pytest.raises(KeyError, match="sm scaling"):
        entries("nonesuch")
    with pytest.raises(OptionError, match="source"):
        ViewEntry("x", "X", "", lambda a: a, source="forecast?")
    with pytest.raises(OptionError, match="kind"):
        ViewEntry("x", "X", "", lambda a: a, source="drift", kind="picture")


def _per_op(frame: object) -> list[object]:
    ops = dict.fromkeys(cell_text(v) for v in frame["op"])  # type: ignore[index]
    return [frame[frame["op"].map(cell_text) == op] for op in ops if op]  # type: ignore[index]


def _sweep_answers() -> list[tuple[str, object]]:
    out = []
    for name in SWEEPS:
        frame = cl.load_results(name)
        out += [(name, frame)] + [(f"{name} op {i}", rows) for i, rows in enumerate(_per_op(frame))]
    return out


def _answers(source: str) -> list[tuple[str, object]]:
    """(id, answer) for every shipped recording of ``source``'s kind (cudnn_lab/data)."""
    names = list(dict.fromkeys(t.name for t in targets()))
    specs = list({w.spec.label(): w.spec for w in recorded_whatifs()}.values())
    if source == "sweep":
        return _sweep_answers()
    if source == "sweep pair":
        pair = compare_pair(cl.recorded_datasets(kind="sweep"))
        assert pair is not None
        return [(" vs ".join(pair), tuple(cl.load_results(n) for n in pair))]
    if source == "compare":
        return [(spec.label(), compare(spec, names, recorded=True)) for spec in specs]
    if source == "whatif":
        return [(f"{w.spec.label()} {w.target}", w) for spec in specs[:6]
                for w in compare(spec, names, recorded=True).attrs["answers"]]
    if source == "drift":
        out = []
        for spec in specs:
            for name in ("h100", "h200"):
                try:
                    out.append((f"{spec.label()} {name}", drift(spec, 91400, name)))
                except cl.NoGPUError:  # the older version was not recorded for this problem on this GPU
                    pass
        return out
    if source == "run drift":
        return [(d.old.spec.label(), d) for d in recorded_run_drifts()]
    if source == "sm scaling":
        return [(r.spec.label(), r) for r in recorded_scalings()]
    if source == "block answers":
        answers = recorded_block_scale_answers()
        return [("all", answers)] + [(op, [a for a in answers if a.spec.op == op])
                                     for op in dict.fromkeys(a.spec.op for a in answers)]
    if source == "block whatif":
        return [(fmt, block_format_whatif(SMALL_MATMUL, fmt)) for fmt in BLOCK_FORMATS]
    if source == "forecast":
        from cudnn_lab.whatif.forecasts import forecasts_for

        return [(spec.label(), forecasts_for(spec, names)) for spec in specs]
    raise AssertionError(f"no shipped answers listed for source {source!r}: add them here")


@pytest.mark.parametrize("view", [e for e in ENTRIES if e.source != "run"], ids=lambda e: e.name)
def test_every_sweep_and_whatif_entry_draws_for_the_shipped_recordings_of_its_kind(view: ViewEntry) -> None:
    answers = _answers(view.source)
    assert answers, view.source
    drawn = 0
    for name, answer in answers:
        if not view.applies(answer):
            continue
        out = view.draw(*answer) if view.source == "sweep pair" else view.draw(answer)
        if view.kind == "figure":
            assert _title(out), (view.name, name)
        else:
            assert isinstance(out, str) and (out == "" or out.lstrip().startswith("<")), (view.name, name)
            drawn += bool(out)
        drawn += view.kind == "figure"
    assert drawn, f"{view.name} drew nothing for any shipped {view.source}"


def test_the_sweep_view_and_the_sweep_report_draw_the_registrys_sweep_entries() -> None:
    assert {e.name for e in SWEEP_FIGURES.values()} == {e.name for e in entries(view="Sweep")}
    assert all(SWEEP_FIGURES[e.name] is e for e in entries(view="Sweep"))
    from cudnn_lab.report import _sweep_figures

    frame = cl.load_results(SWEEPS[0])
    wanted = [_title(e.draw(rows)) for e in entries("sweep", section="figures")
              for rows in (_per_op(frame) if e.per_op else [frame]) if e.applies(rows)]
    assert [_title(f) for f in _sweep_figures(frame)] == wanted and wanted


def test_the_whatif_view_has_a_part_for_every_whatif_entry() -> None:
    log = StatusLog(W)
    scaled = recorded_scalings()[0]
    shown = [scaled.spec]  # the recorded SM-scaling problem first, then one with recorded heuristics' answers
    view = WhatIfView(W, log=log, busy=Busy(), spec=lambda: shown[0], result=lambda: None, shown=lambda: True)
    view.show()
    assert set(view.parts) == {e.name for e in entries(view="What-if")}
    figure = view.sm_figure.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert _title(entry("sm_scaling").draw(scaled)) in figure["layout"]["title"]["text"]  # the registry's figure
    shown[0] = cl.load_results("h100_conv_nhwc_fp16_bias_relu").spec
    view.refresh()
    assert view.frame is not None and view.table_html.value == entry("whatif_compare").draw(view.frame)
    assert view.label_html.value == entry("whatif_label").draw(view.frame)
    assert view.sm_figure.outputs == ()  # no SM scaling recorded for this problem: the part is emptied
    assert log.messages == []


def test_the_report_draws_every_source_it_has_a_section_for() -> None:
    in_report = {e.source for e in ENTRIES if e.in_report} - {"run", "sweep"}
    assert set(REPORT_SOURCES) == in_report
