"""A full transform-dialect matmul strategy with MFMA on gfx942: the starting point for
authors who need control beyond IREE's pipelines.

What it does: workgroup tiles of ``tile`` x ``tile`` (``#gpu.block``), the accumulator
fill fused into the workgroup forall, a K loop of one intrinsic K, then the MFMA chain of
:class:`tdsl.MmaChain` on one 64-lane subgroup (MFMA_F32_16x16x16_F16 by default).
Compiled for an f16 256^3 matmul it gives 4 ``v_mfma`` per K step, 78 VGPRs, 6144 B of LDS.

What it does not do well: one subgroup per workgroup (low occupancy of the matrix cores
for big tiles), global-to-LDS copies done by every lane rather than distributed, no
prefetching or software pipelining, and no barrier placement of its own; the problem must
be divisible by the tile. It was compiled, never run (no AMD GPU here); prefer the
TileAndFuse configurations of :mod:`tdsl.strategies.gpu.chooser` for speed.
"""

from __future__ import annotations

from ...model.codegen import Codegen, Fuse, GpuThreads, MmaChain, TileUsingFor, TileUsingForall


def mfma_matmul(
    name: str = "td_mfma_matmul", tile: int = 32, intrinsic: str = "MFMA_F32_16x16x16_F16", k_tile: int = 16
) -> Codegen:
    """The Codegen strategy described in the module docstring (root: the matmul generic)."""
    return Codegen(
        name=name,
        root="linalg.generic",
        tiling=[
            TileUsingForall(tile_sizes=[tile, tile], mapping=["block_y", "block_x"]),
            TileUsingFor(tile_sizes=[0, 0, k_tile]),
        ],
        fusion=[Fuse(producers=["linalg.fill"], into=[0])],
        gpu=GpuThreads(workgroup_dims=[64, 1, 1]),
        mma=MmaChain(intrinsic=intrinsic),
    )
