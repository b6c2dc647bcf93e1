"""Strategy sets that together exercise every template branch; goldens and round-trip
tests run over all of them (plus every example)."""

from __future__ import annotations

from pathlib import Path

from tdsl import (
    AllOf,
    AmdGpuTarget,
    CallReplacement,
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
    KernelRewrite,
    OpNameMatch,
    Pack,
    PackGreedily,
    PackTranspose,
    Rule,
    StrategySet,
    TileUsingFor,
    TileUsingForall,
    VectorLowering,
    load,
)
from tdsl.model.lowering import AttentionDecomposition, DecomposedMatmul, MmaLayout
from tdsl.model.matchers import AttentionMatch, DagMatch, DimConstraint, NoLoweringConfigMatch, OperandMatch
from tdsl.model.raw import RawAnnotation, RawConfig, RawMatch, RawPreprocessingAction, RawTuningAction

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
            match=ContractionMatch(
                lhs_type="f32",
                rhs_type="f32",
                output_type="f32",
                operand_layout="mk_kn",
                batch=[1],
                m=[64],
                n=[48],
                k=[32],
            ),
            strategy=DataLayout(
                name="bmm1_fold",
                generalize=True,
                fold_unit_dims=True,
                pack=PackGreedily(matmul_packed_sizes=[8, 16, 1]),
                pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
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
            strategy=DataLayout(
                name="conv_pack_lowered", pack=PackGreedily(matmul_packed_sizes=[8, 16, 4]), lower_packs=True
            ),
        ),
        Rule(
            target="gfx942",
            match=f32_mm,
            strategy=DataLayout(
                name="gpu_pad",
                pack=PackGreedily(matmul_packed_sizes=[0, 0, 0], matmul_padded_sizes_next_multiple_of=[16, 16, 16]),
            ),
        ),
        Rule(
            target="cpu",
            match=ContractionMatch(
                lhs_type="f32", rhs_type="f32", output_type="f32", operand_layout="mk_nk", batch=[], n=[64]
            ),
            strategy=DataLayout(
                name="rhs_panels", pack=PackGreedily(matmul_packed_sizes=[0, 16, 0]), lower_unpack=True
            ),
        ),
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

KERNEL_REWRITES = StrategySet(
    name="kernel_rewrites",
    rules=[
        Rule(target="cpu", match=OpNameMatch(names="linalg.matmul"), strategy=KernelRewrite(name="mm_as_generic")),
    ],
)

FILL_MATMUL = """^bb0(%lhs: tensor<?x?xf32>, %rhs: tensor<?x?xf32>, %init: tensor<?x?xf32>):
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%lhs, %rhs : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fill : tensor<?x?xf32>) -> tensor<?x?xf32>"""

MATMUL_KERNEL = """util.func private @matmul_kernel(%lhs: tensor<?x?xf32>, %rhs: tensor<?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%lhs, %rhs : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fill : tensor<?x?xf32>) -> tensor<?x?xf32>
  util.return %mm : tensor<?x?xf32>
}"""

CALL_REPLACEMENTS = StrategySet(
    name="call_replacements",
    rules=[
        Rule(
            target="cpu",
            match=DagMatch(pattern=FILL_MATMUL),
            strategy=CallReplacement(
                name="mm_call", pattern=FILL_MATMUL, function="matmul_kernel", symbols=(MATMUL_KERNEL,)
            ),
        ),
    ],
)

ATTENTION_MAPS = [
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)",
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)",
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5)",
    "(d0, d1, d2, d3, d4, d5) -> ()",
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)",
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)",
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)",
]

MATMUL_DAG = """\
^bb0(%lhs: tensor<?x?xf16>, %rhs: tensor<?x?xf16>, %out: tensor<?x?xf32>):
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, \
affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} \
ins(%lhs, %rhs : tensor<?x?xf16>, tensor<?x?xf16>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %1 = arith.extf %a : f16 to f32
    %2 = arith.extf %b : f16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %c, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<?x?xf32>"""

RANK2_GENERIC_MATCHER = """\
transform.named_sequence @match_rank2(%arg0: !transform.any_op {transform.readonly}) -> !transform.any_op {
  transform.match.operation_name %arg0 ["linalg.generic"] : !transform.any_op
  %0 = transform.match.structured failures(propagate) %arg0 : (!transform.any_op) -> !transform.any_op {
  ^bb0(%arg1: !transform.any_op):
    %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
    %rank = transform.match.structured.rank %arg1 : (!transform.any_op) -> !transform.param<i64>
    transform.match.param.cmpi eq %rank, %c2 : !transform.param<i64>
    transform.match.structured.yield %arg1 : !transform.any_op
  }
  transform.yield %arg0 : !transform.any_op
}"""

IMPORT_FIELDS = StrategySet(
    name="import_fields",
    targets=[CpuTarget(), AmdGpuTarget()],
    rules=[
        Rule(
            target="gfx942",
            match=AllOf(
                matchers=[
                    NoLoweringConfigMatch(),
                    AttentionMatch(
                        op="online_attention",
                        query_type="f16",
                        key_type="f16",
                        value_type="f16",
                        scale_type="f16",
                        output_type="f32",
                        max_type="f32",
                        sum_type="f32",
                        maps=ATTENTION_MAPS,
                        batch=[2, 10],
                        m={"one_of": [4096, 1024]},
                    ),
                    OperandMatch(operand=0, type="tensor<?x?x?x64xf16>", dims=[DimConstraint(dim=2, multiple_of=128)]),
                    OperandMatch(operand=1, dims=[DimConstraint(dim=2, min=16, max=4096)]),
                ]
            ),
            strategy=GpuLowering(
                name="attention_vd",
                pipeline="VectorDistribute",
                workgroup=[1, 1, 128, 0, 0, 0],
                reduction=[0, 0, 0, 0, 0, 64],
                promote_operands=[1, 2],
                workgroup_size=[256],
                llvm_func_attrs={"amdgpu-waves-per-eu": "2", "denormal-fp-math-f32": "preserve-sign"},
                decomposition_config=AttentionDecomposition(
                    qk=DecomposedMatmul(
                        mma_kind=MmaLayout(intrinsic="VMFMA_F32_32x32x16_F16", col_major=True),
                        subgroup_basis=[[1, 1, 4, 1, 1, 1], [0, 1, 2, 4, 5]],
                        promote_operands=[1],
                    ),
                    pv=DecomposedMatmul(
                        mma_kind=MmaLayout(intrinsic="MFMA_F32_32x32x8_F16", col_major=True),
                        subgroup_basis=[[1, 1, 4, 1, 1, 1], [0, 1, 2, 3, 5]],
                        promote_operands=[1],
                    ),
                ),
            ),
        ),
        Rule(
            target="gfx942",
            match=AllOf(
                matchers=[
                    NoLoweringConfigMatch(),
                    ContractionMatch(
                        lhs_type="f16",
                        rhs_type="f16",
                        output_type="f32",
                        maps=[
                            "(d0, d1, d2, d3) -> (d0, d1, d3)",
                            "(d0, d1, d2, d3) -> (d2, d3)",
                            "(d0, d1, d2, d3) -> (d0, d1, d2)",
                        ],
                        m=[2, 1024],
                        n=1280,
                        k=5120,
                    ),
                ]
            ),
            strategy=GpuLowering(
                name="mm_expanded_vd",
                pipeline="VectorDistribute",
                workgroup=[1, 64, 128, 0],
                reduction=[0, 0, 0, 64],
                subgroup_basis=[[1, 2, 2, 1], [0, 1, 2, 3]],
                mma_kind="MFMA_F32_16x16x16_F16",
                promote_operands=[0, 1],
                workgroup_size=[256, 1, 1],
                prefetch_num_stages=2,
                no_reduce_shared_memory_bank_conflicts=True,
                reorder_workgroups_strategy="Transpose",
                llvm_func_attrs={"amdgpu-waves-per-eu": "2"},
            ),
        ),
        Rule(
            target="gfx942",
            match=AllOf(matchers=[OpNameMatch(names="linalg.generic"), DagMatch(pattern=MATMUL_DAG)]),
            strategy=GpuLowering(
                name="dag_tile_and_fuse",
                workgroup=[64, 64, 0],
                reduction=[0, 0, 2],
                subgroup=[2, 2, 0],
                mma_kind="MFMA_F32_16x16x16_F16",
                subgroup_m_count=2,
                subgroup_n_count=2,
                promote_operands=[0, 1],
                workgroup_size=[256, 1, 1],
            ),
        ),
        Rule(
            target="gfx942",
            match=ConvolutionMatch(
                lhs_type="bf16",
                rhs_type="bf16",
                output_type="f32",
                maps=[
                    "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)",
                    "(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)",
                    "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)",
                ],
                filter=[3, 3],
            ),
            strategy=RawConfig(
                name="conv_raw_config",
                annotations=[
                    RawAnnotation(
                        name="compilation_info",
                        value="#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{padding_conv = [1, 8, 32, 64, 0, 0, 32], "
                        "promote_operands = [0, 1], workgroup = [1, 8, 32, 64, 0, 0, 0], reduction = [0, 0, 0, 0, 1, 1, 2], subgroup = [1, 2, 1, 2, 0, 0, 0], "
                        "mma_kind = #iree_gpu.mma_layout<MFMA_F32_16x16x16_BF16>}>, translation_info = #iree_codegen.translation_info<pipeline = "
                        "#iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 64>>",
                    ),
                    RawAnnotation(name="__tuning_spec_applied__"),
                ],
            ),
        ),
        Rule(
            target="gfx942",
            match=RawMatch(sequence=RANK2_GENERIC_MATCHER),
            strategy=RawTuningAction(
                name="raw_mark",
                sequence="""\
transform.named_sequence @mark(%arg0: !transform.any_op {transform.readonly}) {
  transform.include @mark_op failures(propagate) (%arg0) : (!transform.any_op) -> ()
  transform.yield
}""",
                helpers=[
                    """\
transform.named_sequence @mark_op(%arg0: !transform.any_op {transform.readonly}) {
  transform.annotate %arg0 "my_mark" : !transform.any_op
  transform.yield
}"""
                ],
            ),
        ),
        Rule(
            target="cpu",
            match=OpNameMatch(names="linalg.matmul"),
            strategy=RawPreprocessingAction(
                name="raw_generalize",
                sequence="""\
transform.named_sequence @generalize(%arg0: !transform.any_op {transform.consumed}) {
  %0 = transform.structured.generalize %arg0 : (!transform.any_op) -> !transform.any_op
  transform.yield
}""",
            ),
        ),
    ],
)

CASES: dict[str, StrategySet] = {
    "layout_variants": LAYOUT_VARIANTS,
    "gpu_configs": GPU_CONFIGS,
    "codegen_variants": CODEGEN_VARIANTS,
    "kernel_rewrites": KERNEL_REWRITES,
    "call_replacements": CALL_REPLACEMENTS,
    "import_fields": IMPORT_FIELDS,
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
