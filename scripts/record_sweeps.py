"""Record the standard sweep on this machine's GPU and ship it as one Parquet file for use without a GPU.

The set follows real models, in the spirit of DeepBench's lists: ResNet-50's convolutions (NCHW and NHWC, fp16),
a few DeepBench-style training convolutions, BERT-base and GPT-style GEMMs (bf16 and fp16, and fp32 for TF32),
a GEMM size sweep (bf16, fp32, and FP8 e4m3 beside bf16 TN), and attention and normalization shapes of today's
models where this version of the kit has them. Every plan of heuristic modes A and FALLBACK is built, checked and timed.

Run on a GPU machine:  python scripts/record_sweeps.py   (writes cudnn_lab/data/sweeps/<gpu>_standard.parquet)
Without a GPU it says so once, in the kit's words, and exits 3 (the `cudnn-lab` exit codes).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

import cudnn_lab as cl
from cudnn_lab.cli import say_error
from cudnn_lab.gpu.session import require_gpu
from cudnn_lab.results import SWEEPS_DIR
from cudnn_lab.results.backend_map import BACKEND_MAPS_DIR, backend_map, has_backends
from cudnn_lab.results.datasets import dataset_prefix
from cudnn_lab.gpu.device import end_program


def standard_set() -> list[cl.Spec]:
    specs: list[cl.Spec] = []
    rn50 = [(64, 56, 64, 1), (64, 56, 64, 3), (64, 56, 256, 1), (128, 28, 128, 3), (128, 28, 512, 1),
            (256, 14, 256, 3), (256, 14, 1024, 1), (512, 7, 512, 3), (512, 7, 2048, 1)]
    for c, hw, k, r in rn50:
        for layout in ("NCHW", "NHWC"):
            specs.append(cl.ConvSpec(n=32, c=c, h=hw, w=hw, k=k, r=r, s=r, padding=r // 2, layout=layout,
                                     dtype="fp16"))
    deepbench = [(16, 3, 224, 64, 7, 2, 3), (16, 64, 112, 64, 3, 1, 1), (8, 128, 56, 128, 3, 1, 1),
                 (16, 256, 28, 256, 3, 1, 1), (16, 512, 14, 512, 3, 1, 1)]
    for n, c, hw, k, r, st, pad in deepbench:
        for direction in ("fprop", "dgrad", "wgrad"):
            specs.append(cl.ConvSpec(n=n, c=c, h=hw, w=hw, k=k, r=r, s=r, stride=st,
                                     padding=pad, layout="NHWC", dtype="fp16", direction=direction))
    gemms = [(4096, 768, 3072), (4096, 3072, 768), (4096, 768, 768), (4096, 2304, 768), (8192, 4096, 4096),
             (8192, 11008, 4096)]
    for m, n, k in gemms:
        for dtype in ("bf16", "fp16"):
            specs.append(cl.MatmulSpec(m=m, n=n, k=k, dtype=dtype))
    for m in (256, 512, 1024, 2048, 4096, 8192):
        specs.append(cl.MatmulSpec(m=m, n=m, k=m, dtype="bf16"))
        specs.append(cl.MatmulSpec(m=m, n=m, k=m, dtype="fp32"))
    specs += fp8_gemm_set()
    if hasattr(cl, "SdpaSpec"):
        for seq in (512, 1024, 2048, 4096):
            for causal in (False, True):
                specs.append(cl.SdpaSpec(batch=4, heads=16, seq_q=seq, seq_kv=seq, head_dim=128, causal=causal,
                                         dtype="bf16"))
    if hasattr(cl, "NormSpec"):
        for features in (768, 1024, 4096, 8192):
            specs.append(cl.NormSpec(kind="layernorm", phase="inference", rows=8192, features=features,
                                     dtype="bf16"))
            specs.append(cl.NormSpec(kind="rmsnorm", phase="inference", rows=8192, features=features,
                                     dtype="bf16"))
    return specs


def fp8_gemm_set() -> list[cl.Spec]:
    """The FP8 GEMM size sweep (issue 15): e4m3 -> bf16 beside bf16, both TN (the layout FP8 needs)."""
    specs: list[cl.Spec] = []
    for m in (1024, 2048, 4096, 8192):
        specs.append(cl.MatmulSpec(m=m, n=m, k=m, dtype="fp8_e4m3", transpose_b=True, out_dtype="bf16"))
        specs.append(cl.MatmulSpec(m=m, n=m, k=m, dtype="bf16", transpose_b=True))
    return specs


def attention_backends_set() -> list[cl.Spec]:
    """Which backend wins where (issue 38): bf16 attention forward along sequence length, batch, head size, GQA ratio
    and the causal mask (3 x 2 x 3 x 2 x 2 = 72 shapes, 32 query heads), each run with PyTorch's SDPA backends timed
    beside cuDNN's plans (``backends=True``)."""
    specs: list[cl.Spec] = []
    for head_dim in (64, 128, 256):
        for causal in (False, True):
            for batch in (1, 4):
                for group in (1, 4):
                    for seq in (512, 2048, 8192):
                        specs.append(cl.SdpaSpec(batch=batch, heads=32, kv_heads=32 // group, seq_q=seq, seq_kv=seq,
                                                 head_dim=head_dim, causal=causal, dtype="bf16"))
    return specs


SETS = {"standard": standard_set, "fp8_gemm": fp8_gemm_set, "attention_backends": attention_backends_set}
#: Run options of a set beyond the common ones (every plan of modes A and FALLBACK, 0.25 s of sampling per plan).
SET_OPTIONS: dict[str, dict[str, object]] = {"attention_backends": {"backends": True, "kernels": False,
                                                                    "notes": False}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SWEEPS_DIR)
    parser.add_argument("--store", type=Path, help="resumable store folder (default: a temporary folder)")
    parser.add_argument("--limit", type=int, help="only the first N points (a quick check)")
    parser.add_argument("--set", choices=sorted(SETS), default="standard",
                        help="which set: the standard sweep (default), its FP8 GEMM part alone, or the attention "
                        "shapes with PyTorch's backends (which backend wins where)")
    parser.add_argument("--map-out", type=Path, default=BACKEND_MAPS_DIR,
                        help="where the attention set's backend map JSON goes")
    args = parser.parse_args()
    try:  # the kit's errors (no GPU first of all) in its own words, once, with the CLI's exit code
        require_gpu(0)
        record(args)
    except cl.CudnnLabError as e:
        sys.exit(say_error("record_sweeps.py", e))


def record(args: argparse.Namespace) -> None:
    """Sweep the chosen set into a store and ship it as one Parquet file named after the GPU."""
    specs = SETS[args.set]()[: args.limit]
    store = args.store or Path(tempfile.mkdtemp()) / f"{args.set}.parquet"
    signal.signal(signal.SIGTERM, _interrupt)  # a round's deadline (timeout) ships what is done
    try:
        frame = cl.sweep(specs, store=store, plans="all", heuristics=("A", "FALLBACK"), time_cap_s=0.25,
                         **SET_OPTIONS.get(args.set, {}))  # type: ignore[arg-type]
        partial = ""
    except KeyboardInterrupt:
        frame, partial = cl.load_results(store), " (stopped early: partial)"
    gpus = frame["gpu"].dropna().tolist() if "gpu" in frame else []
    if not gpus:
        raise cl.CudnnLabError(f"no point of the sweep ran, so there is nothing to ship (its store: {store})")
    gpu = dataset_prefix(str(gpus[0]))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{gpu}_{args.set}.parquet"
    frame.to_parquet(path, index=False)
    ok = frame[frame["point_status"] == "ok"]
    print(f"{path}: {frame['point_id'].nunique()} points ({ok['point_id'].nunique()} ok), {len(frame)} rows, "
          f"{path.stat().st_size / 1e6:.2f} MB{partial}")
    if has_backends(frame):
        bmap = backend_map(frame)
        args.map_out.mkdir(parents=True, exist_ok=True)
        bmap.to_json(args.map_out / f"{gpu}_{args.set}.json")
        print(bmap.summary())


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
