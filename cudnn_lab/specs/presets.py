"""Real-model presets: the layers popular models run, with their published configurations, so a user picks
"DeepSeek-V3 MLA prefill" instead of typing eight numbers (issue 38). Pure data: each preset is a spec, the model's
published numbers it comes from and a source line; batch and sequence lengths are a typical choice, said so.

``presets()`` lists the names, ``preset(name)`` returns the spec, ``preset_info(name)`` the whole record.
"""

from __future__ import annotations

import dataclasses

from ..errors import OptionError
from .base import Spec
from .conv3d import Conv3dSpec
from .sdpa import SdpaSpec

__all__ = ["Preset", "PRESETS", "presets", "preset", "preset_info"]


@dataclasses.dataclass(frozen=True)
class Preset:
    """One model's layer: its ``spec``, what the model publishes (``config``, in words) and where (``source``)."""

    name: str
    spec: Spec
    config: str
    source: str

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "spec": self.spec.to_dict(), "config": self.config, "source": self.source}



_ALL: tuple[Preset, ...] = (
    Preset("DeepSeek-V3 MLA prefill",
           SdpaSpec(batch=1, heads=128, seq_q=4096, seq_kv=4096, head_dim=192, head_dim_v=128, dtype="bf16",
                    causal=True),
           "128 heads; Q/K head 192 (qk_nope_head_dim 128 + qk_rope_head_dim 64), V head 128 (v_head_dim); "
           "prefill runs MLA as multi-head attention; 4096-token chunk",
           "huggingface.co/deepseek-ai/DeepSeek-V3 config.json; DeepSeek-V3 report (arXiv:2412.19437), 2.1.1"),
    Preset("DeepSeek-V3 MLA training backward",
           SdpaSpec(batch=1, heads=128, seq_q=4096, seq_kv=4096, head_dim=192, head_dim_v=128, direction="bwd",
                    dtype="bf16", causal=True),
           "as the prefill, backward (dQ, dK, dV); 4096-token sequence",
           "huggingface.co/deepseek-ai/DeepSeek-V3 config.json; DeepSeek-V3 Technical Report (arXiv:2412.19437)"),
    Preset("DeepSeek-V3 MLA decode, absorbed (576/512)",
           SdpaSpec(batch=32, heads=128, kv_heads=1, seq_q=1, seq_kv=4096, head_dim=576, head_dim_v=512,
                    dtype="bf16"),
           "decode with the projections absorbed: 128 query heads share one latent K/V head; Q/K head 576 "
           "(kv_lora_rank 512 + qk_rope_head_dim 64), V head 512 (the latent); 32 sequences at 4096 tokens",
           "huggingface.co/deepseek-ai/DeepSeek-V3 config.json (kv_lora_rank 512, qk_rope_head_dim 64); FlashMLA's "
           "head sizes (d 576, dv 512)"),
    Preset("Phi-3-mini attention (d 96)",
           SdpaSpec(batch=1, heads=32, seq_q=4096, seq_kv=4096, head_dim=96, dtype="bf16", causal=True),
           "hidden 3072, 32 heads of 96, 32 K/V heads, 4k context",
           "huggingface.co/microsoft/Phi-3-mini-4k-instruct config.json"),
    Preset("Phi-2 attention (d 80)",
           SdpaSpec(batch=1, heads=32, seq_q=2048, seq_kv=2048, head_dim=80, dtype="fp16", layout="BSHD",
                    causal=True),
           "hidden 2560, 32 heads of 80, 2048 context",
           "huggingface.co/microsoft/phi-2 config.json"),
    Preset("ViT-B/16 attention",
           SdpaSpec(batch=32, heads=12, seq_q=197, seq_kv=197, head_dim=64, dtype="bf16", layout="BSHD"),
           "hidden 768, 12 heads of 64, 196 patches + class token at 224x224, no mask; batch 32",
           "Dosovitskiy et al., An Image is Worth 16x16 Words (arXiv:2010.11929), Table 1"),
    Preset("Qwen2-VL vision attention (d 80)",
           SdpaSpec(batch=1, heads=16, seq_q=1024, seq_kv=1024, head_dim=80, dtype="bf16", layout="BSHD"),
           "vision encoder embed_dim 1280, 16 heads of 80, no mask; 1024 patches (a 448x448 image)",
           "huggingface.co/Qwen/Qwen2-VL-7B-Instruct config.json (vision_config)"),
    Preset("Llama-3.1-8B attention",
           SdpaSpec(batch=1, heads=32, kv_heads=8, seq_q=8192, seq_kv=8192, head_dim=128, dtype="bf16", causal=True),
           "32 query heads, 8 K/V heads (GQA), head 128; 8192-token prefill",
           "huggingface.co/meta-llama/Llama-3.1-8B config.json"),
    Preset("Wan2.1 video VAE conv3d",
           Conv3dSpec(n=1, c=384, d=6, h=60, w=104, k=384, t=3, r=3, s=3, padding=(0, 1, 1), layout="NDHWC",
                      dtype="bf16"),
           "causal 3x3x3 conv at 384 channels (dim 96, dim_mult 4) on a 480x832 video's latent grid (60x104), "
           "4 latent frames + 2 causal padding frames (the model pads time on the front only)",
           "github.com/Wan-Video/Wan2.1 wan/modules/vae.py (CausalConv3d, dim=96, dim_mult=[1, 2, 4, 4])"),
    Preset("Wan2.1 video VAE conv3d dgrad",
           Conv3dSpec(n=1, c=384, d=6, h=60, w=104, k=384, t=3, r=3, s=3, padding=(0, 1, 1), layout="NDHWC",
                      dtype="bf16", direction="dgrad"),
           "the VAE layer's data gradient (fine-tuning)",
           "github.com/Wan-Video/Wan2.1 wan/modules/vae.py"),
    Preset("Qwen2-VL vision patch conv3d",
           Conv3dSpec(n=1024, c=3, d=2, h=14, w=14, k=1280, t=2, r=14, s=14, padding=0, stride=(2, 14, 14),
                      layout="NCDHW", dtype="bf16"),
           "patch embedding: Conv3d(3, 1280, kernel=stride=(2, 14, 14), bias=False) over patches reshaped to "
           "[-1, 3, 2, 14, 14]; 1024 patches (a 448x448 image, 2 frames)",
           "huggingface transformers Qwen2-VL PatchEmbed (temporal_patch_size 2, patch_size 14, embed_dim 1280)"),
    Preset("X3D-M depthwise conv3d",
           Conv3dSpec(n=8, c=216, d=16, h=14, w=14, k=216, t=3, r=3, s=3, padding=1, groups=216, layout="NDHWC",
                      dtype="fp16"),
           "res4 bottleneck: depthwise 3x3x3 over 216 channels (96 x 2.25), 16 frames at 14x14 (224 input); "
           "batch 8",
           "Feichtenhofer, X3D (arXiv:2004.04730), Table 1 (X3D-M)"),
)

#: Every preset by name, in the order ``presets()`` lists them.
PRESETS: dict[str, Preset] = {p.name: p for p in _ALL}


def presets() -> tuple[str, ...]:
    """The names of the real-model presets, attention first, then 3-D convolutions."""
    return tuple(PRESETS)


def preset_info(name: str) -> Preset:
    """The preset ``name`` with its published configuration and source; OptionError listing the names otherwise."""
    if not isinstance(name, str) or name not in PRESETS:
        folded = {n.lower(): n for n in PRESETS}
        if isinstance(name, str) and name.strip().lower() in folded:
            return PRESETS[folded[name.strip().lower()]]
        raise OptionError("preset", name, f"must be one of the real-model presets: {'; '.join(PRESETS)} "
                          "(cl.presets() lists them)", where="preset")
    return PRESETS[name]


def preset(name: str) -> Spec:
    """The spec of the real-model preset ``name`` (see :func:`presets`); OptionError listing the names otherwise."""
    return preset_info(name).spec
