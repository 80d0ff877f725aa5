"""Pure, validated problem descriptions: what tests, the CLI, notebooks and widgets share.

Nothing here imports torch, cudnn, plotly or ipywidgets.
"""

from .base import DTYPE_BYTES, DTYPES, LAYOUTS, Spec, spec_from_dict, spec_from_json
from .chaining import chain
from .conv import DIRECTIONS, ConvSpec
from .epilogue import EPILOGUES
from .layout import describe_layout, layout_strides
from .matmul import MatmulSpec
from .norm import NormSpec
from .pool import POOL_MODES, PoolSpec
from .sdpa import SdpaSpec

__all__ = [
    "NormSpec",
    "PoolSpec", "POOL_MODES",
    "chain", "Spec", "ConvSpec", "MatmulSpec", "SdpaSpec", "spec_from_dict", "spec_from_json",
    "DTYPES", "DTYPE_BYTES", "LAYOUTS", "DIRECTIONS", "EPILOGUES", "describe_layout", "layout_strides",
]
