"""Graph-level packing (preprocessing spec): the matmul becomes linalg.mmt4d on CPU and a
packed linalg.generic on gfx942."""

from tdsl import (
    AmdGpuTarget,
    ContractionMatch,
    CpuTarget,
    DataLayout,
    PackGreedily,
    PackTranspose,
    Rule,
    StrategySet,
)

f32_matmul = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], operand_layout="mk_kn")

strategies = StrategySet(
    name="matmul_pack",
    # ukernels off: the 8x32x1 tile is not in the AVX-512 mmt4d ukernel table.
    targets=[CpuTarget(ukernels="none"), AmdGpuTarget()],
    rules=[
        Rule(
            target="cpu",
            match=f32_matmul,
            strategy=DataLayout(
                name="mmt4d_8x32x1",
                pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]),
                pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
                specialize=True,
            ),
        ),
        Rule(
            target="gfx942",
            match=f32_matmul,
            strategy=DataLayout(name="pack_16x16x16", pack=PackGreedily(matmul_packed_sizes=[16, 16, 16])),
        ),
    ],
)
