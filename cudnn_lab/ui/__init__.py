"""Widgets: the ``Lab`` panel and the spec controls. Imports ipywidgets and plotly; nothing else imports ``ui``."""

from .controls import SpecControls, controls_from_spec, limits, spec_from_controls
from .lab import Lab

__all__ = ["Lab", "SpecControls", "controls_from_spec", "limits", "spec_from_controls"]
