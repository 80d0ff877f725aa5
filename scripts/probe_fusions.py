"""Ask this GPU's cuDNN which fusion patterns beyond epilogues it runs: for each candidate (taken from the cuDNN
frontend's samples and tests), build the frontend graph, ask heuristics A and FALLBACK, build the first plan and run
it once. Prints a Markdown table (pattern, plans, first plan, ran, cuDNN's answer) for docs/FINDINGS.md.

Run on a GPU machine:  python scripts/probe_fusions.py [--json out.json]
With ``--variants``: the prologue and bf16 genstats over data types, op names and virtual-tensor settings, plans
per heuristic mode (what the kit's recipes follow: docs/FINDINGS.md, 2026-11-22).

The candidates and where they come from (NVIDIA/cudnn-frontend):
- conv_fprop + genstats, and scale-bias-relu -> conv_fprop (+ genstats): samples/cpp/convolution/fprop.cpp "SBRCS",
  test/python/test_conv_genstats.py;
- conv_fprop + reduction over channels: test/python/test_conv_reduction.py (and the legacy "ConvColReduction");
- conv_fprop + concatenate in place: samples/cpp/convolution/fprop.cpp "Convolution fprop concatenate" (9.8.0+);
- concatenate alone, relu alone: samples/cpp/membound (9.22.0+, Blackwell in the samples);
- conv_dgrad + relu_backward: the legacy "DgradDrelu" sample (the backward of conv-relu);
- conv_fprop + bias + relu -> genstats: an epilogue and the statistics of its result in one graph.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

N, C, H, W, K = 8, 64, 28, 28, 64


def _nhwc(dims: list[int]) -> list[int]:
    n, c, h, w = dims
    return [c * h * w, 1, c * w, c]


class Probe:
    """A graph under construction with the tensors to feed it (name -> (tensor, dims, strides, torch dtype))."""

    def __init__(self, handle: Any, io: str = "HALF", intermediate: str = "FLOAT") -> None:
        import cudnn

        self.cudnn = cudnn
        extra = {} if handle is None else {"handle": handle}
        self.g = cudnn.pygraph(io_data_type=getattr(cudnn.data_type, io),
                               intermediate_data_type=getattr(cudnn.data_type, intermediate),
                               compute_data_type=cudnn.data_type.FLOAT, **extra)
        self.feed: dict[str, tuple[Any, list[int], list[int], str]] = {}

    def tensor(self, name: str, dims: list[int], dtype: str = "HALF") -> Any:
        strides = _nhwc(dims) if len(dims) == 4 else [int(x) for x in _row_major(dims)]
        t = self.g.tensor(name=name, dim=dims, stride=strides, data_type=getattr(self.cudnn.data_type, dtype))
        self.feed[name] = (t, dims, strides, dtype)
        return t

    def output(self, t: Any, name: str, dims: list[int], dtype: str = "HALF") -> Any:
        strides = _nhwc(dims) if len(dims) == 4 else _row_major(dims)
        t.set_name(name).set_output(True).set_dim(dims).set_stride(strides).set_data_type(
            getattr(self.cudnn.data_type, dtype))
        self.feed[name] = (t, dims, strides, dtype)
        return t

    def conv(self, x: Any, w: Any) -> Any:
        return self.g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1], dilation=[1, 1],
                                 compute_data_type=self.cudnn.data_type.FLOAT)


def _row_major(dims: list[int]) -> list[int]:
    out, step = [], 1
    for d in reversed(dims):
        out.append(step)
        step *= d
    return list(reversed(out))


def _float(p: Probe) -> dict[str, Any]:
    return {"compute_data_type": p.cudnn.data_type.FLOAT}


def conv_genstats(p: Probe) -> None:
    y = p.output(p.conv(p.tensor("X", [N, C, H, W]), p.tensor("W", [K, C, 3, 3])), "Y", [N, K, H, W])
    s, q = p.g.genstats(input=y, **_float(p))
    p.output(s, "SUM", [1, K, 1, 1], "FLOAT")
    p.output(q, "SQ_SUM", [1, K, 1, 1], "FLOAT")


def _prologue(p: Probe, param: str) -> Any:
    x = p.tensor("X", [N, C, H, W])
    a = p.g.scale(input=x, scale=p.tensor("scale", [1, C, 1, 1], param), **_float(p))
    b = p.g.bias(input=a, bias=p.tensor("bias", [1, C, 1, 1], param), **_float(p))
    # the conv's image in the io type: left in the float32 intermediate type, 9.19 has no engine (--variants)
    return p.g.relu(input=b, **_float(p)).set_data_type(p.cudnn.data_type.HALF)


def prologue_conv(p: Probe, param: str = "FLOAT") -> None:
    p.output(p.conv(_prologue(p, param), p.tensor("W", [K, C, 3, 3])), "Y", [N, K, H, W])


def prologue_conv_genstats(p: Probe) -> None:
    y = p.output(p.conv(_prologue(p, "HALF"), p.tensor("W", [K, C, 3, 3])), "Y", [N, K, H, W])
    s, q = p.g.genstats(input=y, **_float(p))
    p.output(s, "SUM", [1, K, 1, 1], "FLOAT")
    p.output(q, "SQ_SUM", [1, K, 1, 1], "FLOAT")


def conv_channel_reduction(p: Probe) -> None:
    y = p.conv(p.tensor("X", [N, C, H, W]), p.tensor("W", [K, C, 3, 3]))
    r = p.g.reduction(input=y, mode=p.cudnn.reduction_mode.ADD, **_float(p))
    p.output(r, "R", [N, 1, H, W], "FLOAT")


def conv_concatenate_in_place(p: Probe) -> None:
    y = p.conv(p.tensor("X", [N, C, H, W]), p.tensor("W", [K, C, 3, 3]))
    y.set_data_type(p.cudnn.data_type.HALF)
    other = p.tensor("Y0", [N, K, H, W])
    out = p.g.concatenate(inputs=[y, other], axis=1, in_place_index=1)
    p.output(out, "Y1", [N, 2 * K, H, W])


def concatenate_alone(p: Probe) -> None:
    out = p.g.concatenate(inputs=[p.tensor("A", [N, C, H, W]), p.tensor("B", [N, C, H, W])], axis=1)
    p.output(out, "Y", [N, 2 * C, H, W])


def relu_alone(p: Probe) -> None:
    p.output(p.g.relu(input=p.tensor("X", [N, C, H, W]), **_float(p)), "Y", [N, C, H, W])


def dgrad_drelu(p: Probe) -> None:
    dx = p.g.conv_dgrad(loss=p.tensor("DY", [N, K, H, W]), filter=p.tensor("W", [K, C, 3, 3]), padding=[1, 1],
                        stride=[1, 1], dilation=[1, 1], **_float(p))
    dx.set_dim([N, C, H, W]).set_stride(_nhwc([N, C, H, W]))
    out = p.g.relu_backward(loss=dx, input=p.tensor("X", [N, C, H, W]), **_float(p))
    p.output(out, "DX", [N, C, H, W])


def conv_bias_relu_genstats(p: Probe) -> None:
    y = p.conv(p.tensor("X", [N, C, H, W]), p.tensor("W", [K, C, 3, 3]))
    b = p.g.bias(input=y, bias=p.tensor("bias", [1, K, 1, 1]), **_float(p))
    r = p.output(p.g.relu(input=b, **_float(p)), "Y", [N, K, H, W])
    s, q = p.g.genstats(input=r, **_float(p))
    p.output(s, "SUM", [1, K, 1, 1], "FLOAT")
    p.output(q, "SQ_SUM", [1, K, 1, 1], "FLOAT")


CANDIDATES: dict[str, Callable[[Probe], None]] = {
    "conv_fprop + genstats": conv_genstats,
    "scale+bias+relu -> conv_fprop (fp32 params)": prologue_conv,
    "scale+bias+relu -> conv_fprop (fp16 params)": lambda p: prologue_conv(p, "HALF"),
    "scale+bias+relu -> conv_fprop + genstats (SBRCS, fp16 params)": prologue_conv_genstats,
    "conv_fprop + bias + relu -> genstats": conv_bias_relu_genstats,
    "conv_fprop + reduction over channels": conv_channel_reduction,
    "conv_fprop + concatenate (in place)": conv_concatenate_in_place,
    "conv_dgrad + relu_backward": dgrad_drelu,
    "concatenate alone": concatenate_alone,
    "relu alone": relu_alone,
}


# --- Recipe variants of the prologue and of bf16 genstats (what changes cuDNN's answer) -----------------------------

def prologue_variant(p: Probe, param: str, op_compute: bool, ops: str, virtual: str, genstats: bool,
                     dtype: str = "HALF") -> None:
    """relu(x * scale + bias) -> conv_fprop (-> genstats). ``ops``: 'scale_bias' (graph.scale/bias) or 'mul_add';
    ``virtual``: '' (frontend infers), 'dims' (dims and NHWC strides set on each virtual tensor, as the kit does),
    'dims+io' (also its data type set to the io type) or 'conv_in_io' (only the conv's input set to the io type)."""
    kw = _float(p) if op_compute else {}
    x = p.tensor("X", [N, C, H, W], dtype)
    s, b = p.tensor("scale", [1, C, 1, 1], param), p.tensor("bias", [1, C, 1, 1], param)
    a = (p.g.scale(input=x, scale=s, **kw) if ops == "scale_bias" else p.g.mul(a=x, b=s, **kw))
    a2 = (p.g.bias(input=a, bias=b, **kw) if ops == "scale_bias" else p.g.add(a=a, b=b, **kw))
    r = p.g.relu(input=a2, **kw)
    for t in (a, a2, r):
        if virtual.startswith("dims"):
            t.set_dim([N, C, H, W]).set_stride(_nhwc([N, C, H, W]))
        if virtual == "dims+io" or (virtual == "conv_in_io" and t is r):
            t.set_data_type(getattr(p.cudnn.data_type, dtype))
    y = p.output(p.conv(r, p.tensor("W", [K, C, 3, 3], dtype)), "Y", [N, K, H, W], dtype)
    if genstats:
        sm, sq = p.g.genstats(input=y, **_float(p))
        p.output(sm, "SUM", [1, K, 1, 1], "FLOAT")
        p.output(sq, "SQ_SUM", [1, K, 1, 1], "FLOAT")


def genstats_variant(p: Probe, dtype: str, op_compute: bool) -> None:
    y = p.output(p.conv(p.tensor("X", [N, C, H, W], dtype), p.tensor("W", [K, C, 3, 3], dtype)), "Y",
                 [N, K, H, W], dtype)
    sm, sq = p.g.genstats(input=y, **(_float(p) if op_compute else {}))
    p.output(sm, "SUM", [1, K, 1, 1], "FLOAT")
    p.output(sq, "SQ_SUM", [1, K, 1, 1], "FLOAT")


def variants() -> list[tuple[str, str, str, Callable[[Probe], None]]]:
    """(label, io, intermediate, build): the prologue over intermediate type x params x op compute type x op names x
    virtual-tensor settings x genstats, then bf16 genstats and bf16 prologues."""
    out = []
    for inter in ("FLOAT", "HALF"):
        for genstats in (False, True):
            for param in ("HALF", "FLOAT"):
                for op_compute in (True, False):
                    for ops in ("scale_bias", "mul_add"):
                        for virtual in ("", "dims", "conv_in_io"):
                            compute = "FLOAT" if op_compute else "-"
                            label = (f"prologue inter={inter} params={param} op_compute={compute}"
                                     f" ops={ops} virtual={virtual or '-'} genstats={genstats}")
                            out.append((label, "HALF", inter, lambda p, a=(param, op_compute, ops, virtual, genstats):
                                        prologue_variant(p, *a)))
    for inter in ("FLOAT", "BFLOAT16"):
        for op_compute in (True, False):
            out.append((f"bf16 conv+genstats inter={inter} op_compute={op_compute}", "BFLOAT16", inter,
                        lambda p, o=op_compute: genstats_variant(p, "BFLOAT16", o)))
        for genstats in (False, True):
            for param in ("BFLOAT16", "FLOAT"):
                for virtual in ("", "dims", "conv_in_io"):
                    out.append((f"bf16 prologue inter={inter} params={param} virtual={virtual or '-'} "
                                f"genstats={genstats}", "BFLOAT16", inter,
                                lambda p, a=(param, True, "scale_bias", virtual, genstats):
                                prologue_variant(p, *a, dtype="BFLOAT16")))
    return out


def probe_modes(name: str, io: str, inter: str, build: Callable[[Probe], None], handle: Any) -> dict[str, Any]:
    """Plans per heuristic mode (A, B, FALLBACK; each a fresh graph), then on A+FALLBACK: plan names, how many
    built, and one run of the first that built."""
    import cudnn
    import torch

    row: dict[str, Any] = {"pattern": name, "A": 0, "B": 0, "FALLBACK": 0, "plans": [], "built": 0, "ran": False,
                           "answer": ""}
    for mode in ("A", "B", "FALLBACK"):
        try:
            p = Probe(handle, io, inter)
            build(p)
            p.g.validate()
            p.g.build_operation_graph()
            p.g.create_execution_plans([getattr(cudnn.heur_mode, mode)])
            row[mode] = p.g.get_execution_plan_count()
        except Exception as e:  # noqa: BLE001 - cuDNN's answer is the result
            row[mode] = 0
            row.setdefault("answers", {})[mode] = " ".join(str(e).split())[:300]
    modes = [m for m in ("A", "B", "FALLBACK") if row[m]]
    if not modes:
        row["answer"] = row.get("answers", {}).get("A", "")
        return row
    try:
        p = Probe(handle, io, inter)
        build(p)
        g = p.g
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([getattr(cudnn.heur_mode, m) for m in modes])
        first = None
        for i in range(g.get_execution_plan_count()):
            row["plans"].append(g.get_plan_name_at_index(i))
            try:
                g.build_plan_at_index(i)
                row["built"] += 1
                first = i if first is None else first
            except Exception as e:  # noqa: BLE001
                row["answer"] = " ".join(str(e).split())[:200]
        if first is not None:
            dtypes = {"HALF": torch.float16, "FLOAT": torch.float32, "BFLOAT16": torch.bfloat16}
            feed = {t: torch.empty_strided(dims, strides, dtype=dtypes[dt], device="cuda").uniform_(0, 1)
                    for t, dims, strides, dt in p.feed.values()}
            ws = torch.empty(max(g.get_workspace_size_plan_at_index(first), 1), dtype=torch.uint8, device="cuda")
            g.execute_plan_at_index(feed, ws, index=first, handle=handle)
            torch.cuda.synchronize()
            row["ran"], row["answer"] = True, "ran"
    except Exception as e:  # noqa: BLE001
        row["answer"] = " ".join(str(e).split())[:300]
    return row


def probe(name: str, build: Callable[[Probe], None], handle: Any) -> dict[str, Any]:
    """What cuDNN answers for one candidate: stage reached, plan count, first plan, ran once or the message."""
    import cudnn
    import torch

    row: dict[str, Any] = {"pattern": name, "plans": 0, "first_plan": "", "ran": False, "answer": ""}
    try:
        p = Probe(handle)
        build(p)
        g = p.g
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        row["plans"] = g.get_execution_plan_count()
        g.check_support()
        g.build_plan_at_index(0)
        row["first_plan"] = g.get_plan_name_at_index(0)
        dtypes = {"HALF": torch.float16, "FLOAT": torch.float32, "BFLOAT16": torch.bfloat16}
        feed = {t: torch.empty_strided(dims, strides, dtype=dtypes[dt], device="cuda").uniform_(0, 1)
                for t, dims, strides, dt in p.feed.values()}
        ws = torch.empty(max(g.get_workspace_size_plan_at_index(0), 1), dtype=torch.uint8, device="cuda")
        g.execute_plan_at_index(feed, ws, index=0, handle=handle)
        torch.cuda.synchronize()
        row["ran"] = True
        row["answer"] = "ran"
    except Exception as e:  # noqa: BLE001 - cuDNN's answer is the result
        row["answer"] = " ".join(str(e).split())[:240]
    return row


def main() -> None:
    import cudnn
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--variants", action="store_true",
                        help="probe recipe variants of the prologue and of bf16 genstats instead (per heuristic mode)")
    args = parser.parse_args()
    handle = cudnn.create_handle()
    if args.variants:
        _print_variants(handle, args.json)
        return
    rows = [probe(name, build, handle) for name, build in CANDIDATES.items()]
    gpu = torch.cuda.get_device_name()
    print(f"{gpu}, cuDNN {cudnn.backend_version()}, frontend {cudnn.__version__}; NHWC fp16 n{N} c{C} {H}x{W} k{K}\n")
    print("| pattern | plans (A+FALLBACK) | first plan | ran | cuDNN's answer |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['pattern']} | {r['plans']} | {r['first_plan']} | {r['ran']} | {r['answer']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "cudnn": int(cudnn.backend_version()), "rows": rows}, f, indent=1)


def _print_variants(handle: Any, path: str | None) -> None:
    import cudnn
    import torch

    print(f"{torch.cuda.get_device_name()}, cuDNN {cudnn.backend_version()}, frontend {cudnn.__version__}; "
          f"NHWC n{N} c{C} {H}x{W} k{K} 3x3\n")
    print("| variant | A | B | FALLBACK | built | ran | first plans | answer |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    rows = []
    for label, io, inter, build in variants():
        r = probe_modes(label, io, inter, build, handle)
        rows.append(r)
        print(f"| {label} | {r['A']} | {r['B']} | {r['FALLBACK']} | {r['built']} | {r['ran']} | "
              f"{' '.join(r['plans'][:3])} | {r['answer'][:160]} |", flush=True)
        if path:
            with open(path, "w") as f:
                json.dump(rows, f, indent=1)


if __name__ == "__main__":
    from cudnn_lab.gpu.device import end_program

    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
