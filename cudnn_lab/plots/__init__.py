"""Plotly figures of results: one run (``plots.run``), its anatomy (``plots.anatomy``), sweeps (``plots.sweep``,
``plots.compare``), shared style.

Every function is pure: it reads a :class:`~cudnn_lab.results.RunResult` or a sweep frame and returns a new
``plotly.graph_objects.Figure`` (it never shows it); an input of the wrong kind gets an OptionError saying which
kind the figure wants. plotly is imported inside the functions, so importing this package stays cheap.
"""

from __future__ import annotations

from .anatomy import engine_knobs, engine_space, kernels_html, kernels_table
from .compare import compare_gpus, layout_speedup_heatmap
from .run import error_histogram, errors_per_plan, heuristic_vs_measured, latency_bar, roofline
from .style import FAIL_COLOR, LINE_WIDTH, PASS_COLOR, SELECTED_LINE_WIDTH, UNKNOWN_COLOR, engine_colors
from .sweep import error_by_dtype, regret_along, sweep_latency, sweep_roofline

__all__ = ["engine_colors", "latency_bar", "heuristic_vs_measured", "errors_per_plan", "error_histogram",
           "roofline", "SELECTED_LINE_WIDTH", "LINE_WIDTH", "PASS_COLOR", "FAIL_COLOR", "UNKNOWN_COLOR",
           "sweep_latency", "sweep_roofline", "layout_speedup_heatmap", "regret_along", "error_by_dtype",
           "compare_gpus", "engine_space", "engine_knobs", "kernels_table", "kernels_html"]
