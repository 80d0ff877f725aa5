"""The report draws the answers it is given (issue 34 step 5): report.py reads no recording and builds no graph (it
imports nothing from the what-if, graph or recording-reading modules), a caller gathers the graph, the script and
the what-if answers (cli.report_answers, used by the Lab's Save report and `cudnn-lab report`), and each answer
given is drawn by its registry entries (plots/registry.py) in its section."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab import cli
from cudnn_lab.errors import OptionError
from cudnn_lab.plots.registry import entries
from cudnn_lab.report import REPORT_SOURCES, ReportAnswers, report_html, save_report, whatif_html
from cudnn_lab.whatif.block_formats import recorded_block_scale_answers
from cudnn_lab.whatif.devices import targets
from cudnn_lab.whatif.heuristics import compare, drift
from cudnn_lab.whatif.scaling import recorded_scalings
from cudnn_lab.whatif.versions import recorded_run_drifts

REPORT = Path(cl.__file__).resolve().parent / "report.py"
#: What the report must not import: it is given the answers, it does not read or build them.
FORBIDDEN = ("cudnn_lab.whatif", "cudnn_lab.graph", "cudnn_lab.results.recordings", "cudnn_lab.results.loading",
             "cudnn_lab.results.datasets")
#: A handful of recordings (the machine is shared): heuristics' answers with drift, a matmul with block-format
#: answers, a classic call (pooling) with none, an RNN.
SAMPLES = ("h100_conv_nhwc_fp16_bias_relu", "h100_matmul_bf16_tn_4096", "h100_pool_max_fp16", "h100_rnn_gru_fp32_bwd")


def _imported(path: Path) -> list[str]:
    """Every module a file imports, relative imports resolved against cudnn_lab."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = "cudnn_lab" if node.level == 1 else "" if node.level == 0 else "?"
            module = ".".join(p for p in (base, node.module or "") if p)
            out += [module] + [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def test_the_report_imports_no_reader_of_answers_and_no_graph_builder() -> None:
    imported = _imported(REPORT)
    assert "cudnn_lab.plots.registry" in imported  # the check sees the report's relative imports
    wrong = [m for m in imported if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert not wrong, f"report.py imports {wrong}: pass the answers in (cli.report_answers gathers them)"
    names = {n.id for n in ast.walk(ast.parse(REPORT.read_text())) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(ast.parse(REPORT.read_text())) if isinstance(n, ast.Attribute)}
    # no reader of recordings or results, no graph built or drawn (its one file is plotly's bundle, its own asset)
    assert not {n for n in names if n.startswith(("recorded_", "load_", "read_result", "read_sweep"))
                or n in ("build_graph", "drawing", "to_svg")}


def _answers(result: cl.RunResult) -> ReportAnswers:
    """The answers a caller gathers, here from the what-if modules' readers directly (not cli.report_answers)."""
    names = list(dict.fromkeys(t.name for t in targets()))
    given: dict[str, object] = {}
    try:
        given["compare"] = compare(result.spec, names, measured=result, recorded=True)
        given["drift"] = drift(result.spec, 91400, "h100")
    except cl.NoGPUError:  # nothing recorded for this problem
        pass
    blocks = [a for a in recorded_block_scale_answers() if a.spec.op == result.spec.op]
    if blocks:
        given["block answers"] = blocks
    given["sm scaling"] = recorded_scalings()[0]  # drawn as given, whatever problem it is of
    given["run drift"] = recorded_run_drifts()[0]
    return ReportAnswers(graph_html="<svg id='given-graph'></svg>", script="# the script given", answers=given)


@pytest.mark.parametrize("name", SAMPLES)
def test_a_report_draws_every_answer_it_is_given(name: str) -> None:
    result = cl.load_results(name)
    answers = _answers(result)
    text = report_html(result, answers)
    assert "<svg id='given-graph'></svg>" in text and "# the script given" in text
    for source, answer in answers.answers.items():
        for e in entries(source):
            if not e.in_report or not e.applies(answer):
                continue
            if e.kind == "table":
                drawn = e.draw(answer)
                assert drawn in text, (name, e.name)  # refusals: "" where every target got a plan
            else:
                title = e.draw(answer).layout.title.text.split("<br>")[0]
                assert f">{title}</a>" in text.split("</nav>")[0], (name, e.name)  # in the table of contents
    assert (whatif_html(answers) != "") == ("<h2>What-if" in text)


@pytest.mark.parametrize("name", SAMPLES[:2])
def test_a_report_given_nothing_draws_the_result_alone(name: str) -> None:
    result = cl.load_results(name)
    text = report_html(result)
    assert "<h2>Plans</h2>" in text and "<h2>Figures</h2>" in text
    for absent in ("<h2>Graph</h2>", "<h2>Repro script</h2>", "What-if", "Blackwell block formats", "#what-if"):
        assert absent not in text, absent


def test_an_answer_that_could_not_be_gathered_is_said_in_its_section() -> None:
    result = cl.load_results(SAMPLES[0])
    note = "The recorded what-if answers cannot be shown: a damaged file (test)"
    text = report_html(result, ReportAnswers(notes={"compare": note}))
    section = text.split("<h2>What-if")[1].split("</details>")[0]
    assert note in section and section.count("cannot be shown") == 1  # said once for its three tables


@pytest.mark.parametrize("bad, field", [({"graph_html": 3}, "graph_html"), ({"script": None}, "script"),
                                        ({"answers": {"forecast?": 1}}, "answers"), ({"answers": [1]}, "answers"),
                                        ({"notes": {"drift": 3}}, "notes"), ({"notes": {"sweep": "x"}}, "notes")])
def test_report_answers_are_checked(bad: dict[str, object], field: str) -> None:
    with pytest.raises(OptionError, match=field):
        ReportAnswers(**bad)  # type: ignore[arg-type]


def test_a_report_refuses_answers_of_another_type() -> None:
    with pytest.raises(OptionError, match="answers"):
        report_html(cl.load_results(SAMPLES[0]), {"compare": None})  # type: ignore[arg-type]


def test_the_callers_gather_what_the_report_draws(tmp_path: Path) -> None:
    """cli.report_answers (the Lab's Save report and `cudnn-lab report`): the graph as SVG or DOT source, the repro
    script, and the recorded answers of the problem's kind; the CLI writes them into the report."""
    result = cl.load_results(SAMPLES[0])
    gathered = cli.report_answers(result)
    assert set(gathered.answers) <= set(REPORT_SOURCES) and {"compare", "drift"} <= set(gathered.answers)
    assert "def build_graph" in gathered.script and ("<svg" in gathered.graph_html or "digraph" in gathered.graph_html)
    path = tmp_path / "r.html"
    assert cli.main(["report", SAMPLES[0], "-o", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    assert text.count("<h2>What-if") == 1 and "<h2>Graph</h2>" in text and "def build_graph" in text
    assert save_report(result, tmp_path / "s.html", gathered).read_text(encoding="utf-8") == report_html(
        result, gathered)
