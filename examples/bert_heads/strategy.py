"""CPU fusion: BERT's head split (matmul -> reshape to heads -> transposed bias add) in one
dispatch instead of two. ISA pinned to AVX2 so the rendered script is the same everywhere."""

from tdsl import CpuTarget, StrategySet
from tdsl.strategies.cpu import head_split_fusion

strategies = StrategySet(
    name="bert_heads",
    targets=[CpuTarget()],
    rules=head_split_fusion("q_proj", "avx2", m=128, heads=[12, 64], k=768, consumer_interchange=[1, 0, 2]),
)
