"""The Plans table as one anywidget: click a header to sort (numbers numerically; again to reverse), a filter box (a
text match on any column), the heuristic's pick and the best plan marked, CSV export (a button that downloads the
table as shown; :meth:`PlansTable.csv` in Python), and a click on a row selects its plan (``selected``).

Cells come preformatted by the kit's formatters (:func:`cudnn_lab.plots.tables.plan_table_rows`) with raw sort keys
beside them; the browser only orders, filters and draws. The Python side orders and filters the same way
(:meth:`PlansTable.rows_shown`), so the CSV of either side is the table as shown.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import anywidget
import traitlets as T

from ..errors import OptionError
from ..plots.tables import plan_table_rows
from ..results import RunResult, metrics

__all__ = ["PlansTable", "sorted_rows", "table_data"]

_ESM = r"""
function cmp(a, b, numeric) {
  const na = a === null || a === undefined || a === "", nb = b === null || b === undefined || b === "";
  if (na || nb) return na && nb ? 0 : (na ? 1 : -1);  // missing last, either way
  if (numeric) return a - b;
  return a < b ? -1 : (a > b ? 1 : 0);
}
function shown(model) {
  const cols = model.get("columns"), rows = model.get("rows");
  const col = model.get("sort_column"), desc = model.get("sort_descending");
  const text = (model.get("filter_text") || "").trim().toLowerCase();
  let out = rows.map((r, i) => [r, i]);
  if (text) out = out.filter(([r]) => (r.title + "\t" + r.cells.join("\t")).toLowerCase().includes(text));
  const ci = cols.findIndex(c => c.key === col);
  if (ci >= 0) {
    const numeric = cols[ci].numeric;
    out.sort(([a, ia], [b, ib]) => {
      const ka = a.keys[ci], kb = b.keys[ci];
      const am = ka === null || ka === "", bm = kb === null || kb === "";
      if (am || bm) return am && bm ? ia - ib : (am ? 1 : -1);
      const c = cmp(ka, kb, numeric);
      return (desc ? -c : c) || ia - ib;
    });
  }
  return out.map(([r]) => r);
}
function csvText(model) {
  const q = s => /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  const lines = [model.get("columns").map(c => q(c.title)).join(",")];
  for (const r of shown(model)) lines.push(r.cells.map(q).join(","));
  return lines.join("\r\n") + "\r\n";
}
function render({ model, el }) {
  el.classList.add("cl-plans-widget");
  const bar = document.createElement("div"); bar.className = "cl-pt-bar";
  const filter = document.createElement("input");
  filter.type = "search"; filter.placeholder = "filter: any column (eng62, TENSOR_CORE, ✗ ...)";
  filter.className = "cl-pt-filter";
  const count = document.createElement("span"); count.className = "cl-pt-count";
  const exp = document.createElement("button"); exp.className = "cl-pt-csv"; exp.textContent = "CSV";
  exp.title = "download the table as shown (sorted and filtered) as CSV";
  const legend = document.createElement("span"); legend.className = "cl-pt-legend";
  legend.innerHTML = "<span class='cl-pt-badge cl-pt-pick'>pick</span> heuristics' first choice " +
                     "<span class='cl-pt-badge cl-pt-best'>best</span> fastest passing plan";
  const wide = document.createElement("button"); wide.className = "cl-pt-wide";
  bar.append(filter, exp, wide, count, legend);
  const wrap = document.createElement("div"); wrap.className = "cl-pt-wrap cl-table-wrap";
  const table = document.createElement("table"); table.className = "cl-plan-table cl-plan-table-full cl-pt-table";
  const thead = document.createElement("thead"), tbody = document.createElement("tbody");
  table.append(thead, tbody); wrap.append(table); el.append(bar, wrap);

  // Key columns only (plan names wrapped) unless "all columns" is asked for: every column scrolls sideways in a
  // pane narrower than the table (468 px at 1280 with JupyterLab's file browser; issue 39).
  let all_columns = false;
  function layout() {
    table.classList.toggle("cl-pt-compact", !all_columns);
    wide.textContent = all_columns ? "key columns" : "all columns";
    wide.title = all_columns ? "show the key columns only (plan, rank, median, error, passes)"
                             : "show every column (scroll sideways in a narrow pane)";
  }
  wide.addEventListener("click", () => { all_columns = !all_columns; layout(); });
  const extra = c => c.essential === false ? " cl-pt-extra" : "";
  function head() {
    const col = model.get("sort_column"), desc = model.get("sort_descending");
    const tr = document.createElement("tr");
    for (const c of model.get("columns")) {
      const th = document.createElement("th");
      th.dataset.key = c.key; th.title = "sort by " + c.title + (c.key === col ? " (click again to reverse)" : "");
      th.className = "cl-pt-sortable" + (c.numeric ? " cl-pt-num" : "") + extra(c);
      th.textContent = c.title + (c.key === col ? (desc ? " ▼" : " ▲") : "");
      if (c.key === col) th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      th.addEventListener("click", () => {
        if (model.get("sort_column") === c.key) model.set("sort_descending", !model.get("sort_descending"));
        else { model.set("sort_column", c.key); model.set("sort_descending", false); }
        model.save_changes();
      });
      tr.append(th);
    }
    thead.replaceChildren(tr);
  }
  function body() {
    const cols = model.get("columns"), sel = model.get("selected");
    const pick = model.get("pick"), best = model.get("best");
    const rows = shown(model), frag = document.createDocumentFragment();
    for (const r of rows) {
      const tr = document.createElement("tr");
      tr.dataset.plan = r.plan; tr.title = r.title;
      const cls = [];
      if (r.plan === sel) cls.push("cl-selected");
      if (r.status !== "ok") cls.push("cl-failed");
      if (r.plan === pick) cls.push("cl-pt-row-pick");
      if (r.plan === best) cls.push("cl-pt-row-best");
      tr.className = cls.join(" ");
      r.cells.forEach((text, i) => {
        const td = document.createElement("td");
        td.className = "cl-col-" + cols[i].key.split(" (")[0].replace(/[^a-z0-9]+/gi, "-").toLowerCase()
                       + (cols[i].numeric ? " cl-pt-num" : "") + extra(cols[i]);
        if (i === 0) {  // the plan's name may break after each '_' (a <wbr>: nothing extra when copied)
          text.split("_").forEach((part, j, parts) => {
            td.append(part + (j < parts.length - 1 ? "_" : ""));
            if (j < parts.length - 1) td.append(document.createElement("wbr"));
          });
        } else td.textContent = text;
        if (i === 0) {
          for (const [p, name] of [[pick, "pick"], [best, "best"]]) if (r.plan === p) {
            const b = document.createElement("span"); b.className = "cl-pt-badge cl-pt-" + name;
            b.textContent = name; td.prepend(b);
          }
        }
        tr.append(td);
      });
      tr.addEventListener("click", () => { model.set("selected", r.plan); model.save_changes(); });
      frag.append(tr);
    }
    tbody.replaceChildren(frag);
    count.textContent = rows.length + " of " + model.get("rows").length + " plans";
  }
  function all() { head(); body(); }
  // Another result (not a live run's next rows): the table starts at its top-left corner again.
  model.on("change:generation", () => { wrap.scrollTop = 0; wrap.scrollLeft = 0; });
  layout();
  filter.value = model.get("filter_text") || "";
  filter.addEventListener("input", () => { model.set("filter_text", filter.value); model.save_changes(); });
  exp.addEventListener("click", () => {
    const blob = new Blob(["\ufeff" + csvText(model)], { type: "text/csv;charset=utf-8" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob); a.download = model.get("csv_name") || "plans.csv";
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
  model.on("change:filter_text", () => {
    if (filter.value !== model.get("filter_text")) filter.value = model.get("filter_text");
    body();
  });
  for (const name of ["columns", "rows", "sort_column", "sort_descending"]) model.on("change:" + name, all);
  // A pick moves one highlight: two rows change class, the table is not rebuilt (244 rows re-laid out took
  // about 0.5 s at 1600 px).
  function markSelected() {
    const sel = model.get("selected");
    for (const tr of tbody.querySelectorAll("tr.cl-selected")) {
      if (tr.dataset.plan !== sel) tr.classList.remove("cl-selected");
    }
    if (sel == null) return;
    for (const tr of tbody.children) if (tr.dataset.plan === sel) tr.classList.add("cl-selected");
  }
  model.on("change:selected", markSelected);
  for (const name of ["pick", "best"]) model.on("change:" + name, body);
  all();
}
export default { render };
"""

_CSS = r"""
.cl-plans-widget { width: 100%; box-sizing: border-box; font-size: 12px; }
.cl-pt-bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 2px 0 6px; }
.cl-pt-filter { flex: 0 1 300px; min-width: 160px; padding: 3px 6px; font-size: 12px; }
.cl-pt-csv, .cl-pt-wide { padding: 2px 10px; cursor: pointer; }
.cl-pt-compact .cl-pt-extra { display: none; }
.cl-plans-widget .cl-pt-table.cl-pt-compact { width: 100%; }
.cl-plans-widget .cl-pt-table.cl-pt-compact td.cl-col-plan { white-space: normal; overflow-wrap: anywhere;
                                                             min-width: 110px; }
.cl-plans-widget .cl-pt-table.cl-pt-compact th { white-space: normal; vertical-align: bottom; }
.cl-plans-widget .cl-pt-table.cl-pt-compact th, .cl-plans-widget .cl-pt-table.cl-pt-compact td { padding: 2px 5px; }
.cl-pt-count, .cl-pt-legend { color: #6b7280; }
.cl-pt-wrap { max-height: 560px; overflow: auto; max-width: 100%; border: 1px solid #e5e7eb; }
.cl-pt-table { border-collapse: collapse; width: max-content; min-width: 100%; }
.cl-pt-table th { position: sticky; top: 0; background: #f3f4f6; cursor: pointer; user-select: none;
                  white-space: nowrap; padding: 3px 8px; text-align: left; z-index: 1; }
.cl-pt-table th:hover { background: #e5e7eb; }
.cl-pt-table td { padding: 2px 8px; white-space: nowrap; border-top: 1px solid #f3f4f6; }
.cl-pt-table .cl-pt-num { text-align: right; font-variant-numeric: tabular-nums; }
.cl-pt-table tbody tr { cursor: pointer; }
.cl-pt-table tbody tr:hover { background: #f9fafb; }
.cl-pt-table tr.cl-pt-row-best { background: #ecfdf5; }
.cl-pt-table tr.cl-pt-row-pick { background: #eff6ff; }
.cl-pt-table tr.cl-failed td { color: #9ca3af; }
.cl-pt-table tr.cl-selected, .cl-pt-table tr.cl-selected:hover { background: #fef3c7; outline: 2px solid #f59e0b;
                                                                   outline-offset: -2px; }
.cl-pt-badge { display: inline-block; font-size: 10px; line-height: 14px; padding: 0 5px; margin-right: 4px;
               border-radius: 7px; color: white; font-weight: 600; }
.cl-pt-badge.cl-pt-pick { background: #2563eb; }
.cl-pt-badge.cl-pt-best { background: #059669; }
"""


def _missing(key: Any) -> bool:
    return key is None or key == ""


def sorted_rows(rows: list[dict[str, Any]], columns: list[dict[str, Any]], column: str | None,
                descending: bool = False, text: str = "") -> list[dict[str, Any]]:
    """``rows`` as the table shows them: those matching ``text`` (case-blind, any cell or the row's title), ordered
    by ``column``'s raw keys (numbers numerically, text by code point; missing keys last either way; ties keep
    the heuristic's order). The same rules as the browser's."""
    text = text.strip().lower()
    out = [r for r in rows if not text or text in (r["title"] + "\t" + "\t".join(r["cells"])).lower()]
    index = next((i for i, c in enumerate(columns) if c["key"] == column), None)
    if index is None:
        return out
    present = [r for r in out if not _missing(r["keys"][index])]
    missing = [r for r in out if _missing(r["keys"][index])]
    present = sorted(present, key=lambda r: r["keys"][index], reverse=descending)  # stable both ways
    return present + missing


def table_data(result: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None, str | None, str]:
    """What the table shows of ``result`` (None: nothing): columns, rows, the pick's and the best plan's names and
    the CSV file's name; apart from the widget so that the Lab can keep it for a recording loaded again."""
    columns, rows = plan_table_rows(result)
    pick = best = None
    if result is not None:
        p, b = metrics.pick(result.plans), metrics.best(result.plans)
        pick = None if p is None else str(p["plan"])
        best = None if b is None else str(b["plan"])
    name = getattr(getattr(result, "spec", None), "label", None)
    csv_name = ("plans " + name() + ".csv").replace("/", "-") if callable(name) else "plans.csv"
    return columns, rows, pick, best, csv_name


class PlansTable(anywidget.AnyWidget):
    """A result's plans as a sortable, filterable table. ``rows``/``columns`` from
    :func:`~cudnn_lab.plots.tables.plan_table_rows`; ``selected`` the plan picked (a click on a row sets it);
    ``pick``/``best`` the marked plans; ``sort_column``/``sort_descending``/``filter_text`` the view's state."""

    _esm = _ESM
    _css = _CSS
    columns = T.List(T.Dict()).tag(sync=True)
    rows = T.List(T.Dict()).tag(sync=True)
    selected = T.Unicode(None, allow_none=True).tag(sync=True)
    pick = T.Unicode(None, allow_none=True).tag(sync=True)
    best = T.Unicode(None, allow_none=True).tag(sync=True)
    sort_column = T.Unicode(None, allow_none=True).tag(sync=True)
    sort_descending = T.Bool(False).tag(sync=True)
    filter_text = T.Unicode("").tag(sync=True)
    csv_name = T.Unicode("plans.csv").tag(sync=True)
    #: Counts the results shown (not a live run's rows as they come): the browser scrolls the table back to its top.
    generation = T.Int(0).tag(sync=True)

    def show_result(self, result: Any, *, selected: str | None = None) -> None:
        """Fill the table with ``result``'s plans (None: empty), marking its pick and best plan."""
        self.show_data(*table_data(result), selected=selected)

    def show_data(self, columns: list[dict[str, Any]], rows: list[dict[str, Any]], pick: str | None,
                  best: str | None, csv_name: str, *, selected: str | None = None) -> None:
        """Fill the table with :func:`table_data`'s answer (one message to the browser), scrolled to its top."""
        self._fill(columns, rows, pick, best, csv_name, selected, new=True)

    def _fill(self, columns: list[dict[str, Any]], rows: list[dict[str, Any]], pick: str | None, best: str | None,
              csv_name: str, selected: str | None, *, new: bool) -> None:
        with self.hold_sync():
            self.columns, self.rows, self.pick, self.best, self.selected = columns, rows, pick, best, selected
            self.csv_name = csv_name
            if new:
                self.generation += 1

    def show_rows(self, spec: Any, rows: list[dict[str, Any]]) -> None:
        """Fill the table with a live run's rows so far (plain row dicts as ``cl.run``'s progress hears them, in
        heuristic order), as a result of those rows: the table fills in as a run hands out its plans."""
        result = RunResult.from_records(spec, {"plans": [dict(r) for r in rows], "device": {}, "settings": {}})
        selected = self.selected if self.selected in {r.get("plan") for r in rows} else None
        self._fill(*table_data(result), selected, new=False)  # the reader's scroll position stays

    def sort_by(self, column: str | None, descending: bool = False) -> None:
        """Order the table by ``column`` (a column title, None: the heuristic's order)."""
        if column is not None and column not in [c["key"] for c in self.columns]:
            raise OptionError("sort_column", column, "is not a column of the Plans table: "
                              + ", ".join(c["key"] for c in self.columns), where="Plans table")
        self.sort_column, self.sort_descending = column, bool(descending)

    def rows_shown(self) -> list[dict[str, Any]]:
        """The rows as the table shows them now (filtered and sorted)."""
        return sorted_rows(self.rows, self.columns, self.sort_column, self.sort_descending, self.filter_text)

    def plans_shown(self) -> list[str]:
        """The plan names in the table's order now."""
        return [r["plan"] for r in self.rows_shown()]

    def csv(self) -> str:
        """The table as shown (filtered, sorted, cells as displayed) as CSV text: what the CSV button downloads."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow([c["title"] for c in self.columns])
        for r in self.rows_shown():
            writer.writerow(r["cells"])
        return out.getvalue()
