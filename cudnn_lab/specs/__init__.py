"""Pure, validated problem descriptions: what tests, the CLI, notebooks and widgets share.

One module per op family; each spec class registers itself by its ``op`` when defined, so the import order below
is the order menus list the families (:func:`spec_classes`). Nothing here imports torch, cudnn, plotly or
ipywidgets.
"""

from .base import DTYPE_BYTES, DTYPES, LAYOUTS, Spec, spec_classes, spec_from_dict, spec_from_json
from .conv import DIRECTIONS, ConvSpec
from .matmul import MatmulSpec
from .sdpa import SdpaSpec
from .norm import NormSpec  # the import order is the families' menu order
from .pool import POOL_MODES, PoolSpec
from .moe import MoeSpec  # the first family after the five classics: tests/specs/test_form_rules.py
from .softmax import SoftmaxSpec
from .activation import ActivationSpec
from .transform import TransformSpec
from .rnn import RnnSpec
from .fusion import ConvGenstatsSpec, ConvPrologueSpec
from .fusion import ConvConcatSpec, ConvDgradReluSpec, ConvReductionSpec
from .reduction import ReductionSpec
from .chaining import chain
from .epilogue import EPILOGUES
from .layout import describe_layout, layout_strides

__all__ = [
    "NormSpec",
    "MoeSpec",
    "PoolSpec", "POOL_MODES",
    "SoftmaxSpec", "ActivationSpec", "TransformSpec", "RnnSpec", "ConvGenstatsSpec", "ConvPrologueSpec",
    "ConvReductionSpec", "ConvConcatSpec", "ConvDgradReluSpec", "ReductionSpec",
    "chain", "Spec", "spec_classes", "ConvSpec", "MatmulSpec", "SdpaSpec", "spec_from_dict", "spec_from_json",
    "DTYPES", "DTYPE_BYTES", "LAYOUTS", "DIRECTIONS", "EPILOGUES", "describe_layout", "layout_strides",
]
