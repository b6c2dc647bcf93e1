"""gfx942: a full transform-dialect matmul strategy with MFMA (see tdsl.strategies.gpu.td_mfma
for what it does and does not do well)."""

from tdsl import AmdGpuTarget, ContractionMatch, Rule, StrategySet
from tdsl.strategies.gpu.td_mfma import mfma_matmul

strategies = StrategySet(
    name="matmul_td_mfma",
    targets=[AmdGpuTarget()],
    rules=[
        Rule(
            target="gfx942",
            match=ContractionMatch(lhs_type="f16", rhs_type="f16", output_type="f32", batch=[], m=256, n=256, k=256),
            strategy=mfma_matmul(),
        )
    ],
)
