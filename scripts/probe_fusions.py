"""Ask this GPU's cuDNN which fusion patterns beyond epilogues it runs: for each candidate (taken from the cuDNN
frontend's samples and tests), build the frontend graph, ask heuristics A and FALLBACK, build the first plan and run
it once. Prints a Markdown table (pattern, plans, first plan, ran, cuDNN's answer) for docs/FINDINGS.md.

Run on a GPU machine:  python scripts/probe_fusions.py [--json out.json]

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
    return p.g.relu(input=b, **_float(p))


def prologue_conv(p: Probe, param: str = "FLOAT") -> None:
    p.output(p.conv(_prologue(p, param), p.tensor("W", [K, C, 3, 3])), "Y", [N, K, H, W])


def prologue_conv_genstats(p: Probe) -> None:
    y = p.output(p.conv(_prologue(p, "FLOAT"), p.tensor("W", [K, C, 3, 3])), "Y", [N, K, H, W])
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
    "scale+bias+relu -> conv_fprop + genstats (SBRCS)": prologue_conv_genstats,
    "conv_fprop + bias + relu -> genstats": conv_bias_relu_genstats,
    "conv_fprop + reduction over channels": conv_channel_reduction,
    "conv_fprop + concatenate (in place)": conv_concatenate_in_place,
    "conv_dgrad + relu_backward": dgrad_drelu,
    "concatenate alone": concatenate_alone,
    "relu alone": relu_alone,
}


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
        dtypes = {"HALF": torch.float16, "FLOAT": torch.float32}
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
    args = parser.parse_args()
    handle = cudnn.create_handle()
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


if __name__ == "__main__":
    main()
