"""Quantized and integer matmuls of ONNX models on llvm-cpu: what wins over IREE 3.13's data
tiling, measured.

How the ONNX forms reach IREE (``iree-import-onnx`` then IREE's global optimization):

* ``QLinearMatMul`` (u8/i8, scales and zero points): ``linalg.quantized_matmul`` at the
  graph level (u8 shifted to i8), an i8 x i8 -> i32 ``linalg.matmul`` plus a requantizing
  elementwise op after IREE's ``quantized-matmul-to-matmul``. Data tiling gives it the
  VNNI mmt4d ukernel and matches onnxruntime; nothing here beats that.
* ``MatMulInteger`` with zero points (what ``quantize_dynamic`` writes, after
  ``DynamicQuantizeLinear``): both operands extended to i32 and the zero points
  subtracted per call, then an **i32 x i32 -> i64** ``linalg.matmul`` (``batch_matmul``
  with batch 1 for a 3-D activation), truncated to i32. Data tiling leaves it as it is
  (no i64-accumulating tile), so it runs on IREE's default tiles: 8x8 i64 accumulators
  per vector step.
* ``MatMulInteger`` without zero points, u8 x i8: an i8 x i8 -> i32 ``linalg.generic``
  (``extui`` / ``extsi``); data tiling leaves it too (no u8 x s8 ukernel).

:func:`i64_accumulator_tiles` pins 4 x 32 vector tiles (16 zmm of i64 accumulators) with K
unrolled by 8 on the i32 x i32 -> i64 matmul, at the graph level (``GraphCpuLowering``), so
that data tiling keeps the rest of the program. Measured on AMD EPYC Zen 5 (AVX-512), 1
thread, constant weights, ``tdsl bench MODEL --strategies <auto()> --threads 1
--repetitions 7 --min-time 0.3`` (shuffled interleaved rounds; medians in ms of the whole
model per call; the machine was shared, the strategy's samples and data tiling's never
overlapped):

================================================  =======  ===========  ===========  ===========  ==============
ONNX model (activation x weight)                  default  data tiling  these tiles  onnxruntime  vs data tiling
================================================  =======  ===========  ===========  ===========  ==============
MatMulInteger + zero points, 128x768 x 768x768    2.948    2.960        2.048        0.174        1.45x
MatMulInteger + zero points, 1x128x768 x 768x768  2.926    2.947        2.090        0.175        1.41x
quantize_dynamic linear, 128x768 x 768x768        3.062    3.066        2.173        0.195        1.41x
MatMulInteger + zero points, 64x256 x 256x1024    0.768    0.777        0.512        0.043        1.52x
MatMulInteger + zero points, 256x768 x 768x3072   31.36    31.03        19.73        1.39         1.57x
================================================  =======  ===========  ===========  ===========  ==============

(the quantize_dynamic linear: DynamicQuantizeLinear + MatMulInteger + Cast + Mul.) With
``--allocator caching`` (7 rounds): 128x768x768 2.173 vs 3.108 ms data tiling (1.43x), the
quantize_dynamic linear 2.210 vs 3.127 (1.42x), 256x768x3072 19.87 vs 34.13 (1.72x). The
tiles, from a sweep on 128x768x768 (5 rounds, vector M x N, K unroll, workgroup):
4x32 K8 32x128 2.05 ms, 64x256 2.07, 8x32 K4 2.10, 4x32 K4 (16x128) 2.13, 8x16 K4 2.28,
2x64 K8 2.30, 4x32 K16 2.34, 16x8 K4 4.95, 8x8 K1 6.94; IREE's 8x8 K16 64x64 2.95-3.0.
Each call also extends the constant weight to i32 and subtracts its zero point (IREE does
not hoist that to compile time).

Not a win (the same machine, 3 interleaved rounds, medians):
on the i8 x i8 -> i32 forms (QLinearMatMul 64x256 x 256x1024: data tiling 0.110 ms,
onnxruntime 0.107 ms, IREE default 0.276 ms, the best codegen tiles 0.248 ms, graph-level
mmt4d packing with 8x32x4 / 16x16x2 i8 tiles 0.27-0.29 ms; MatMulInteger u8 x i8 without
zero points 128x768 x 768x768: data tiling 1.21 ms = IREE default 1.16 ms, codegen tiles
1.16-1.92 ms, packing 22-45 ms) nothing beat data tiling. On ``MatMulInteger`` onnxruntime
stays ahead of every IREE path: 4.7x (u8 x i8 without zero points) to 22x of data tiling,
11-14x of these tiles (its VNNI u8 x s8 kernel against IREE's i32 / i64 arithmetic, which
the frontend's lowering fixes and no tiling recovers).
"""

from __future__ import annotations

from ...model.lowering import GraphCpuLowering
from ...model.matchers import ContractionMatch
from ...sets.strategy_set import Rule
from ...targets import CpuTarget
from ...targets.host import Isa, detect_isa
from .measured import CHOICES


def i64_accumulator_tiles(isa: Isa | None = None, target: str = CpuTarget.default_name) -> list[Rule]:
    """Ready-library rules (``Rule.optional``) that pin 4x32 vector tiles, K by 8, on every
    i32 x i32 -> i64 matmul (lhs M x K, rhs K x N) without batch or with batch 1 (ONNX
    ``MatMulInteger`` with zero points, 2-D or 3-D activation), at the graph level;
    workgroups of 32 x 128. Emits
    ``GraphCpuLowering`` (preprocessing spec); requires nothing of the target (data tiling
    leaves pinned ops alone). Empty on an ISA where it was not measured
    (``CHOICES[isa].i64_matmul_tiles``; ``isa`` is read from this machine when not given).
    :func:`tdsl.strategies.cpu.auto` includes them."""
    if not CHOICES[isa or detect_isa()].i64_matmul_tiles:
        return []
    rules = []
    for batch, name in (([], "i64_acc_matmul_tiles"), ([1], "i64_acc_batch1_matmul_tiles")):
        lead = [0] * len(batch)
        rules.append(
            Rule(
                target=target,
                match=ContractionMatch(
                    lhs_type="i32", rhs_type="i32", output_type="i64", batch=batch, operand_layout="mk_kn"
                ),
                strategy=GraphCpuLowering(
                    name=name,
                    distribution=[*lead, 32, 128, 0],
                    vector_common_parallel=[*lead, 4, 32, 0],
                    vector_reduction=[*lead, 0, 0, 8],
                ),
                optional=True,
            )
        )
    return rules


__all__ = ["i64_accumulator_tiles"]
