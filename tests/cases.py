"""Strategy sets that together exercise every template branch; goldens and round-trip
tests run over all of them (plus every example)."""

from __future__ import annotations

from pathlib import Path

from tdsl import (
    AllOf,
    AmdGpuTarget,
    Codegen,
    ContractionMatch,
    ConvolutionMatch,
    CpuLowering,
    CpuTarget,
    DataLayout,
    FunctionMatch,
    Fuse,
    GpuLowering,
    GpuThreads,
    OpNameMatch,
    Pack,
    PackGreedily,
    PackTranspose,
    Rule,
    StrategySet,
    TileUsingFor,
    TileUsingForall,
    VectorLowering,
)
from tdsl import load

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def example_dirs() -> list[Path]:
    return sorted(p for p in EXAMPLES.iterdir() if (p / "payload.mlir").is_file())


def example_strategy(example: Path) -> Path:
    return next(example / n for n in ("strategy.py", "strategy.yaml", "strategy.json") if (example / n).is_file())


f32_mm = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[])

LAYOUT_VARIANTS = StrategySet(
    name="layout_variants",
    targets=[CpuTarget(), AmdGpuTarget()],
    rules=[
        Rule(
            target="cpu",
            match=AllOf(matchers=[FunctionMatch(function="matmul_odd"), OpNameMatch(names="linalg.matmul")]),
            strategy=DataLayout(
                name="pad_k",
                pack=PackGreedily(
                    matmul_packed_sizes=[8, 16, 0],
                    matmul_padded_sizes_next_multiple_of=[0, 0, 64],
                    matmul_inner_dims_order=[1, 2, 0],
                ),
            ),
        ),
        Rule(
            target="cpu",
            match=ContractionMatch(
                lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m={"one_of": [128, 256]}
            ),
            strategy=DataLayout(
                name="pack_transposed",
                pack=Pack(packed_sizes=[8, 16, 32]),
                pack_transposes=[
                    PackTranspose(operand="lhs", outer_perm=[1, 0], inner_perm=[1, 0]),
                    PackTranspose(operand="result", inner_perm=[1, 0]),
                ],
            ),
        ),
        Rule(
            target="cpu",
            match=OpNameMatch(names=["linalg.batch_matmul"]),
            strategy=DataLayout(name="bmm_interchange", generalize=True, interchange=[0, 2, 1, 3]),
        ),
        Rule(
            target="cpu",
            match=ConvolutionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", strides=[1, 1], dilations=[1, 1]),
            strategy=DataLayout(name="conv_pack_lowered", pack=PackGreedily(matmul_packed_sizes=[8, 16, 4]), lower_packs=True),
        ),
        Rule(target="gfx942", match=f32_mm, strategy=DataLayout(name="gpu_pad", pack=PackGreedily(matmul_packed_sizes=[0, 0, 0], matmul_padded_sizes_next_multiple_of=[16, 16, 16]))),
    ],
)

GPU_CONFIGS = StrategySet(
    name="gpu_configs",
    targets=[AmdGpuTarget()],
    rules=[
        Rule(
            target="gfx942",
            match=ContractionMatch(lhs_type="f16", rhs_type="f16", output_type="f32", batch=[], operand_layout="mk_nk"),
            strategy=GpuLowering(
                name="mm_f16_vector_distribute",
                pipeline="VectorDistribute",
                workgroup=[64, 128, 0],
                reduction=[0, 0, 64],
                subgroup_basis=[[2, 2, 1], [0, 1, 2]],
                mma_kind="MFMA_F32_16x16x16_F16",
                promote_operands=[0, 1],
                workgroup_size=[256, 1, 1],
                prefetch_num_stages=2,
            ),
        ),
        Rule(
            target="gfx942",
            match=ConvolutionMatch(lhs_type="f16", rhs_type="f16", output_type="f32", batch=[2], filter=[3, 3]),
            strategy=GpuLowering(
                name="conv_f16_igemm",
                workgroup=[1, 4, 32, 64, 0],
                reduction=[0, 0, 0, 0, 2],
                subgroup=[1, 2, 1, 2, 0],
                mma_kind="MFMA_F32_16x16x16_F16",
                promote_operands=[0, 1],
                workgroup_size=[512, 1, 1],
                prefetch_num_stages=0,
                use_igemm_convolution=True,
            ),
        ),
    ],
)

CODEGEN_VARIANTS = StrategySet(
    name="codegen_variants",
    rules=[
        Rule(
            target="cpu",
            match=f32_mm,
            strategy=Codegen(
                name="mm_threads",
                root="linalg.matmul",
                tiling=[
                    TileUsingForall(num_threads=[2, 4], mapping=["block_y", "block_x"]),
                    TileUsingFor(tile_sizes=[8, 16, 4], interchange=[2, 0, 1]),
                ],
                cleanup=["canonicalization"],
                vector_lowering=VectorLowering(contraction="dot", transpose="eltwise", transfer_max_rank=1),
            ),
        ),
        Rule(
            target="cpu",
            match=AllOf(
                matchers=[
                    FunctionMatch(function="bmm_dispatch_0_batch_matmul_2x64x48x32_f32"),
                    OpNameMatch(names="linalg.batch_matmul"),
                ]
            ),
            strategy=CpuLowering(
                name="bmm_cache_levels",
                distribution=[1, 32, 48, 0],
                cache_parallel=[1, 16, 16, 0],
                cache_reduction=[0, 0, 0, 16],
                vector_common_parallel=[1, 8, 16, 0],
                vector_reduction=[0, 0, 0, 1],
            ),
        ),
        Rule(
            target="gfx942",
            match=f32_mm,
            strategy=Codegen(
                name="mm_smem",
                root="linalg.generic",
                tiling=[
                    TileUsingForall(tile_sizes=[64, 64], mapping=["block_y", "block_x"]),
                    TileUsingFor(tile_sizes=[0, 0, 16]),
                    TileUsingForall(tile_sizes=[4, 4], mapping=["thread_y", "thread_x"]),
                ],
                fusion=[
                    Fuse(
                        producers=["linalg.fill"],
                        into=[0],
                        distribute=TileUsingForall(tile_sizes=[4, 4], mapping=["thread_y", "thread_x"]),
                    )
                ],
                promote_operands=[0, 1],
                promote_after=1,
                gpu=GpuThreads(workgroup_dims=[16, 16, 1]),
            ),
        ),
    ],
)

CASES: dict[str, StrategySet] = {
    "layout_variants": LAYOUT_VARIANTS,
    "gpu_configs": GPU_CONFIGS,
    "codegen_variants": CODEGEN_VARIANTS,
}


def all_sets() -> dict[str, StrategySet]:
    """Every case, every library set and every example's strategy set, by name."""
    from tdsl.strategies.gpu.library import convolution_set, standard_set

    sets = dict(CASES)
    sets["library_gfx942_contractions"] = standard_set()
    sets["library_gfx942_convolutions"] = convolution_set()
    for example in example_dirs():
        sets[f"example_{example.name}"] = load(example_strategy(example))
    return sets
