"""Full transform-dialect codegen (codegen library): workgroup forall, fused fill, register
tiles and vectorization on CPU; workgroup and thread foralls on gfx942 (SIMT)."""

from tdsl import (
    AmdGpuTarget,
    Codegen,
    ContractionMatch,
    CpuTarget,
    Fuse,
    GpuThreads,
    Rule,
    StrategySet,
    TileUsingFor,
    TileUsingForall,
)

f32_matmul = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[])

strategies = StrategySet(
    name="matmul_codegen",
    targets=[CpuTarget(), AmdGpuTarget()],
    rules=[
        Rule(
            target="cpu",
            match=f32_matmul,
            strategy=Codegen(
                name="mm_cpu_td",
                root="linalg.matmul",
                tiling=[
                    TileUsingForall(tile_sizes=[64, 64], mapping=["block_y", "block_x"]),
                    TileUsingFor(tile_sizes=[8, 32, 0]),
                    TileUsingFor(tile_sizes=[0, 0, 1]),
                ],
                fusion=[Fuse(producers=["linalg.fill"], into=[0])],
            ),
        ),
        Rule(
            target="gfx942",
            match=f32_matmul,
            strategy=Codegen(
                name="mm_gpu_simt_td",
                root="linalg.generic",
                tiling=[
                    TileUsingForall(tile_sizes=[64, 64], mapping=["block_y", "block_x"]),
                    TileUsingForall(tile_sizes=[4, 4], mapping=["thread_y", "thread_x"]),
                    TileUsingFor(tile_sizes=[0, 0, 16]),
                ],
                fusion=[Fuse(producers=["linalg.fill"], into=[0, 1])],
                gpu=GpuThreads(workgroup_dims=[16, 16, 1]),
            ),
        ),
    ],
)
