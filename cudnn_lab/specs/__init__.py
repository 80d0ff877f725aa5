"""Pure, validated problem descriptions: what tests, the CLI, notebooks and widgets share.

One module per op family; each spec class registers itself by its ``op`` when defined, and its ``menu_order`` is
where menus list it (:func:`spec_classes`). Nothing here imports torch, cudnn, plotly or
ipywidgets.
"""

from .base import DTYPE_BYTES, DTYPES, LAYOUTS, Spec, spec_classes, spec_from_dict, spec_from_json
from .conv import DIRECTIONS, ConvSpec
from .conv3d import Conv3dSpec
from .matmul import MatmulSpec
from .sdpa import SdpaSpec
from .norm import NormSpec
from .pool import POOL_MODES, PoolSpec
from .moe import MoeSpec
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
    "Conv3dSpec",
    "DTYPES", "DTYPE_BYTES", "LAYOUTS", "DIRECTIONS", "EPILOGUES", "describe_layout", "layout_strides",
]
