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


def _interval(pick: Any) -> str:
    return f"{us_text(pick.low_ms)}–{us_text(pick.high_ms)}"


def forecast_rows(forecasts: Any) -> list[dict[str, str]]:
    """One row per forecast: the target, the run it is forecast from, cuDNN's pick, the forecast (µs) and its
    interval, the predictor and its validation error, or "measure this" and the reason."""
    rows = []
    for f in forecasts:
        pick = f.pick
        row = {"target": str(f.target), "from": f"{f.source_gpu} ({f.source})" if f.source_gpu else "",
               "pick": "" if pick is None else f"{pick.plan} (engine {pick.engine_id})",
               "forecast": "measure this", "interval": "", "predictor": "", "error": "", "why": ""}
        if f.measure_this:
            row["why"] = f.measure_this
        elif pick is None:
            row["why"] = "cuDNN proposed no plan"
        elif pick.predicted_ms is None:
            row["why"] = pick.measure_this
        else:
            row.update(forecast=us_text(pick.predicted_ms), interval=_interval(pick), predictor=pick.predictor,
                       error="" if pick.validation_mape is None else f"{pick.validation_mape:.1f}% ({f.family})",
                       why=pick.assumptions.get(pick.predictor, ""))
        rows.append(row)
    return rows


_TITLES = {"target": "target", "from": "forecast from (measured)", "pick": "cuDNN's pick on the target",
           "forecast": "forecast (µs)", "interval": "interval (µs)", "predictor": "predictor",
           "error": "validation error", "why": "assumed, or why measure"}


def forecast_table_html(forecasts: Any) -> str:
    """The forecasts (a list of :class:`~cudnn_lab.whatif.speed.Forecast`) as one labelled table, a row per target;
    a sentence where there are none."""
    import pandas as pd

    forecasts = list(forecasts)
    label = (f"<p class='cl-whatif-label cl-forecast-label'><b>{FORECAST_LABEL}</b>: cuDNN's pick on each target "
             "with a time predicted from a run measured on another GPU; the interval is the predictor's validation "
             "error for the family on the kit's shipped data. \"measure this\": no validated number can be given.</p>")
    if not forecasts:
        return label + "<p class='cl-whatif-note'>No target chosen to forecast.</p>"
    frame = pd.DataFrame(forecast_rows(forecasts), columns=list(_TITLES))
    plain = {c: str for c in _TITLES}
    return (label + "<div class='cl-table-wrap cl-whatif-wrap cl-forecast-wrap'>"
            + frame_table_html(frame, _TITLES, formats=plain,
                               classes="cl-plan-table-full cl-whatif-table cl-forecast-table")
            + "</div><p class='cl-whatif-hint'>In code: <code>cl.forecast(spec, target)</code> (every plan cuDNN "
            + html.escape("proposes, every predictor's value and what it assumed") + ").</p>")
