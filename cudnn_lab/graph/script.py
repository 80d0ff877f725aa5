"""Emit a standalone Python script (cudnn + torch only) that rebuilds, runs and checks a spec's graph.

Meant for bug reports and for students who want to see the frontend calls behind a drawing.
"""

from __future__ import annotations

import textwrap

from ..specs import Spec
from .families import reference_code
from .recipe import CUDNN_DTYPES, Recipe

_TORCH_DTYPES = {"fp32": "torch.float32", "fp16": "torch.float16", "bf16": "torch.bfloat16", "fp64": "torch.float64",
                 "fp8_e4m3": "torch.float8_e4m3fn", "fp8_e5m2": "torch.float8_e5m2", "int32": "torch.int32",
                 "int64": "torch.int64"}


def _enum_dt(name: str) -> str:
    return f"cudnn.data_type.{CUDNN_DTYPES[name]}"


def _builder(recipe: Recipe) -> str:
    lines = [
        "def build_graph(handle=None):",
        '    """The cuDNN graph, every tensor with explicit dims, strides and dtype; returns (graph, tensors)."""',
        "    extra = {} if handle is None else {'handle': handle}",
        f"    graph = cudnn.pygraph(io_data_type={_enum_dt(recipe.io_dtype)},",
        f"                          intermediate_data_type={_enum_dt(recipe.intermediate_dtype)},",
        f"                          compute_data_type={_enum_dt(recipe.compute_dtype)}, **extra)",
        "    tensors = {}",
    ]
    for t in recipe.inputs:
        by_value = ", is_pass_by_value=True" if t.value is not None else ""
        lines.append(f"    tensors[{t.name!r}] = graph.tensor(name={t.name!r}, dim={list(t.dims)}, "
                     f"stride={list(t.strides)}, data_type={_enum_dt(t.dtype or recipe.io_dtype)}{by_value})")
    for t in recipe.inputs:
        if t.ragged_offset:
            lines.append(f"    tensors[{t.name!r}].set_ragged_offset(tensors[{t.ragged_offset!r}])")
    for op in recipe.ops:
        args = [f"{kw}=[{', '.join(f'tensors[{n!r}]' for n in name)}]" if isinstance(name, list)
                else f"{kw}=tensors[{name!r}]" for kw, name in op.arguments()]
        args += [f"{k}={v!r}" for k, v in op.params]
        args.append(f"name={op.name!r}")
        names = [n or "_" for n in op.results]
        target = "out" if len(names) == 1 else ", ".join(f"r{i}" for i in range(len(names)))
        lines.append(f"    {target} = graph.{op.method}({', '.join(args)})")
        for i, name in enumerate(op.results):
            if not name:
                continue
            var = "out" if len(names) == 1 else f"r{i}"
            decl = recipe.tensor(name)
            lines.append(f"    {var}.set_name({decl.name!r}).set_dim({list(decl.dims)})"
                         f".set_stride({list(decl.strides)})")
            if decl.role == "output":
                lines.append(f"    {var}.set_output(True).set_data_type({_enum_dt(decl.dtype or recipe.io_dtype)})")
            if decl.ragged_offset:
                lines.append(f"    {var}.set_ragged_offset(tensors[{decl.ragged_offset!r}])")
            lines.append(f"    tensors[{decl.name!r}] = {var}")
    lines.append("    return graph, tensors")
    return "\n".join(lines)


def _reference(spec: Spec) -> str:
    """Source of ``reference(inputs)``: the main output in float64, in the lines the spec's family writes."""
    lines = ["def reference(inputs):", '    """The same problem in PyTorch, in float64 (no TF32)."""']
    return "\n".join(lines + [f"    {line}" for line in reference_code(spec)])


def to_script(spec: Spec, recipe: Recipe, version: str) -> str:
    """The full script text: header, ``build_graph``, ``reference`` and a ``main`` that runs on a GPU."""
    ins = {t.name: (list(t.dims), list(t.strides), _TORCH_DTYPES[t.dtype or recipe.io_dtype], t.value)
           for t in recipe.inputs}
    outs = {t.name: (list(t.dims), list(t.strides), _TORCH_DTYPES[t.dtype or recipe.io_dtype])
            for t in recipe.outputs}
    header = f'''\
        #!/usr/bin/env python3
        """Standalone cuDNN repro, written by cudnn_lab {version}: {spec.label()}

        Spec: {spec.to_json()}
        Needs only `pip install nvidia-cudnn-frontend torch`. Building and inspecting the graph works anywhere;
        running it needs an NVIDIA GPU. Run: python3 this_file.py
        """
        import json
        import math

        import cudnn
        import torch

        INPUTS = {ins!r}
        OUTPUTS = {outs!r}
        '''
    main = '''\
        def random_input(dims, strides, dtype, value, fan_in):
            """Fresh uniform values in [-1, 1] (never zeros), scaled by 1/sqrt(fan_in), with the graph's strides.

            A scalar passed by value (epsilon, momentum) stays on the host with its fixed value.
            """
            if value is not None:
                return torch.full(dims, value, dtype=dtype)
            t = torch.empty_strided(dims, strides, dtype=torch.float32, device="cuda").uniform_(-1, 1)
            return (t / math.sqrt(fan_in)).to(dtype)


        def main():
            if not torch.cuda.is_available():
                graph, _ = build_graph()
                print(json.dumps(graph.inspect(), indent=1, default=str))  # enum params (SDPA's diagonal_alignment)
                print("No CUDA GPU: printed the graph instead of running it.")
                return
            torch.manual_seed(0)
            handle = cudnn.create_handle()
            graph, tensors = build_graph(handle)
            graph.validate()
            graph.build_operation_graph()
            graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
            graph.check_support()
            graph.build_plans()
            inputs = {name: random_input(d, s, eval(dt), v, fan_in=max(1, d[1] * (d[2] * d[3] if len(d) == 4 else 1))
                                         if name in ("W", "B") else 1)
                      for name, (d, s, dt, v) in INPUTS.items()}
            outputs = {name: torch.empty_strided(d, s, dtype=eval(dt), device="cuda").fill_(float("nan"))
                       for name, (d, s, dt) in OUTPUTS.items()}
            workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8, device="cuda")
            feed = {tensors[n]: t for n, t in {**inputs, **outputs}.items()}
            graph.execute(feed, workspace, handle=handle)
            torch.cuda.synchronize()
            name, actual = next(iter(outputs.items()))  # the main output; reference() computes it
            expected = reference(inputs)
            rel_l2 = ((actual.double() - expected).norm() / expected.norm()).item()
            print(f"{name}: relative L2 error {rel_l2:.3e}; NaNs {int(actual.isnan().sum())}; "
                  f"cuDNN {cudnn.backend_version()} on {torch.cuda.get_device_name()}")


        if __name__ == "__main__":
            main()
        '''
    return "\n".join([textwrap.dedent(header), _builder(recipe), "", "", _reference(spec), "", "",
                      textwrap.dedent(main)])
