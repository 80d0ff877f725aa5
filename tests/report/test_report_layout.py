"""The report reads as a document: a table of contents at the top links every section (and figure), each section
folds (<details open>, no script of ours), and every numeric column of every table has one number format (times in
µs to 3 significant digits, bytes in B/KiB/MiB/GiB, ratios with 2 decimals, counts as integers)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

import cudnn_lab as cl
from cudnn_lab.report import report_html, sweep_report_html
from cudnn_lab.cli import report_answers


def _report(result: cl.RunResult) -> str:
    """The report as the Lab and `cudnn-lab report` write it: with the answers they gather (cli.report_answers)."""
    return report_html(result, report_answers(result))


BIGGEST = "h200_conv_nhwc_fp16"  # the largest recording: exploration, kernels, what-if answers, failed plans
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def biggest() -> str:
    return _report(cl.load_results(BIGGEST))


@pytest.fixture(scope="module")
def sweep() -> str:
    return sweep_report_html(cl.load_results("h100_standard"))


class _Page(HTMLParser):
    """Ids, TOC links, sections and tables (header titles, then each row's cell texts) of a report."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.toc: list[str] = []
        self.sections: list[dict[str, object]] = []
        self.tables: list[dict[str, list]] = []
        self._open: list[dict[str, list]] = []
        self._cell: list[str] | None = None
        self._in_toc = self._in_head = False
        self._summary: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "nav" and "cl-toc" in (a.get("class") or ""):
            self._in_toc = True
        elif tag == "a" and self._in_toc:
            self.toc.append(str(a.get("href")))
        elif tag == "details" and "cl-section" in (a.get("class") or ""):
            self.sections.append({"id": a.get("id"), "open": "open" in a, "summary": ""})
        elif tag == "summary":
            self._summary.append("")
        elif tag == "table":
            self._open.append({"heads": [], "rows": []})
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self._open:
            (self._open[-1]["heads"] if self._in_head else self._open[-1]["rows"]).append([])
        elif tag in ("td", "th") and self._open:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_toc = False
        elif tag == "summary" and self._summary:
            text = self._summary.pop()
            if self.sections and not self.sections[-1]["summary"]:
                self.sections[-1]["summary"] = text
        elif tag == "thead":
            self._in_head = False
        elif tag == "table" and self._open:
            self.tables.append(self._open.pop())
        elif tag in ("td", "th") and self._cell is not None and self._open:
            t = self._open[-1]
            (t["heads"] if self._in_head else t["rows"])[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._summary:
            self._summary[-1] += data


# ------------------------------------------------------------------------------------------------ contents

@pytest.mark.parametrize("which", ["run", "sweep"])
def test_the_toc_links_every_section_and_figure_and_nothing_else(which: str, biggest: str, sweep: str) -> None:
    text = biggest if which == "run" else sweep
    page = _Page(text)
    sections = [str(s["id"]) for s in page.sections]
    figures = sorted(set(re.findall(r"<div class='figure' id='([^']+)'", text)))
    assert page.toc and all(h.startswith("#") for h in page.toc)  # every link is an anchor in the page
    assert {h[1:] for h in page.toc} == set(sections) | set(figures)
    assert len(page.toc) == len(set(page.toc))
    for target in page.toc:
        assert page.ids.count(target[1:]) == 1, target  # each link lands on exactly one element
    assert text.index("class='cl-toc'") < text.index("class='cl-section'")  # at the top, before any section
    if which == "run":
        assert sections[:4] == ["summary", "graph", "figures", "plans"] and "what-if" in sections
        assert len(figures) == 7


def test_a_section_without_content_is_neither_shown_nor_linked() -> None:
    text = _report(cl.load_results("h100_rnn_gru_fp32_bwd"))  # no what-if answers, no kernels
    page = _Page(text)
    assert "#what-if" not in page.toc and "#plan-anatomy" not in page.toc
    assert "what-if" not in page.ids and "plan-anatomy" not in page.ids


# ------------------------------------------------------------------------------------------------ folding

@pytest.mark.parametrize("which", ["run", "sweep"])
def test_every_section_folds_and_starts_open(which: str, biggest: str, sweep: str) -> None:
    text = biggest if which == "run" else sweep
    page = _Page(text)
    assert page.sections and all(s["open"] for s in page.sections)
    # every section title is the summary of its own <details>, and no h2 stands outside one
    assert text.count("<h2>") == len(page.sections) == len(re.findall(
        r"<details class='cl-section' id='[^']+' open><summary><h2>[^<]+</h2></summary>", text))
    assert [s["summary"] for s in page.sections][:2] == (["Summary", "Graph"] if which == "run"
                                                         else ["Figures", "Points"])
    # folding needs no script: the only scripts are plotly's bundle, its loader, the templates and the figures
    scripts = re.findall(r"<script[^>]*>", text)
    figures = text.count("<div class='figure' id=")
    assert len(scripts) == 3 + figures


# ------------------------------------------------------------------------------------------------ numbers

_NUMBER = re.compile(r"^-?(\d+(\.\d+)?(e[+-]\d+)?)( ?(B|KiB|MiB|GiB|x))?$")
_SIG3 = r"-?(\d{3,}|[1-9]\.\d\d|[1-9]\d\.\d|0\.0*[1-9]\d\d|[1-9]\.\d\de[+-]\d\d|0)"
#: Each format a numeric cell may have; a numeric column's cells must all have one of them.
FORMATS = {
    "integer": re.compile(r"^-?\d+$"),
    "sig3": re.compile(rf"^{_SIG3}$"),  # plots.tables.sig3 (times in µs, TFLOP/s, %, ...)
    "bytes": re.compile(rf"^(\d+ B|{_SIG3} (KiB|MiB|GiB))$"),
    "ratio": re.compile(r"^\d+\.\d\dx$"),
    "sci1": re.compile(r"^(0|-?\d\.\de[+-]\d\d)$"),
    "sci2": re.compile(r"^(0|-?\d\.\d\de[+-]\d\d)$"),
}
#: The format a column must have, by its title; other numeric columns must have one format, whichever.
EXPECTED = {"rank": "integer", "engine": "integer", "samples": "integer", "kernels per call": "integer",
            "launches per call": "integer", "plans": "integer", "NaNs": "integer", "Infs": "integer",
            "workspace": "bytes", "regret": "ratio", "error (rel. L2)": "sci1", "rel. L2 error": "sci2",
            "max abs error": "sci2", "TFLOP/s": "sig3", "GB/s": "sig3", "% of roofline": "sig3"}


def _columns(text: str) -> list[tuple[str, list[str]]]:
    """(title, cells) of every column of every table with a header row (the device table is rows of key, value)."""
    out = []
    for table in _Page(text).tables:
        if not table["heads"]:
            continue
        heads = table["heads"][-1]  # the last header row names the columns (the what-if table has two)
        for i, title in enumerate(heads):
            out.append((title, [row[i] for row in table["rows"] if i < len(row)]))
    return out


def _formats_of(cells: list[str]) -> set[str]:
    numbers = [c for c in cells if _NUMBER.match(c)]
    return {name for name, rx in FORMATS.items() if all(rx.match(c) for c in numbers)} if numbers else set(FORMATS)


@pytest.mark.parametrize("name", [BIGGEST, "h100_conv_nhwc_fp16_bias_relu", "h100_sdpa_bf16_causal", "sweep"])
def test_every_numeric_column_has_one_format(name: str, biggest: str, sweep: str) -> None:
    text = {BIGGEST: biggest, "sweep": sweep}.get(name) or _report(cl.load_results(name))
    checked = 0
    for title, cells in _columns(text):
        numbers = [c for c in cells if _NUMBER.match(c)]
        if not numbers:
            continue  # a text column (plan names, knobs, statuses)
        checked += 1
        fits = _formats_of(cells)
        assert fits, f"column {title!r} mixes formats: {sorted(set(numbers))[:12]}"
        if "(µs)" in title or "(ms)" in title:
            assert "sig3" in fits, (title, numbers[:12])
        if title in EXPECTED:
            assert EXPECTED[title] in fits, (title, EXPECTED[title], numbers[:12])
    assert checked >= (5 if name == "sweep" else 8)


def test_the_format_check_catches_mixed_cells() -> None:
    """The old kernel table's '.4g' (20.09 next to 0.749 and 1.526e+04) and a count written as '2.00' fail."""
    assert not _formats_of(["0.749", "20.09", "1.526e+04"])
    assert "integer" not in _formats_of(["2.00", "1.00"]) and not _formats_of(["2.00", "1"])
    assert _formats_of(["22.0", "274", "15264", "0.0793", "refused", ""]) == {"sig3"}
    assert _formats_of(["131 B", "4.00 MiB", "18.5 MiB", "0 B"]) == {"bytes"}


def test_counts_and_kernel_times_use_the_kits_formats(biggest: str) -> None:
    plans = biggest.split("<h2>Plans</h2>")[1].split("<h2>")[0]
    assert ">kernels per call</th>" in plans and ">2.00<" not in plans  # a count, not a float
    anatomy = biggest.split("<h2>Plan anatomy</h2>")[1].split("<h2>")[0]
    assert ">per launch (µs)</th>" in anatomy and "e+04" not in anatomy and ">20.09<" not in anatomy
    device = biggest.split("<h2>Device</h2>")[1].split("<h2>")[0]
    assert ">torch benchmark_off (µs)</th><td>21.8</td>" in device and ">1.00 GiB</td>" in device
    assert "773.5456901794588" not in device  # a ceiling to 3 significant digits


# ------------------------------------------------------------------------------------------------ in a browser

@pytest.mark.browser
def test_the_biggest_report_navigates_folds_and_draws_offline(tmp_path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
    from cudnn_lab.report import save_report
    from tests.conftest import chromium_path

    result = cl.load_results(BIGGEST)
    path = save_report(result, tmp_path / "report.html", report_answers(result))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(offline=True, viewport={"width": 1280, "height": 800}).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 7",
                                   timeout=60_000)
            page.click("nav.cl-toc a[href='#plans']")
            page.wait_for_function("Math.abs(document.getElementById('plans').getBoundingClientRect().top) < 2")
            page.click("#plans > summary")
            assert page.evaluate("document.getElementById('plans').open") is False
            assert page.evaluate("document.getElementById('plans').getBoundingClientRect().height") < 80
            page.click("#plans > summary")
            assert page.evaluate("document.getElementById('plans').open") is True
            # nothing wider than the page: wide tables scroll inside their own box
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        finally:
            browser.close()
    assert not errors, errors
