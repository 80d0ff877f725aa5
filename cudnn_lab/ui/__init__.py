"""Widgets: the ``Lab`` panel, the spec controls and the Sweep view. Imports ipywidgets and plotly; nothing else
imports ``ui``."""

from .controls import SpecControls, controls_from_spec, limits, spec_from_controls
from .lab import Lab
from .sweepview import SweepView

__all__ = ["Lab", "SpecControls", "SweepView", "controls_from_spec", "limits", "spec_from_controls"]
