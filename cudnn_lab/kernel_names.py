"""Reading GPU kernel names: what a CUPTI kernel name tells about the plan that launched it.

A plan's kernels (measured in ``gpu/kernels.py``) carry names such as
``sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroup`` or
``cudnn_generated_fort_native_sm90_matMul_knob_2_128x128x64_5_0``. This module turns a name into a plain reading
(layout transpose, implicit GEMM with its tile shape, runtime-compiled, cuBLASLt, Winograd, FFT, split-K reduction,
memset...) where the name tells it, and says nothing where it does not. Pure: no torch or cudnn import.
"""

from __future__ import annotations

import dataclasses
import re

#: Kinds of kernel, in the order a table lists them.
KINDS: tuple[str, ...] = ("transpose", "implicit_gemm", "gemm", "winograd", "fft", "split_k_reduction", "norm",
                          "attention", "pointwise", "memset", "memcpy", "framework", "other")

KIND_TEXT = {
    "transpose": "layout transpose",
    "implicit_gemm": "implicit GEMM convolution",
    "gemm": "GEMM",
    "winograd": "Winograd convolution step",
    "fft": "FFT convolution step",
    "split_k_reduction": "split-K reduction of partial sums",
    "norm": "normalization",
    "attention": "attention",
    "pointwise": "pointwise/elementwise",
    "memset": "memset (clears a buffer)",
    "memcpy": "memory copy",
    "framework": "PyTorch kernel (not cuDNN's)",
    "other": "kernel",
}


@dataclasses.dataclass(frozen=True)
class KernelReading:
    """What a kernel name tells: kind, origin (library / how built), architecture, tile shape and other tags."""

    name: str
    short: str
    kind: str
    origin: str
    arch: str = ""
    tile: str = ""
    direction: str = ""
    tags: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """One line: ``implicit GEMM convolution (fprop), tile 128x128x64, sm90, ...; cuDNN precompiled (xmma)``."""
        head = KIND_TEXT.get(self.kind, self.kind)
        if self.direction:
            head += f" ({self.direction})"
        bits = [head]
        if self.tile:
            bits.append(f"tile {self.tile}")
        if self.arch:
            bits.append(self.arch)
        bits += list(self.tags)
        text = ", ".join(bits)
        return f"{text}; {self.origin}" if self.origin else text


def short_name(name: str) -> str:
    """The kernel's function name without ``void``, namespaces, template arguments and parameters."""
    text = name.strip()
    if text.startswith("void "):
        text = text[5:]
    depth, out = 0, []
    for ch in text:  # drop <...> and (...) at any depth
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    base = "".join(out).strip()
    return base.rsplit("::", 1)[-1] or text


_ARCH = re.compile(r"(?:^|_)(sm_?\d{2,3}[a-z]?)(?:_|$)")
_TILESIZE = re.compile(r"tilesize(\d+x\d+(?:x\d+)?)")
_TILE3 = re.compile(r"(?:^|_)(\d+x\d+x\d+)(?:_|$)")
_TILE2 = re.compile(r"(?:^|_)(\d+x\d+)(?:_|$)")
_DIRECTIONS = (("fprop", "fprop"), ("dgrad", "dgrad"), ("wgrad", "wgrad"), ("convfwd", "fprop"),
               ("convdgrad", "dgrad"), ("convwgrad", "wgrad"), ("convbwddata", "dgrad"), ("convbwdfilter", "wgrad"))


def _arch(text: str) -> str:
    m = _ARCH.search(text)
    return m[1].replace("_", "") if m else ""


def _direction(low: str) -> str:
    for token, direction in _DIRECTIONS:
        if token in low:
            return direction
    return ""


def _precision_tags(low: str) -> list[str]:
    tags = []
    if "tf32" in low:
        tags.append("TF32 tensor cores")
    if "warpgroup" in low or "wgmma" in low:
        tags.append("Hopper warpgroup MMA")
    elif re.search(r"tensor\d+x\d+x\d+|tensorop|hmma|imma|_mma", low):
        tags.append("tensor cores")
    for fmt in ("f8", "e4m3", "e5m2"):
        if re.search(rf"(?:^|_){fmt}(?:_|$|f)", low):
            tags.append("FP8")
            break
    return tags


def read(name: str) -> KernelReading:
    """A plain reading of one kernel name (CUPTI's, demangled); ``kind='other'`` when the name tells nothing."""
    full = " ".join(str(name).split())
    short = short_name(full)
    low = full.lower()
    s_low = short.lower()
    arch = _arch(short)

    def make(kind: str, origin: str, **kw) -> KernelReading:
        return KernelReading(name=full, short=short, kind=kind, origin=origin, arch=kw.pop("arch", arch), **kw)

    if low.startswith("memset") or s_low.startswith("memset") or "[memset]" in low:
        return make("memset", "CUDA runtime (cudaMemsetAsync)")
    if low.startswith("memcpy") or "[memcpy]" in low:
        return make("memcpy", "CUDA runtime (cudaMemcpyAsync)")
    if "at::native" in low or "at::cuda" in low or low.startswith("aten::"):
        return make("framework", "PyTorch")

    m = re.search(r"(nchw|nhwc|ncdhw|ndhwc)to(nchw|nhwc|ncdhw|ndhwc)", s_low)
    if m:
        origin = "cuDNN precompiled" if "cudnn" in low else ""
        return make("transpose", origin, tags=(f"{m[1].upper()} -> {m[2].upper()}",))
    if "transpose" in s_low:
        lib = "cuBLAS" if "cublas" in low else "cuDNN" if "cudnn" in low else ""
        return make("transpose", lib)

    if "splitkreduce" in s_low or "split_k_reduce" in s_low or re.search(r"splitk.*reduc|reduc.*splitk", s_low):
        lib = "cuBLASLt" if "cublaslt" in low else "cuBLAS" if "cublas" in low else \
            "cuDNN" if "cudnn" in low else ""
        return make("split_k_reduction", lib)

    if s_low.startswith("nvjet"):
        m2 = re.search(r"_(\d+x\d+)_\d+x\d+_", short)
        tags = ["split-K"] if "splitk" in s_low else []
        return make("gemm", "cuBLASLt (nvjet)", tile=m2[1] if m2 else "", tags=tuple(tags + _precision_tags(s_low)))

    if s_low.startswith("cudnn_generated_fort_native"):
        rest = s_low[len("cudnn_generated_fort_native"):]
        kind = "implicit_gemm" if "conv" in rest else "attention" if ("sdpa" in rest or "flash" in rest) \
            else "gemm" if "matmul" in rest else "norm" if "norm" in rest else "other"
        m3 = re.search(r"knob_(\d+)", rest)
        tags = ([f"kernel config {m3[1]}"] if m3 else []) + _precision_tags(rest)
        t = _TILE3.search(rest)
        return make(kind, "cuDNN runtime-compiled (built when the plan is built)", tile=t[1] if t else "",
                    direction=_direction(rest), tags=tuple(tags))

    if "winograd" in low:
        m4 = re.search(r"(\d+x\d+)", short[short.lower().find("winograd"):]) if "winograd" in s_low else None
        step = next((w for w in ("data", "filter", "output") if w in s_low), "")
        return make("winograd", "cuDNN precompiled" if "cudnn" in low else "cuDNN",
                    tags=tuple(x for x in (f"{step} transform" if step else "", f"tile {m4[1]}" if m4 else "") if x))

    if re.search(r"fft|r2c|c2r", s_low):
        m5 = re.search(r"(r2c|c2r)", s_low)
        t2 = _TILE2.search(s_low)
        return make("fft", "cuDNN precompiled", tile=t2[1] if t2 else "",
                    tags=(("real -> complex" if m5[1] == "r2c" else "complex -> real"),) if m5 else ())

    if "xmma" in s_low or "implicit_gemm" in s_low or "implicit_convolve" in s_low or "scudnn" in s_low \
            or "cutlass" in low:
        direction = _direction(s_low)
        implicit = "implicit" in s_low or direction or "scudnn" in s_low or "conv" in low
        t = _TILESIZE.search(s_low) or _TILE3.search(s_low) or _TILE2.search(s_low)
        origin = "CUTLASS" if "cutlass" in low else "cuDNN precompiled (xmma)" if "xmma" in s_low \
            else "cuDNN precompiled"
        tags = _precision_tags(s_low)
        layout = re.search(r"_(nhwc|nchw|ndhwc|ncdhw)_tilesize", s_low)
        if layout:
            tags.append(f"output {layout[1].upper()}")
        return make("implicit_gemm" if implicit else "gemm", origin, tile=t[1] if t else "", direction=direction,
                    tags=tuple(tags))

    if re.search(r"gemm|gemv", s_low):
        lib = "cuBLAS" if re.search(r"^(ampere|volta|turing|maxwell|sm\d+)_[sdhc]gemm|cublas", s_low + low) else ""
        t = _TILE2.search(s_low)
        return make("gemm", lib, tile=t[1] if t else "", tags=tuple(_precision_tags(s_low)))

    if re.search(r"norm|bn_fw|bn_bw|batchnorm|layernorm|rmsnorm", s_low):
        return make("norm", "cuDNN" if "cudnn" in low else "")
    if re.search(r"sdpa|flash|fmha|attention", s_low):
        return make("attention", "cuDNN" if "cudnn" in low else "", tags=tuple(_precision_tags(s_low)))
    if re.search(r"pointwise|elementwise|op_generic_tensor", s_low):
        return make("pointwise", "cuDNN" if "cudnn" in low else "")
    return make("other", "cuDNN" if "cudnn" in low else "")


def describe(name: str) -> str:
    """``read(name).summary``: one line for tables and hover text."""
    return read(name).summary


def plan_story(kernel_names: list[str]) -> str:
    """One line about a plan's kernels together: ``2 layout transposes + implicit GEMM (fprop), tile 128x128x64``."""
    readings = [read(n) for n in kernel_names]
    if not readings:
        return "no kernels recorded"
    parts: list[str] = []
    counts: dict[str, int] = {}
    for r in readings:
        if r.kind in ("transpose", "memset", "memcpy", "split_k_reduction"):
            counts[r.kind] = counts.get(r.kind, 0) + 1
    main = [r for r in readings if r.kind not in counts]
    for kind, n in counts.items():
        word = {"transpose": "layout transpose", "memset": "memset", "memcpy": "copy",
                "split_k_reduction": "split-K reduction"}[kind]
        parts.append(f"{n} {word}{'s' if n > 1 else ''}")
    parts += [r.summary for r in main]
    return " + ".join(parts)
