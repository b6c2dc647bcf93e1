"""Graph-level packing into linalg.mmt4d / batch contractions (preprocessing spec).

``mmt4d_layout`` emits ``pack_greedily`` with the inner tile, transposes the RHS pack's
outer dims where the operand layout needs it (plain (k, n) RHS: ``outer_perm = [1, 0]``;
batch: ``[0, 2, 1]``; a transposed-B (n, k) RHS is already in mmt4d order) and
``specialize``s the packed generic (to ``linalg.mmt4d`` for plain matmuls). pack_greedily
pads any dim that is not a multiple of the tile, so every shape is correct. Requires
``CpuTarget(ukernels="none")`` (IREE 3.13's mmt4d ukernel is wrong on graph-level mmt4d).

Where the time goes with runtime operands (1024^3 f32, 6x16x1, 1 thread, measured here):
the mmt4d dispatch alone 25.4-29.8 ms (82 % of the FMA peak at best, faster than numpy's
whole matmul), the LHS pack 2.2 ms, the RHS pack 0.4 ms and the unpack 1.3-1.7 ms (a 4 MiB
elementwise copy: 0.34 ms). IREE gives the packs one inner tile per vector step;
``blocking.lhs_pack_rule`` halves the LHS pack (a ``PackMatch`` tells it from the RHS
pack, which those tiles would slow 2x). Packing only the RHS (``matmul_packed_sizes =
[0, 16, 0]``, no LHS pack, no unpack) ran 6x slower (188 ms).
"""

from __future__ import annotations

from typing import Optional

from ...errors import TdslError
from ...model.all_of import AllOf
from ...model.layout import DataLayout, PackGreedily, PackTranspose
from ...model.lowering import CpuLowering, GraphCpuLowering
from ...model.matchers import ContractionMatch, DimConstraint, OperandMatch
from ...sets.strategy_set import Rule
from ...targets import CpuTarget
from ...targets.host import Isa
from .tiles import InnerTile, inner_tile

LAYOUTS = ("mk_kn", "mk_nk")
# Below this K the per-call packs cost more than the packed kernel saves: 3136x128x64 f32
# measured 1.70 ms packed (6x16x1) vs 1.09 ms IREE default, 1.31 ms IREE data tiling. With
# constant weights too: MobileNetV2's pointwise convs packed as matmuls (auto() on AVX2, AMD
# EPYC, 1 thread, per-dispatch profile sums) took 36-38 ms with 16 here, 30-31 ms with 48,
# 30 ms with 128 (data tiling keeps K < 128).
K_MIN = 128
# At or below this size in every dim (M, N and K) IREE's default pipeline wins: 256^3 f32
# measured 0.54-0.55 ms IREE default vs 0.66-0.68 ms packed 6x16x1 (two suite runs here).
SMALL_MAX = 256


def mmt4d_layout(name: str, tile: InnerTile, operand_layout: str = "mk_kn", batch: bool = False) -> DataLayout:
    """The DataLayout described in the module docstring. With ``batch`` the packed generic is
    not specialized: IREE 3.13 specializes it to ``linalg.contract``, which llvm-cpu lowers on
    its untiled Default pipeline (27-30x slower; ``tdsl compile`` warns), while the generic
    goes to DoubleTilingExpert (3x36x72 by 72x160 f32: 0.012 ms vs 0.013 ms IREE default,
    0.021 ms data tiling, 3 rounds here)."""
    transposes: list[PackTranspose] = []
    if operand_layout == "mk_kn":
        transposes.append(PackTranspose(operand="rhs", outer_perm=[0, 2, 1] if batch else [1, 0]))
    elif operand_layout != "mk_nk":
        raise TdslError(f"operand_layout: expected one of {LAYOUTS}, received {operand_layout!r}")
    return DataLayout(
        name=name,
        pack=PackGreedily(matmul_packed_sizes=tile.sizes()),
        pack_transposes=transposes,
        specialize=not batch,
    )


def matvec_blocking(name: str, tile: InnerTile) -> CpuLowering:
    """Codegen tiles of a matrix-vector product with a (k, n) matrix, as it reaches codegen
    (loops (n, k)): 2048 columns per workgroup, K blocked by 16 rows so that the matrix is
    read row by row (IREE's own tiles walk 32-column strips down all K rows: 1x4096x4096
    f32 23 ms, 1.5 GFLOP/s), and 2 x n0 columns x 4 rows per vector step.
    Measured here, 1 thread: 3.7 ms vs 23.1 ms IREE default and 3.1 ms numpy. A (n, k)
    matrix (transposed B) keeps IREE's tiles, which read it row by row already (3.75 ms).
    """
    return CpuLowering(
        name=name,
        distribution=[2048, 0],
        cache_reduction=[0, 16],
        vector_common_parallel=[2 * tile.n0, 0],
        vector_reduction=[0, 4],
    )


def matvec_pin(name: str, tile: InnerTile) -> GraphCpuLowering:
    """:func:`matvec_blocking`'s tiles for a ``1 x k`` by ``k x n`` product as the graph level
    sees it (loops (m, n, k), m = 1), pinned before data tiling, which then leaves the op
    alone (with runtime weights it would pack the whole matrix on every call)."""
    codegen = matvec_blocking(name, tile)
    return GraphCpuLowering(
        name=name,
        distribution=[0, *codegen.distribution],
        cache_reduction=[0, *(codegen.cache_reduction or ())],
        vector_common_parallel=[0, *(codegen.vector_common_parallel or ())],
        vector_reduction=[0, *(codegen.vector_reduction or ())],
    )


NARROW_N_MAX = 128
"""The largest N of a "narrow" matmul (:func:`narrow_matmul_rule`)."""
NARROW_K_MAX = 1024
"""The largest K of a "narrow" matmul: from K = 2048 on, data tiling wins again."""


def narrow_matmul_rule(name: str, types: tuple[str, str, str], target: str = CpuTarget.default_name) -> Rule:
    """Keeps a 2-D (k, n)-weight matmul with N <= :data:`NARROW_N_MAX` and K <=
    :data:`NARROW_K_MAX` (M, N, K multiples of 16) away from data tiling, on IREE default's
    vector tiles (8x16, K step 16; 16 x N workgroups, so that no M remainder is left),
    pinned at the graph level. Measured on AVX-512 (AMD EPYC Zen 5), 1 thread, 5 interleaved
    rounds, medians in ms, pinned / IREE default / data tiling, constant weights (runtime
    weights alike within 5 %):

    * 3136x64x64: 0.128 / 0.129 / 0.717; 3136x128x128: 0.502 / 0.504 / 1.690; 784x128x128:
      0.127 / 0.127 / 0.393 (data tiling's per-call transient buffer under IREE's default
      runtime allocator: with ``tdsl bench --allocator caching`` it ties, 0.133 vs 0.122 ms
      on 3136x64x64);
    * 4096x128x1024: 5.628 / 5.752 / 8.364; 1024x64x1024: 0.659 / 0.655 / 0.735;
      3136x64x256: 0.494 / 0.496 / 0.556; 2048x128x256: 0.647 / 0.647 / 0.684;
      384x128x384: 0.177 / 0.177 / 0.192; 256x64x1024: 0.172 / 0.167 / 0.183;
      128x128x1024: 0.163 / 0.168 / 0.168; 64x128x512: 0.042 / 0.044 / 0.045.

    Not taken, data tiling wins: 512x128x2048 (1.654 pinned vs 1.357) and 128x128x4096
    (1.136 vs 0.669). Wider N is left to data tiling (it wins from 3136x512x64 1.25x to
    1024^3 2.6x), except where IREE default measured better: 3136x256x256 with constant
    weights (2.20 vs 4.49 ms, the transient buffer again), which no static bound separates.
    """
    lhs, rhs, out = types
    return Rule(
        target=target,
        match=AllOf(
            matchers=[
                ContractionMatch(lhs_type=lhs, rhs_type=rhs, output_type=out, batch=[], operand_layout="mk_kn"),
                OperandMatch(
                    operand=0,
                    dims=[DimConstraint(dim=0, multiple_of=16), DimConstraint(dim=1, max=NARROW_K_MAX, multiple_of=16)],
                ),
                OperandMatch(operand=1, dims=[DimConstraint(dim=1, max=NARROW_N_MAX, multiple_of=16)]),
            ]
        ),
        strategy=GraphCpuLowering(
            name=name,
            distribution=[16, NARROW_N_MAX, 0],
            vector_common_parallel=[8, 16, 0],
            vector_reduction=[0, 0, 16],
        ),
    )


def packing_rules(
    isa: Isa, types: tuple[str, str, str], target: str = CpuTarget.default_name, small_max: Optional[int] = SMALL_MAX
) -> list[Rule]:
    """Rules that pack every 2-D matmul of these element types with K >= ``K_MIN``, plain
    and transposed-B.

    Matrix-vector products (M = 1) and small matmuls (M, N, K <= ``SMALL_MAX``) come first
    and are only generalized (``small_max=None`` packs small ones too) (IREE's default
    pipeline lowers the generic as it lowers the named op): with runtime weights, packing
    the weight on every call costs more than the product (1x4096x4096 f32: 63.6 ms packed
    with a 1x32x1 tile vs 24.4 ms IREE default and 76.7 ms IREE data tiling; measured here).
    With constant weights, use ``mmt4d_layout`` with ``inner_tile(..., m=1)`` instead. A
    batch matmul needs an exact batch size in its matcher: ``mmt4d_layout(..., batch=True)``
    with ``ContractionMatch(batch=[B], ...)``.
    """
    lhs, rhs, out = types
    prefix = f"{isa}_{lhs}_{out}"
    base = {"lhs_type": lhs, "rhs_type": rhs, "output_type": out}
    rules = [
        Rule(
            target=target,
            match=ContractionMatch.model_validate({**base, "batch": [], "m": 1}),
            strategy=DataLayout(name=f"{prefix}_matvec_default", generalize=True),
        ),
        Rule(
            target=target,
            match=ContractionMatch.model_validate({**base, "batch": [], "m": [], "operand_layout": "k_kn"}),
            strategy=matvec_blocking(f"{prefix}_matvec_kn_tiles", inner_tile(isa, lhs, rhs, out)),
        ),
    ]
    for layout in LAYOUTS if small_max else ():
        rules.append(
            Rule(
                target=target,
                match=ContractionMatch.model_validate(
                    {**base, "batch": [], "operand_layout": layout, "size_max": small_max}
                ),
                strategy=DataLayout(name=f"{prefix}_{layout}_small_default", generalize=True),
            )
        )
    for layout in LAYOUTS:
        rules.append(
            Rule(
                target=target,
                match=ContractionMatch.model_validate({**base, "batch": [], "operand_layout": layout, "k_min": K_MIN}),
                strategy=mmt4d_layout(f"{prefix}_{layout}", inner_tile(isa, lhs, rhs, out), layout),
            )
        )
    return rules
