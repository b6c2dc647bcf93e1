"""A two-layer MLP with a different strategy per layer and per target.

CPU: layer 1 is packed at graph level into linalg.mmt4d (preprocessing spec); layer 2
gets its own tile sizes (compilation_info in a tuning spec). gfx942: both layers get a
SIMT TileAndFuse configuration with shared-memory promotion (tuning spec).
"""

from tdsl import (
    AmdGpuTarget,
    ContractionMatch,
    CpuLowering,
    CpuTarget,
    GpuLowering,
    Rule,
    StrategySet,
)
from tdsl.strategies.cpu import InnerTile, mmt4d_layout


def f32_matmul(m: int, n: int, k: int) -> ContractionMatch:
    return ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=m, n=n, k=k)


layer1, layer2 = f32_matmul(128, 512, 256), f32_matmul(128, 128, 512)

strategies = StrategySet(
    name="mlp",
    targets=[CpuTarget(ukernels="none"), AmdGpuTarget()],
    rules=[
        Rule(
            target="cpu",
            match=layer1,
            strategy=mmt4d_layout("layer1_mmt4d", InnerTile(8, 32, 1)),
        ),
        Rule(
            target="cpu",
            match=layer2,
            strategy=CpuLowering(
                name="layer2_tiles",
                distribution=[64, 64, 0],
                vector_common_parallel=[8, 32, 0],
                vector_reduction=[0, 0, 1],
            ),
        ),
        *(
            Rule(
                target="gfx942",
                match=layer,
                strategy=GpuLowering(
                    name="mlp_gpu_simt",
                    workgroup=[64, 64, 0],
                    reduction=[0, 0, 16],
                    thread=[4, 4, 0],
                    promote_operands=[0, 1],
                    workgroup_size=[256, 1, 1],
                ),
            )
            for layer in (layer1, layer2)
        ),
    ],
)
