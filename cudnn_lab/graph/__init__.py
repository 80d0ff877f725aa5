"""Spec -> real ``cudnn.pygraph``, its drawing and a standalone script."""

from .labgraph import LabGraph, build_graph, drawing
from .render import SafeDigraph

__all__ = ["LabGraph", "SafeDigraph", "build_graph", "drawing"]
