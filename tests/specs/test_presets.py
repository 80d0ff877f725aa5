"""Real-model presets (issue 38): named after the models, each a valid spec with its published numbers and a source;
an unknown name is an OptionError listing the names; the CLI takes --preset where it takes a spec file."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab import cli
from cudnn_lab.specs.presets import PRESETS, preset_info

WANTED = ("DeepSeek-V3 MLA prefill", "Phi-3-mini attention (d 96)", "Phi-2 attention (d 80)", "ViT-B/16 attention",
          "Llama-3.1-8B attention", "Wan2.1 video VAE conv3d", "Qwen2-VL vision patch conv3d",
          "X3D-M depthwise conv3d")


def test_the_presets_are_listed_and_each_is_a_spec_with_a_source() -> None:
    names = cl.presets()
    assert set(WANTED) <= set(names) and len(set(names)) == len(names)
    for name in names:
        info = preset_info(name)
        assert isinstance(cl.preset(name), cl.Spec) and info.spec is cl.preset(name)
        assert info.source and info.config and info.to_dict()["spec"]["op"] == info.spec.op
        assert cl.spec_from_dict(info.spec.to_dict()) == info.spec  # round-trips as pure data


def test_the_published_numbers_are_the_specs() -> None:
    mla = cl.preset("DeepSeek-V3 MLA prefill")
    assert (mla.heads, mla.head_dim, mla.d_v, mla.causal) == (128, 192, 128, True)
    assert cl.preset("Phi-3-mini attention (d 96)").head_dim == 96
    assert cl.preset("Phi-2 attention (d 80)").head_dim == 80
    vit = cl.preset("ViT-B/16 attention")
    assert (vit.heads, vit.head_dim, vit.seq_q, vit.causal) == (12, 64, 197, False)
    llama = cl.preset("Llama-3.1-8B attention")
    assert (llama.heads, llama.h_kv, llama.head_dim) == (32, 8, 128)
    patch = cl.preset("Qwen2-VL vision patch conv3d")
    assert patch.y_dims == (1024, 1280, 1, 1, 1) and patch.w_dims == (1280, 3, 2, 14, 14)
    x3d = cl.preset("X3D-M depthwise conv3d")
    assert x3d.depthwise and x3d.w_dims == (216, 1, 3, 3, 3)
    assert cl.preset("Wan2.1 video VAE conv3d").out_dhw == (4, 60, 104)


def test_an_unknown_name_lists_the_names() -> None:
    with pytest.raises(cl.OptionError) as info:
        cl.preset("GPT-5 attention")
    assert "DeepSeek-V3 MLA prefill" in str(info.value) and info.value.option == "preset"
    assert cl.preset("deepseek-v3 mla prefill") == PRESETS["DeepSeek-V3 MLA prefill"].spec  # case is forgiven


def test_the_cli_takes_a_preset_where_it_takes_a_spec(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert cli.main(["run", "--preset", "GPT-5 attention"]) == 2
    assert "DeepSeek-V3 MLA prefill" in capsys.readouterr().err
    assert cli.main(["run"]) == 2
    assert "--preset" in capsys.readouterr().err
    spec = tmp_path / "s.json"
    spec.write_text(cl.SdpaSpec().to_json())
    assert cli.main(["run", str(spec), "--preset", "ViT-B/16 attention"]) == 2
    assert "not both" in capsys.readouterr().err


def test_a_preset_run_without_a_gpu_says_so(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    assert cli.main(["run", "--preset", "ViT-B/16 attention", "-o", str(tmp_path / "r.json")]) == 3
    assert "recorded" in capsys.readouterr().err
