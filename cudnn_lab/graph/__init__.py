"""Spec -> real ``cudnn.pygraph``, its drawing (DOT, SVG) and a standalone script.

Each op family has a module here (``conv``, ``matmul``, ``sdpa``, ``norm``, ``pool``, ``softmax``, ``activation``,
``transform``, ``rnn``, ``fusion``) that registers its recipe, its script reference code and its drawing in
:mod:`.families`; importing this package imports them all.
"""

# Each registers its family.
from . import activation, conv, fusion, matmul, norm, pool, rnn, sdpa, softmax, transform  # noqa: F401
from . import moe  # noqa: F401 - the MoE grouped GEMM family
from . import conv3d  # noqa: F401 - 3-D convolutions
from .families import DRAWINGS, RECIPES, REFERENCE_CODE, recipe_for
from .labgraph import LabGraph, build_graph, cached_dot_source, drawing
from .render import SafeDigraph, to_svg

__all__ = ["DRAWINGS", "LabGraph", "RECIPES", "REFERENCE_CODE", "SafeDigraph", "build_graph", "cached_dot_source",
           "drawing", "recipe_for", "to_svg"]
