"""What :func:`tdsl.strategies.cpu.auto` does on each ISA, and the measurements behind it.

The rule: a ready strategy applies only where it measured a win on that ISA against IREE's
best path (``--iree-opt-data-tiling``, constant weights as deployed models ship them, 1
thread). Everything else is left to IREE's data tiling, so ``auto()`` never loses to it by
construction. Each entry says what was measured, how, and what was not.

Measured with ``python benchmarks/cpu_suite.py --weights constant|runtime`` and
``python benchmarks/models.py`` (medians of interleaved rounds, 1 thread).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from ...targets.host import Isa

Weights = Literal["constant", "runtime"]


@dataclass(frozen=True)
class IsaChoices:
    """``auto()``'s choices on one ISA; ``evidence`` gives the figures (or says "not
    measured") behind each one."""

    pack_matmuls: bool
    """Graph-level mmt4d packing of 2-D matmuls (ukernels off, data tiling off) instead of data tiling."""
    packed_matmuls_over_data_tiling_with_constant_weights: bool
    """With constant weights: graph-level mmt4d packing of f32 2-D matmuls and of batch-1
    batch matmuls folded into 2-D ones (code generated, no ukernel), and data tiling with its
    ukernels for every other contraction (integer matmuls, im2col'd convolutions, attention)."""
    convs_as_packed_matmuls_with_constant_weights: bool
    """With packed matmuls over data tiling and constant weights: every 2-D convolution (and
    1-D one computed as 2-D) is an im2col copy and a ``linalg.matmul`` before the graph-level
    rules (``CpuTarget.convs_as_matmuls``), which pack it like any f32 matmul, in the
    convolution's channels-first layout (channels-last convolutions off: the weights times
    the copied image, whose pack reads it contiguously)."""
    im2col_convs: bool
    """IREE's global im2col rewrite of every convolution."""
    channels_last_convs_with_constant_weights: bool
    """IREE's channels-last rewrite of every NCHW / NCW convolution (NHWC / NWC between
    transposes, before im2col where that is on) when the weights are compile-time constants."""
    matvec_tiles_with_runtime_weights: bool
    """K-blocked tiles pinned on matrix-vector products whose matrix is a runtime argument."""
    narrow_matmuls_off_data_tiling: bool
    """f32 matmuls with N <= 128 and K <= 1024 keep IREE default's tiles, pinned before data tiling."""
    i64_matmul_tiles: bool
    """4x32 K8 tiles pinned on i32 x i32 -> i64 matmuls (ONNX MatMulInteger with zero points)."""
    channels_last_depthwise_convs_with_constant_weights: bool
    """NCHW depthwise convs computed channels-last, a rewrite of the program's linalg IR
    (``CpuTarget.channels_last_depthwise_convs``), when the weights are compile-time constants."""
    convs_1d_as_2d_with_constant_weights: bool
    """1-D convs computed as 2-D convs of unit height (``CpuTarget.convs_1d_as_2d``), so that
    IREE's im2col takes them, when the weights are compile-time constants (with im2col on)."""
    peel_vector_loops: bool
    """IREE's CPU configurations peel the loops their vector tile does not divide instead of
    masking them (``CpuTarget.peel_vector_loops``): softmax and LayerNorm rows of odd size."""
    evidence: tuple[str, ...]


UNMEASURED = IsaChoices(
    **{f.name: False for f in fields(IsaChoices) if f.name != "evidence"},
    evidence=("not measured on this ISA: everything is left to IREE data tiling",),
)
"""The choices of an ISA nothing was measured on: every one off."""

CHOICES: dict[Isa, IsaChoices] = {
    "avx512": IsaChoices(
        pack_matmuls=False,
        packed_matmuls_over_data_tiling_with_constant_weights=False,
        convs_as_packed_matmuls_with_constant_weights=False,
        im2col_convs=False,
        channels_last_convs_with_constant_weights=False,
        matvec_tiles_with_runtime_weights=True,
        narrow_matmuls_off_data_tiling=True,
        i64_matmul_tiles=True,
        channels_last_depthwise_convs_with_constant_weights=False,
        convs_1d_as_2d_with_constant_weights=False,
        peel_vector_loops=False,
        evidence=(
            "matmuls -> IREE data tiling. Graph-level 8x32x1 packing (ukernels off) against data tiling, AMD EPYC Zen 5: "
            "CPU suite 0.98x geomean with constant weights, 1.19x with runtime weights; example models (constant weights) "
            "bert 0.68x, gpt2_block 0.71x of data tiling (their projections are batch-1 batch_matmuls the packing rules "
            "do not take, and data tiling needs ukernels that graph-level mmt4d cannot have)",
            "convolutions -> IREE default (no im2col). --iree-global-opt-use-im2col-for-convs: NHWC 3x3 conv "
            "1x56x56x64 -> 64 0.53x (constant weights) / 0.57x (runtime) of IREE default; NCHW convs of "
            "examples/models/resnet 2.2x data tiling (0.706 vs 1.563 ms). The flag acts on every conv of a program, "
            "so it is an opt-in: auto(im2col_convs=True) for models whose convs are NCHW (as PyTorch/ONNX export them)",
            "channels-last convolutions: not applied. Measured only as an opt-in with data tiling (resnet example "
            "0.363 vs 1.472 ms, a 1-D conv stack 0.532 vs 2.570 ms), not per conv form nor on the other exports",
            "matrix-vector products with runtime weights -> pinned K-blocked tiles (data tiling packs the whole "
            "matrix on every call: 1x4096x4096 f32 34.0 ms vs 10.4 ms IREE default); with constant weights data "
            "tiling wins (1.72 ms) and keeps them",
            "f32 (k, n)-weight matmuls with N <= 128 and K <= 1024 (multiples of 16) -> IREE default's tiles pinned "
            "before data tiling: 3136x64x64 0.128 vs 0.717 ms data tiling (its per-call transient buffer under IREE's "
            "default allocator; with --allocator caching they tie), 4096x128x1024 5.63 vs 8.36 ms, 384x128x384 0.177 "
            "vs 0.192 ms; equal to IREE default (packing.narrow_matmul_rule). From K = 2048 data tiling wins "
            "(512x128x2048 1.36 vs 1.65 ms). Known loss left to data tiling: constant 3136x256x256 0.49x of IREE "
            "default; no static bound separates it from data tiling's wins on wider N",
            "depthwise convolutions channels-last, 1-D convs as unit-height 2-D convs: not measured on AVX-512 "
            "(not applied)",
            "odd-sized row reductions (peel_vector_loops): not measured on AVX-512 (it has mask registers; IREE's "
            "masking stays)",
            "i32 x i32 -> i64 matmuls (ONNX MatMulInteger with zero points) -> 4x32 K8 tiles pinned at the graph level: "
            "1.41-1.57x data tiling on five models (128x768x768 2.05 vs 2.96 ms; see quantized.py); i8 x i8 -> i32 "
            "forms (QLinearMatMul) stay with data tiling, which ties onnxruntime there",
        ),
    ),
    "avx2": IsaChoices(
        pack_matmuls=False,
        packed_matmuls_over_data_tiling_with_constant_weights=True,
        convs_as_packed_matmuls_with_constant_weights=True,
        im2col_convs=True,
        channels_last_convs_with_constant_weights=True,
        matvec_tiles_with_runtime_weights=True,
        narrow_matmuls_off_data_tiling=False,
        i64_matmul_tiles=False,
        channels_last_depthwise_convs_with_constant_weights=True,
        convs_1d_as_2d_with_constant_weights=True,
        peel_vector_loops=True,
        evidence=(
            "matmuls -> IREE data tiling. Graph-level 6x16x1 packing measured 1.39x the better of IREE default and "
            "data tiling on an AMD EPYC AVX2 machine with runtime weights only; with constant weights not measured, "
            "and the packing rules do not take the batch-1 batch_matmuls frontends emit: auto(pack_matmuls=True) opts in",
            "packed matmuls over data tiling (auto(packed_matmuls_over_data_tiling=True): graph-level 6x16x1 mmt4d "
            "of 2-D and folded batch-1 matmuls, ukernels off, data tiling for the rest), AMD EPYC, AVX2, 1 thread, "
            "benchmarks/zoo under auto(), per-dispatch profile sums on a loaded machine, ms: gpt2 138 -> 119, vit "
            "256 -> 211, whisper_encoder 416 -> 365, minilm_l6 111 -> 104; resnet18, mobilenet_v2, convnext tie "
            "(their matmuls come from im2col, after the graph-level rules). With the ukernels off for the whole "
            "program the integer contractions left to data tiling ran 2.4x slower (i8 128x768x768 8.4 -> 20.0 ms), "
            "and with them on the 6x16 tile falls to the ukernel's generic tile (gpt2 4 s; 128x768x768 f32 267 vs "
            "33 ms), so the packed ops alone are code generated (CpuLowering(ukernels=False): LLVM IR identical "
            "to the ukernels-off build's) and the ukernels stay for data tiling. The 8x8x1 ukernel tile at the "
            "graph level with the L2 blocking: gpt2 129, vit 232, minilm_l6 116 (worse), whisper_encoder 408 ms",
            "packed matmuls over data tiling against auto() without it, python benchmarks/peers.py --threads 1,all "
            "(AMD EPYC, 2 cores, AVX2, medians of 3 interleaved rounds, ms, 1 thread / 2 threads): gpt2 110 vs 132 / "
            "72 vs 68, vit 187 vs 233 / 108 vs 118, minilm_l6 95 vs 106 / 53 vs 60, whisper_encoder 351 vs 395 / 197 "
            "vs 210, convnext 138 vs 140 / 80 vs 83, resnet18 176 vs 178 / 97 vs 95, mobilenet_v2 38 vs 39 / 23 vs 24",
            "convolutions with constant weights, under packed matmuls over data tiling -> im2col'd linalg.matmul "
            "ops before the graph-level rules, packed 6x16x1 and code generated, channels-first "
            "(auto(convs_as_matmuls=...); AMD EPYC, 2 cores, AVX2 (FMA peak 40 GFLOP/s a core), 1 thread, "
            "benchmarks/zoo under auto(), per-dispatch profile sums of two rounds, ms): resnet18 146-147 vs 165-166 "
            "(3x3 convs 36 GFLOP/s in the packed mmt4d vs 23-31 in data tiling's), mobilenet_v2 25-29 vs 30-31, "
            "convnext 128 vs 126-128 (tie), whisper_encoder 343-347 vs 342-355 (tie). Channels-last instead: "
            "resnet18 159, mobilenet_v2 26-29, convnext 126-128, whisper_encoder 334-351 ms (the im2col'd LHS "
            "pack reads the image across channels). IREE 3.13 cannot code generate the packed matmul's unpack "
            "into a conv's bias, so the bias is added after a zero-initialized conv. python benchmarks/peers.py "
            "resnet18 mobilenet_v2 --threads 1,all (3 interleaved rounds, against auto(convs_as_matmuls=False)), ms, "
            "1 / 2 threads: resnet18 150 vs 170 / 82 vs 86, mobilenet_v2 27.7 vs 31.4 / 16.8 vs 18.7",
            "convolutions -> im2col: NHWC 3x3 conv 1x56x56x64 -> 64 6.5-8.4 ms vs 10.2 ms IREE default (AVX2 machine)",
            "convolutions with constant weights -> channels-last before im2col. AMD EPYC, 2 cores, AVX2, 1 thread, one "
            "ONNX Conv each (NCW / NCHW, batch 1), against im2col + data tiling: 1-D 80->192 k3 width 500 17.9 vs "
            "64.3 ms, 1-D 192->192 k3 stride 2 31.3 vs 134 ms (im2col leaves 1-D convs); 2-D convs tie (7x7 stem "
            "17.0 vs 17.8, 3x3 14.9 vs 13.4, 1x1 stride 2 0.160 vs 0.159, depthwise 0.85 vs 0.84 ms). Examples: "
            "whisper_encoder 0.312 vs 0.462 ms, convnext 0.131 vs 0.140, resnet_hf 0.209 vs 0.205, mobilenet_v2 "
            "0.235 vs 0.224. Channels-last alone is 2x faster on the 7x7 stem (8.2 ms) but 5x slower on a 4x4 "
            "stride-4 patch stem (0.313 vs 0.058 ms): one program flag cannot take both. With runtime weights "
            "channels-last measured slower (1-D conv 91 vs 50 ms, 3x3 135 vs 7 ms without im2col) and stays off",
            "NCHW depthwise convolutions with constant weights -> channels-last (a linalg rewrite, "
            "channels_last_depthwise_convs; AMD EPYC, AVX2, 1 thread, benchmarks/zoo mobilenet_v2 under auto(), "
            "per-dispatch profile): 3x3 depthwise 56x56x144 5.0 -> 1.1 ms, 56x56x96 5.2 -> 1.4 ms, whole model "
            "61.3 -> 31.7 ms. As the named NHWC op instead of a generic, IREE's im2col turns it into a batch "
            "matvec: 75 ms. With runtime weights not measured (not applied)",
            "1-D convolutions with constant weights -> 2-D convs of unit height, which im2col takes (a linalg "
            "rewrite, convs_1d_as_2d; AMD EPYC, AVX2, 1 thread, benchmarks/zoo whisper_encoder under auto(), "
            "per-dispatch profile): 384 -> 384 k3 stride 2 59.4 -> 15.4 ms, 80 -> 384 k3 24.6 -> 7.4 ms, whole model "
            "450 -> 384 ms. With runtime weights not measured (not applied)",
            "matrix-vector products with runtime weights -> K-blocked tiles: 1x4096x4096 f32 3.7 ms vs 23.1 ms IREE "
            "default (AVX2 machine; data tiling 76.7 ms)",
            "narrow matmuls (N, K <= 128) with data tiling: not measured on AVX2 (IREE default's tiles differ there)",
            "i64-accumulating integer matmuls: not measured on AVX2",
            "loops their vector tile does not divide -> peeled, not masked (peel_vector_loops; AMD EPYC, AVX2, "
            "1 thread, iree-benchmark-module, IREE default pipeline): softmax 6x500x500 302 -> 10.7 ms, 12x197x197 "
            "11.1 -> 5.2 ms, 6x1500x1500 6291 -> 121 ms; LayerNorm 500 rows x 384 2.43 -> 0.75 ms, 384 rows x 500 "
            "2.48 -> 1.36 ms, 1500 rows x 384 6.35 -> 2.97 ms; where every tile divides its loop (softmax 6x512x512, "
            "LayerNorm 197 x 768) the build is byte-identical. Models under auto() (tdsl bench, 1 thread, on a "
            "loaded machine): benchmarks/zoo whisper_encoder 2.84x auto() without it (1177 vs 3286 ms), "
            "mobilenet_v2 1.11x; vit and convnext ties within noise (1.03x / 0.99x and 1.05x / 0.96x in two runs; "
            "convnext's peeled dispatches are its 7x7 depthwise convs at widths 28, 14 and 7)",
        ),
    ),
    "neon": UNMEASURED,
    "generic": UNMEASURED,
}
