"""Widgets: the ``Lab`` panel and its parts (spec form, run form, status and log, figure host, graph view, result
views, Sweep view, state). Imports ipywidgets and plotly; nothing else imports ``ui``. No rules live here: ranges,
choices and hints come from the specs, run options from :mod:`cudnn_lab.options`, metrics from the results layer."""

from .fields import controls_from_spec, limits, spec_from_controls
from .forms import SpecControls, SpecForm
from .lab import Lab
from .run_form import RunForm
from .state import LabState
from .sweepview import SweepView

__all__ = ["Lab", "LabState", "RunForm", "SpecControls", "SpecForm", "SweepView", "controls_from_spec", "limits",
           "spec_from_controls"]
