"""Record the quickstart's and the Lab's problems on this machine's GPU, for use without a GPU.

Every plan of heuristic modes A, B and FALLBACK is built, checked and timed; each result is saved as JSON in
cudnn_lab/data/recorded/ (or --out), named after the GPU and the problem, labelled with GPU, driver, CUDA,
cuDNN and date inside. Anyone with an NVIDIA GPU can rerun it:  python scripts/record.py
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import cudnn_lab as cl
from cudnn_lab.results import RECORDED_DIR

PROBLEMS = {
    "conv_nhwc_fp16_bias_relu": cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC",
                                            dtype="fp16", epilogue=("bias", "relu")),
    "conv_nchw_fp16_bias_relu": cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NCHW",
                                            dtype="fp16", epilogue=("bias", "relu")),
    "conv_nhwc_fp16": cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"),
    "conv_dgrad_nhwc_fp16": cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC",
                                        dtype="fp16", direction="dgrad"),
    "conv_wgrad_nhwc_fp16": cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC",
                                        dtype="fp16", direction="wgrad"),
    "matmul_fp16_bias": cl.MatmulSpec(batch=1, m=1024, n=1024, k=512, dtype="fp16", epilogue=("bias",)),
    "matmul_fp32_bias": cl.MatmulSpec(batch=1, m=1024, n=1024, k=512, dtype="fp32", epilogue=("bias",)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RECORDED_DIR)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, spec in PROBLEMS.items():
        result = cl.run(spec, plans="all", heuristics=("A", "B", "FALLBACK"))
        gpu = re.sub(r"[^a-z0-9]+", "-", result.device["gpu"].lower()).strip("-").replace("nvidia-", "")
        path = result.save(args.out / f"{gpu}_{name}.json")
        print(f"{path}: {len(result.plans)} plans, {len(result.ok)} ran; {result.summary().splitlines()[2]}")


if __name__ == "__main__":
    main()
