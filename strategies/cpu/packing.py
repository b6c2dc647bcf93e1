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

from tdsl.errors import TdslError
from tdsl import (
    AllOf,
    ContractionMatch,
    CpuLowering,
    DataLayout,
    DimConstraint,
    GraphCpuLowering,
    OperandMatch,
    PackGreedily,
    PackTranspose,
    Rule,
)

from tdsl.targets.host import Isa

from .tiles import InnerTile, inner_tile

LAYOUTS = ("mk_kn", "mk_nk")
# Below this K the per-call packs cost more than the packed kernel saves: 3136x128x64 f32
# measured 1.70 ms packed (6x16x1) vs 1.09 ms IREE default, 1.31 ms IREE data tiling.
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


NARROW_MAX = 128
"""The largest N and K of a "narrow" matmul (:func:`narrow_matmul_rule`)."""


def narrow_matmul_rule(name: str, types: tuple[str, str, str], target: str = "cpu") -> Rule:
    """Keeps a 2-D (k, n)-weight matmul with N and K at most :data:`NARROW_MAX` and M, N, K
    multiples of 16 away from data tiling, on IREE default's vector tiles (8x16, K step 16;
    16 x N workgroups so that no M remainder is left), pinned at the graph level. Data
    tiling is many times slower there with constant weights and IREE's default runtime
    allocator: the cause is not the kernels but its per-call transient buffer (the packed
    activations) coming fresh from the system on every call (with ``tdsl bench --allocator
    caching`` data tiling ties IREE default: 3136x64x64 0.133 vs 0.122 ms, 784x128x128 0.125
    vs 0.123, 3136x256x256 1.95 vs 2.31; with the default allocator 0.697 vs 0.125, 0.400 vs
    0.128, 4.74 vs 2.16). The pinned op needs no transient buffer, so it wins with the
    default allocator and ties with the caching one. Measured on AVX-512 (1 thread, 5
    rounds, medians; ms; pinned / IREE default / data tiling), default allocator, constant weights:

    * 3136x64x64: 0.128 / 0.129 / 0.717;  3136x128x128: 0.502 / 0.504 / 1.690;
    * 784x128x128: 0.127 / 0.127 / 0.393;  1024x96x64: 0.063 / 0.064 / 0.069;
    * (with 64-row workgroups) 3136x128x64: 0.269 / 0.266 / 0.286; 12544x64x32: 0.414 / 0.477 / 0.462.

    Runtime weights (64-row workgroups): 3136x64x64 0.132 / 0.133 / 0.151, 3136x128x128 0.515 /
    0.519 / 0.545, 3136x128x64 0.381 / 0.387 / 0.450.

    Known default-allocator losses of data tiling this rule does not take (left to per-op
    measurement): constant 3136x256x256 (IREE default 2.20 ms, data tiling 4.49) and
    3136x64x256 (0.486 vs 0.548); at K = 256 or N = 256 data tiling also wins elsewhere
    (256^3, 3136x512x64 1.25x), so no bound on N or K alone separates them.
    """
    lhs, rhs, out = types
    narrow = [DimConstraint(dim=1, max=NARROW_MAX, multiple_of=16)]
    return Rule(
        target=target,
        match=AllOf(
            matchers=[
                ContractionMatch(lhs_type=lhs, rhs_type=rhs, output_type=out, batch=[], operand_layout="mk_kn"),
                OperandMatch(operand=0, dims=[DimConstraint(dim=0, multiple_of=16), *narrow]),
                OperandMatch(operand=1, dims=narrow),
            ]
        ),
        strategy=GraphCpuLowering(name=name, distribution=[16, NARROW_MAX, 0], vector_common_parallel=[8, 16, 0], vector_reduction=[0, 0, 16]),
    )


def packing_rules(
    isa: Isa, types: tuple[str, str, str], target: str = "cpu", small_max: Optional[int] = SMALL_MAX
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
                match=ContractionMatch.model_validate({**base, "batch": [], "operand_layout": layout, "size_max": small_max}),
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
