"""Kernel names read plainly: real names seen under CUPTI (GPU_FACTS 2026-11-22 and public profiles)."""

import pytest

from cudnn_lab import kernel_names as kn

XMMA = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroup"
NCHW_TO_NHWC = ("void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, "
                "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __half const*, "
                "__half*)")
RUNTIME_CONV = "cudnn_generated_fort_native_sm80_convFwd_knob_21_128x128x32_4_0"
RUNTIME_GEMM = "cudnn_generated_fort_native_sm90_matMul_knob_2_128x128x64_5_0"
RUNTIME_SDPA = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f8_knob_32_64x256x128_4_0"
NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
WINOGRAD = ("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>"
            "(cudnn::winograd_nonfused::WinogradDataParams<float, float>)")
FFT = ("void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*, int, int, int, int, int, int, int, "
       "int, int, cudnn::reduced_divisor, bool, int2, int, int)")
SPLITK = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, false, true>(...)"
MEMSET = "Memset (Device)"
TF32 = ("sm86_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
        "tensor16x8x8")


def test_short_name_strips_namespaces_templates_and_parameters():
    assert kn.short_name(NCHW_TO_NHWC) == "nchwToNhwcKernel"
    assert kn.short_name(WINOGRAD) == "winogradForwardData4x4"
    assert kn.short_name(XMMA) == XMMA


def test_layout_transposes_say_which_way():
    r = kn.read(NCHW_TO_NHWC)
    assert r.kind == "transpose" and "NCHW -> NHWC" in r.summary and "cuDNN" in r.origin
    back = kn.read("void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false>(...)")
    assert back.kind == "transpose" and "NHWC -> NCHW" in back.summary


def test_precompiled_implicit_gemm_gives_direction_tile_arch_and_tensor_cores():
    r = kn.read(XMMA)
    assert (r.kind, r.direction, r.tile, r.arch) == ("implicit_gemm", "fprop", "128x128x64", "sm90")
    assert "Hopper warpgroup MMA" in r.tags and "output NHWC" in r.tags and "xmma" in r.origin
    t = kn.read(TF32)
    assert t.tile == "128x128x16" and "TF32 tensor cores" in t.tags and "output NCHW" in t.tags


def test_runtime_compiled_kernels_are_marked_with_their_op_and_tile():
    conv = kn.read(RUNTIME_CONV)
    assert conv.kind == "implicit_gemm" and conv.direction == "fprop" and conv.tile == "128x128x32"
    assert "runtime-compiled" in conv.origin and conv.arch == "sm80" and "kernel config 21" in conv.tags
    gemm = kn.read(RUNTIME_GEMM)
    assert gemm.kind == "gemm" and gemm.tile == "128x128x64" and gemm.arch == "sm90"
    sdpa = kn.read(RUNTIME_SDPA)
    assert sdpa.kind == "attention" and "FP8" in sdpa.tags and "Hopper warpgroup MMA" in sdpa.tags


def test_cublaslt_nvjet_gemm():
    r = kn.read(NVJET)
    assert r.kind == "gemm" and "cuBLASLt" in r.origin and r.tile == "256x128" and r.arch == "sm90"
    split = kn.read("nvjet_sm103_tst_64x8_64x16_4x1_v_bz_splitK_TNT")
    assert "split-K" in split.tags and split.arch == "sm103"


@pytest.mark.parametrize("name,kind", [
    (WINOGRAD, "winograd"), (FFT, "fft"), ("fft2d_c2r_32x32", "fft"), (SPLITK, "split_k_reduction"),
    ("void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*)",
     "split_k_reduction"), (MEMSET, "memset"), ("Memcpy DtoD (Device -> Device)", "memcpy"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", "framework"),
    ("volta_sgemm_128x64_nn", "gemm"), ("maxwell_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148m_nt_v1", "winograd"),
    ("cudnn::bn_fw_tr_1C11_kernel_NCHW", "norm"), ("mystery_kernel_v2", "other"),
])
def test_each_kind_is_recognised(name, kind):
    assert kn.read(name).kind == kind


def test_winograd_and_fft_readings_name_the_step():
    w = kn.read(WINOGRAD)
    assert "data transform" in w.tags and "tile 4x4" in w.tags
    f = kn.read(FFT)
    assert f.tile == "32x32" and "real -> complex" in f.tags


def test_plan_story_counts_helpers_and_describes_the_main_kernel():
    story = kn.plan_story([NCHW_TO_NHWC, NCHW_TO_NHWC, XMMA])
    assert story.startswith("2 layout transposes + implicit GEMM convolution (fprop), tile 128x128x64")
    assert kn.plan_story([NVJET, MEMSET]).startswith("1 memset + GEMM")
    assert kn.plan_story([]) == "no kernels recorded"
    assert kn.describe("mystery_kernel_v2") == "kernel"
