"""The forecast of cuDNN's pick per target as a table (:func:`cudnn_lab.whatif.speed.forecast`), for the Lab's
What-if view and the HTML report: its predicted time and interval, the predictor used and its validation error for
the family, or "measure this" with the reason; labelled a forecast, not a measurement. Pure: forecasts in, HTML out.
"""

from __future__ import annotations

import html
from typing import Any

from .tables import frame_table_html, us_text

__all__ = ["FORECAST_LABEL", "forecast_rows", "forecast_table_html"]

#: What every forecast table says first.
FORECAST_LABEL = "Forecast, not a measurement"


def forecast_rows(forecasts: Any) -> list[dict[str, str]]:
    """One row per forecast: the target, the GPU measured it is forecast from, cuDNN's pick (its engine), the
    forecast (µs) with its interval, the predictor with its validation error for the family, or "measure this"; and
    (``why``, said under the table) what the predictor assumed or why to measure, and the source run."""
    rows = []
    for f in forecasts:
        pick = f.pick
        row = {"target": str(f.target), "from": str(f.source_gpu),
               "pick": "" if pick is None else f"engine {pick.engine_id}",
               "forecast": "measure this", "predictor": "", "why": ""}
        if f.measure_this:
            row["why"] = f.measure_this
        elif pick is None:
            row["why"] = "cuDNN proposed no plan"
        elif pick.predicted_ms is None:
            row["why"] = pick.measure_this
        else:
            err = "" if pick.validation_mape is None else f" ±{pick.validation_mape:.1f}%"
            row.update(forecast=f"{us_text(pick.predicted_ms)} ({us_text(pick.low_ms)}–{us_text(pick.high_ms)})",
                       predictor=pick.predictor + err,
                       why=f"{pick.plan}: " + pick.assumptions.get(pick.predictor, ""))
        if f.source:
            row["why"] += f" (from {f.source_gpu}'s run {f.source})"
        rows.append(row)
    return rows


#: The table's columns (the GPU forecast from is said under it, with the source run).
_TITLES = {"target": "target", "pick": "cuDNN's pick", "forecast": "forecast (µs)", "predictor": "predictor, error"}


def forecast_table_html(forecasts: Any) -> str:
    """The forecasts (a list of :class:`~cudnn_lab.whatif.speed.Forecast`) as one labelled table, a row per target;
    a sentence where there are none."""
    import pandas as pd

    forecasts = list(forecasts)
    label = (f"<p class='cl-whatif-label cl-forecast-label'><b>{FORECAST_LABEL}</b>: cuDNN's pick on each target "
             "with a time predicted from a run measured on another GPU; the interval and the error are the predictor's "
             "mean absolute error for the problem's family on the kit's shipped data. \"measure this\": no "
             "validated number can be given.</p>")
    if not forecasts:
        return label + "<p class='cl-whatif-note'>No target chosen to forecast.</p>"
    rows = forecast_rows(forecasts)
    frame = pd.DataFrame(rows, columns=list(_TITLES))
    frame["target"] = frame["target"].str.split(" (", n=1, regex=False).str[0]  # its GPU is named under the table
    plain = {c: str for c in _TITLES}
    notes = "".join(f"<li><b>{html.escape(r['target'])}</b>: "
                    + ("measure this: " if r["forecast"] == "measure this" else "")
                    + f"{html.escape(r['why'])}</li>" for r in rows if r["why"])
    return (label + "<div class='cl-table-wrap cl-whatif-wrap cl-forecast-wrap'>"
            + frame_table_html(frame, _TITLES, formats=plain,
                               classes="cl-plan-table-full cl-whatif-table cl-forecast-table")
            + f"</div><ul class='cl-whatif-refused cl-forecast-why'>{notes}</ul>"
            "<p class='cl-whatif-hint'>In code: <code>cl.forecast(spec, target)</code> (every plan cuDNN "
            "proposes, every predictor's value and what it assumed).</p>")
