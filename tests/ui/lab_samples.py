"""What the UI tests share: a spec of every family in several settings, and the recordings they show."""

from __future__ import annotations

from typing import Any

import cudnn_lab as cl

#: A conv fprop with bias+relu recorded on an H100 (the notebook's problem; with kernels and notes), and a matmul;
#: two recorded sweeps. (A recording made before kernels were profiled: the ``old_conv_recording`` fixture.)
CONV_RECORDING = "h100_conv_nhwc_fp16_bias_relu"
MATMUL_RECORDING = "h100_matmul_fp16_bias"
SWEEPS = ("h100_standard", "h200_standard")

SPECS = [
    cl.ConvSpec(),
    cl.ConvSpec(n=2, c=8, h=9, w=7, k=16, r=5, s=3, padding=(2, 1), stride=(2, 1), dilation=1, groups=4,
                layout="NCHW", dtype="bf16", epilogue=("scale", "bias", "gelu")),
    cl.ConvSpec(direction="wgrad", dtype="fp32"),
    cl.ConvSpec(dtype="fp16", compute_dtype="fp16", epilogue=("relu", "relu")),
    cl.MatmulSpec(),
    cl.MatmulSpec(batch=3, m=5, n=7, k=9, transpose_a=True, dtype="fp32", epilogue=("bias", "tanh")),
    cl.SdpaSpec(),
    cl.SdpaSpec(batch=2, heads=8, kv_heads=2, seq_q=64, seq_kv=128, head_dim=64, causal=True, sliding_window=32,
                layout="BHSD", dtype="bf16", direction="fwd_training", attn_scale=0.125),
    cl.SdpaSpec(heads=4, kv_heads=1, direction="bwd", attn_scale=0.0883883476483184),
    cl.NormSpec(),
    cl.NormSpec(kind="rmsnorm", phase="inference", rows=64, features=96, residual=True, epsilon=1e-6),
    cl.NormSpec(kind="batchnorm", phase="training", n=4, c=16, h=7, w=5, layout="NCHW", momentum=0.25),
    cl.NormSpec(kind="instancenorm", phase="backward", dtype="fp32", n=2, c=3, h=4, w=4),
    cl.PoolSpec(),
    cl.PoolSpec(n=2, c=8, h=9, w=7, mode="avg_exclude_pad", window=(3, 2), stride=(2, 1), padding=(1, 0),
                layout="NCHW", dtype="bf16"),
]


def plan_names(result: Any) -> list[str]:
    """A result's plans in the heuristic's order."""
    return list(result.plans.sort_values("heuristic_rank", kind="stable")["plan"])
