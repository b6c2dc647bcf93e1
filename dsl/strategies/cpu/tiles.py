"""Inner tiles (M0 x N0 x K0) of the graph-level mmt4d packing, per ISA and element types.

Where each number comes from:

* AVX-512 f32 8x32x1: measured best on 1024^3 on this machine's kind (Zen 5): 186-189
  GFLOP/s, 80-83 % of the 1-core f32 peak, with ukernels off
  (shared/docs/cpu-perf-baseline.md section 10).
* AVX-512 f16/bf16 -> f32 and i8 -> i32: the same 8x32x1 register tile (accumulators are
  f32/i32, so the register budget is that of f32); checked for correctness, not tuned.
* AVX2 f32 6x16x1: measured on this project's CI machine (AMD EPYC, AVX2, no AVX-512),
  1024^3 single-threaded, 2 interleaved rounds: 6x16x1 33.3 ms, 4x16x1 34.1, 8x8x1 38.7,
  8x16x1 46.5 (spills: 16 accumulators + operands exceed 16 ymm), 16x8x1 60.3; IREE
  default 84.1 ms. With the cache blocking of blocking.py, 6x16x2 and 6x16x4 (K unrolled in
  the tile) ran 2-3x slower than 6x16x1 and 4x24x1 14-18x slower (1024^3, 3 rounds).
* NEON 8x8x1, generic 4x8x1: IREE's data-tiling choices for f32; not measured here.
* M = 1 (matrix-vector): M0 = 1, so nothing is padded 8x (see packing.py for when it pays).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import TdslError
from ...targets.host import Isa


@dataclass(frozen=True)
class InnerTile:
    """The (M0, N0, K0) of ``matmul_packed_sizes``."""

    m0: int
    n0: int
    k0: int

    def sizes(self) -> list[int]:
        return [self.m0, self.n0, self.k0]


_F32 = {
    "avx512": InnerTile(8, 32, 1),
    "avx2": InnerTile(6, 16, 1),
    "neon": InnerTile(8, 8, 1),
    "generic": InnerTile(4, 8, 1),
}


PACKING_TYPES = frozenset({("f32", "f32", "f32"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("i8", "i8", "i32")})
"""(lhs, rhs, result) element types that have an inner tile."""


def inner_tile(isa: Isa, lhs_type: str, rhs_type: str, output_type: str, m: int | None = None) -> InnerTile:
    """The inner tile for one contraction; ``m = 1`` selects the matrix-vector tile."""
    tile = _F32[isa]
    if (lhs_type, rhs_type, output_type) not in PACKING_TYPES:
        raise TdslError(f"no packing tile for {lhs_type} x {rhs_type} -> {output_type}")
    if m == 1:
        return InnerTile(1, tile.n0, 1)
    return tile
