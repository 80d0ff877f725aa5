"""Record the quickstart's and the Lab's problems on this machine's GPU, for use without a GPU.

Every plan of heuristic modes A, B and FALLBACK is built, checked and timed; each result is saved as JSON in
cudnn_lab/data/recorded/ (or --out), named after the GPU and the problem, labelled with GPU, driver, CUDA,
cuDNN and date inside. Anyone with an NVIDIA GPU can rerun it:  python scripts/record.py

Problems run in a worker process that the parent kills and restarts when one problem outlasts
--problem-timeout-s (a call stuck inside cuDNN cannot be interrupted from Python), and no problem starts after
--deadline-s: a recording round always ends, keeping what it recorded, and says which problems it left.
Without a GPU it says so once, in the kit's words, and exits 3 (the `cudnn-lab` exit codes).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import cudnn_lab as cl
from cudnn_lab.cli import say_error
from cudnn_lab.gpu.session import require_gpu
from cudnn_lab.results import RECORDED_DIR
from cudnn_lab.results.datasets import dataset_prefix
from cudnn_lab.gpu.device import end_program

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
    # Classic calls (one plan row each; RNNs one row per algorithm) and fusion beyond epilogues (issue 16).
    "softmax_fp16_channel": cl.SoftmaxSpec(n=256, c=1000, h=1, w=1, algo="accurate", mode="channel", dtype="fp16"),
    "softmax_log_fp32_instance": cl.SoftmaxSpec(n=32, c=64, h=28, w=28, algo="log", mode="instance", layout="NCHW",
                                                dtype="fp32"),
    "activation_swish_fp16": cl.ActivationSpec(n=16, c=64, h=56, w=56, mode="swish", dtype="fp16"),
    # The copy an NCHW conv plan makes of conv_nchw_fp16_bias_relu's input, timed on its own.
    "transform_nchw_to_nhwc_fp16": cl.TransformSpec(n=16, c=64, h=56, w=56, layout="NCHW", out_layout="NHWC",
                                                    dtype="fp16", out_dtype="fp16"),
    "transform_fp32_to_bf16_nhwc": cl.TransformSpec(n=16, c=64, h=56, w=56, layout="NHWC", out_layout="NHWC",
                                                    dtype="fp32", out_dtype="bf16"),
    "rnn_lstm_fp16": cl.RnnSpec(cell="lstm", layers=2, hidden_size=512, input_size=512, seq_len=64, batch=32,
                                dtype="fp16"),
    "rnn_gru_fp32_bwd": cl.RnnSpec(cell="gru", layers=1, hidden_size=256, input_size=256, seq_len=32, batch=16,
                                   dtype="fp32", direction="bwd"),
    "conv_genstats_fp16": cl.ConvGenstatsSpec(n=16, c=64, h=56, w=56, k=128, dtype="fp16"),
    "conv_prologue_genstats_fp16": cl.ConvPrologueSpec(n=16, c=64, h=56, w=56, k=128, dtype="fp16",
                                                       param_dtype="fp16", genstats=True),
    # More fusions 9.19 runs on Hopper, and standalone reductions (issue 28).
    "conv_reduction_fp16_per_channel": cl.ConvReductionSpec(n=16, c=64, h=56, w=56, k=128, dtype="fp16",
                                                            axes="nhw"),
    "conv_concat_fp16": cl.ConvConcatSpec(n=16, c=64, h=56, w=56, k=128, k0=128, dtype="fp16"),
    "conv_dgrad_relu_fp16": cl.ConvDgradReluSpec(n=16, c=64, h=56, w=56, k=128, dtype="fp16"),
    "reduction_add_per_channel_fp16": cl.ReductionSpec(n=32, c=256, h=56, w=56, mode="add", axes="nhw",
                                                       dtype="fp16"),
    # FP8 (issue 15): the same GEMM in e4m3 and bf16 (both TN), an FP8 conv, FP8 attention forward and backward.
    "matmul_fp8_e4m3_4096": cl.MatmulSpec(m=4096, n=4096, k=4096, dtype="fp8_e4m3", transpose_b=True,
                                          out_dtype="bf16", amax=True),
    "matmul_bf16_tn_4096": cl.MatmulSpec(m=4096, n=4096, k=4096, dtype="bf16", transpose_b=True),
    "conv_fp8_e4m3_nhwc": cl.ConvSpec(n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC",
                                      dtype="fp8_e4m3", out_dtype="fp16"),
    "sdpa_fp8_e4m3": cl.SdpaSpec(batch=2, heads=16, seq_q=2048, seq_kv=2048, head_dim=128, causal=True,
                                 dtype="fp8_e4m3"),
    "sdpa_fp8_e4m3_training": cl.SdpaSpec(batch=2, heads=16, seq_q=2048, seq_kv=2048, head_dim=128, causal=True,
                                          dtype="fp8_e4m3", direction="fwd_training"),
    "sdpa_fp8_e4m3_bwd": cl.SdpaSpec(batch=2, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                     dtype="fp8_e4m3", direction="bwd"),
    # Attention variants (issue 15): lengths, ragged, bias, ALiBi, dropout, decode.
    "sdpa_padding_bf16": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                     dtype="bf16", seq_lens_q=(1024, 700, 512, 129),
                                     seq_lens_kv=(1024, 700, 512, 129)),
    "sdpa_ragged_bf16": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                    dtype="bf16", seq_lens_q=(1024, 700, 512, 129),
                                    seq_lens_kv=(1024, 700, 512, 129), ragged=True),
    "sdpa_bias_bf16": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, dtype="bf16",
                                  bias="tensor"),
    "sdpa_alibi_bf16": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                   dtype="bf16", bias="alibi"),
    "sdpa_dropout_bf16": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                     dtype="bf16", direction="fwd_training", dropout=0.1),
    "sdpa_decode_bf16": cl.SdpaSpec(batch=8, heads=32, kv_heads=8, seq_q=1, seq_kv=8192, head_dim=128,
                                    causal=True, diagonal_alignment="bottom_right", dtype="bf16"),
    # Paged K/V cache and sink tokens (issue 28): Llama-3-70B decode over 8k-32k tokens in 64-token pages, a sink
    # prefill (gpt-oss style, GQA).
    "sdpa_paged_decode_bf16": cl.SdpaSpec(batch=4, heads=64, kv_heads=8, seq_q=1, seq_kv=32768, head_dim=128,
                                          causal=True, diagonal_alignment="bottom_right", dtype="bf16", page_size=64,
                                          seq_lens_kv=(32768, 24576, 12000, 8192)),
    "sdpa_sink_bf16": cl.SdpaSpec(batch=2, heads=64, kv_heads=8, seq_q=2048, seq_kv=2048, head_dim=64, causal=True,
                                  dtype="bf16", sink=True),
    # The Lab's default problem of every family, so each operation has a recording to show without a GPU.
    "sdpa_bf16_causal": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                    dtype="bf16"),
    "sdpa_bf16_causal_bwd": cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True,
                                        dtype="bf16", direction="bwd"),
    "layernorm_bf16": cl.NormSpec(kind="layernorm", phase="inference", rows=8192, features=1024, dtype="bf16"),
    "rmsnorm_bf16_training": cl.NormSpec(kind="rmsnorm", phase="training", rows=8192, features=4096, dtype="bf16"),
    "batchnorm_fp16_training": cl.NormSpec(kind="batchnorm", phase="training", n=32, c=64, h=56, w=56,
                                           layout="NHWC", dtype="fp16"),
    "pool_max_fp16": cl.PoolSpec(n=16, c=64, h=56, w=56, mode="max", window=3, stride=2, padding=1, dtype="fp16"),
    # MoE grouped GEMM (issue 28): 8 experts x 2048 tokens balanced, and the same tokens Zipf-skewed.
    "moe_bf16_8x2048": cl.MoeSpec(experts=8, tokens=8 * 2048, hidden_in=2048, hidden_out=2048, dtype="bf16"),
    "moe_bf16_8x2048_zipf": cl.MoeSpec(experts=8, tokens=8 * 2048, hidden_in=2048, hidden_out=2048, dtype="bf16",
                                       distribution="zipf", skew=1.2),
    # Issue 38: the shapes real models run. A video VAE's 3-D conv forward and backward (Wan2.1, 384 channels on a
    # 480x832 video's latent grid), a depthwise video conv (X3D-M), DeepSeek-V3's MLA (Q/K 192, V/O 128; the
    # backward at the 16 heads of one GPU under 8-way tensor parallelism) and Phi-3-mini's head size 96.
    "conv3d_wan_vae_bf16": cl.preset("Wan2.1 video VAE conv3d"),
    "conv3d_wan_vae_dgrad_bf16": cl.preset("Wan2.1 video VAE conv3d dgrad"),
    "conv3d_wan_vae_wgrad_bf16": cl.preset("Wan2.1 video VAE conv3d").replace(direction="wgrad"),
    "conv3d_x3d_depthwise_fp16": cl.preset("X3D-M depthwise conv3d"),
    "sdpa_mla_prefill_bf16": cl.preset("DeepSeek-V3 MLA prefill"),
    "sdpa_mla_bwd_bf16": cl.preset("DeepSeek-V3 MLA training backward").replace(heads=16),
    "sdpa_phi3_d96_bf16": cl.preset("Phi-3-mini attention (d 96)"),
    # the forward past head size 256: DeepSeek-V3's absorbed MLA decode (Q/K 576, V/O 512, one latent K/V head)
    "sdpa_mla_absorbed_decode_bf16": cl.preset("DeepSeek-V3 MLA decode, absorbed (576/512)"),
}
#: Problems whose run also samples the engine space beyond the heuristics' proposals (plan anatomy).
EXPLORE = {"conv_nhwc_fp16": 200}


#: Recorded first, so a round cut short still has every family's Lab default and the engine-space sample.
FIRST = ("conv_nhwc_fp16_bias_relu", "matmul_fp16_bias", "sdpa_bf16_causal", "layernorm_bf16", "pool_max_fp16",
         "conv_nhwc_fp16", "conv_nchw_fp16_bias_relu", "matmul_fp8_e4m3_4096", "matmul_bf16_tn_4096",
         "sdpa_bf16_causal_bwd", "batchnorm_fp16_training", "rmsnorm_bf16_training", "rnn_lstm_fp16",
         "softmax_fp16_channel", "activation_swish_fp16", "transform_nchw_to_nhwc_fp16", "conv_genstats_fp16")


def _priority(name: str) -> int:
    return FIRST.index(name) if name in FIRST else len(FIRST)


def record_one(name: str, args: argparse.Namespace) -> str:
    """Run one problem with every plan and save it; the line to print."""
    spec = PROBLEMS[name]
    explore = EXPLORE.get(name, 0) if args.explore is None or name not in EXPLORE else args.explore
    result = cl.run(spec, plans="all", heuristics=tuple(args.heuristics.split(",")), explore=explore,
                    explore_time_s=30.0, time_cap_s=args.time_cap_s)
    path = result.save(args.out / f"{dataset_prefix(result.device['gpu'])}_{name}.json")
    lines = result.summary().splitlines()
    return f"{path.name}: {len(result.plans)} plans, {len(result.ok)} ran; {lines[min(2, len(lines) - 1)]}"


def worker(names: list[str], args: argparse.Namespace) -> None:
    """Record ``names`` in order, one JSON line per problem on stdout (the parent reads them)."""
    for name in names:
        # A stack dump on stderr if this problem hangs: the parent kills the worker after the timeout.
        faulthandler.dump_traceback_later(max(args.problem_timeout_s - 5, 1), exit=False)
        t0 = time.perf_counter()
        try:
            line, ok = record_one(name, args), True
        except cl.CudnnLabError as e:  # one problem that fails must not stop the others
            line, ok = str(e).splitlines()[0] if str(e) else type(e).__name__, False
        faulthandler.cancel_dump_traceback_later()
        print(json.dumps({"name": name, "ok": ok, "line": line, "s": round(time.perf_counter() - t0, 1)}),
              flush=True)


def parent(names: list[str], args: argparse.Namespace) -> int:
    """Run workers over ``names``, restarting past a problem that hangs; stop starting problems at the deadline."""
    t_end = time.monotonic() + args.deadline_s if args.deadline_s else float("inf")
    done: dict[str, str] = {}
    todo = list(names)
    while todo and time.monotonic() < t_end:
        cmd = [sys.executable, "-u", __file__, "--worker", "--out", str(args.out), "--heuristics", args.heuristics,
               "--time-cap-s", str(args.time_cap_s), "--problem-timeout-s", str(args.problem_timeout_s),
               "--only", *todo] + ([] if args.explore is None else ["--explore", str(args.explore)])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, bufsize=0)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        pending = b""
        started = time.monotonic()
        while todo:
            limit = min(started + args.problem_timeout_s, t_end) - time.monotonic()
            if b"\n" not in pending and (limit <= 0 or not sel.select(timeout=limit)):
                proc.kill()
                proc.wait()
                name = todo.pop(0)
                why = "timed out" if time.monotonic() < t_end else "deadline reached"
                done[name] = f"not recorded: {why} after {time.monotonic() - started:.0f} s"
                print(f"{name}: {done[name]}", flush=True)
                break
            if b"\n" not in pending:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if chunk:
                    pending += chunk
                    continue
                proc.wait()  # end of output: the worker died (a crash inside CUDA); skip the problem it was on
                name = todo.pop(0)
                done[name] = f"not recorded: the worker exited with {proc.returncode}"
                print(f"{name}: {done[name]}", flush=True)
                break
            raw, _, pending = pending.partition(b"\n")
            try:
                msg = json.loads(raw)
            except json.JSONDecodeError:
                continue
            name = msg["name"]
            if name in todo:
                todo.remove(name)
            done[name] = ("" if msg["ok"] else "not recorded: ") + msg["line"]
            print(f"{name} ({msg['s']} s): {done[name]}", flush=True)
            started = time.monotonic()
        else:
            proc.wait()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    missed = [n for n in names if n not in done or done[n].startswith("not recorded")]
    print(f"recorded {len(names) - len(missed)} of {len(names)}" + (f"; not recorded: {', '.join(missed)}" if missed
                                                                       else ""), flush=True)
    return 0 if not missed else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RECORDED_DIR)
    parser.add_argument("--only", nargs="+", choices=sorted(PROBLEMS), help="record only these problems")
    parser.add_argument("--skip", nargs="+", choices=sorted(PROBLEMS), default=[], help="leave these out")
    parser.add_argument("--heuristics", default="A,B,FALLBACK", help="heuristic modes, comma separated")
    parser.add_argument("--time-cap-s", type=float, default=0.5, help="seconds of sampling per plan")
    parser.add_argument("--explore", type=int, default=None, help="engine-space sample size for the EXPLORE problems")
    parser.add_argument("--problem-timeout-s", type=int, default=120, help="give up on a problem after this long")
    parser.add_argument("--deadline-s", type=float, default=0, help="start no problem after this many seconds")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.worker:  # once, before any worker: without a GPU every problem would fail with the same message
        try:
            require_gpu(0)
        except cl.NoGPUError as e:
            sys.exit(say_error("record.py", e))
    args.out.mkdir(parents=True, exist_ok=True)
    names = [n for n in (args.only or sorted(PROBLEMS, key=_priority)) if n not in args.skip]
    if args.worker:
        worker(names, args)
    else:
        sys.exit(parent(names, args))


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
