"""``auto``: a StrategySet that packs every supported matmul of a model for one CPU.

Heuristic: every 2-D matmul with M > 1 and K >= 128, plain or transposed-B, of f32, f16/bf16 -> f32 or
i8 -> i32 gets the ISA's mmt4d tile (:mod:`tdsl.strategies.cpu.tiles`; the ISA is read
from this machine when not given). Convolutions go through IREE's im2col rewrite
(``CpuTarget.im2col_convs``; 3x3 conv 1x56x56x64 -> 64: about 1.3x IREE's default here).
Matrix-vector products and everything else are left to IREE's default pipeline.
"""

from __future__ import annotations

from typing import Sequence

from tdsl import CpuTarget, StrategySet

from .packing import packing_rules
from .tiles import Isa, detect_isa

ELEMENT_TYPES: tuple[tuple[str, str, str], ...] = (
    ("f32", "f32", "f32"),
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("i8", "i8", "i32"),
)


def auto(
    target: CpuTarget | None = None,
    isa: Isa | None = None,
    element_types: Sequence[tuple[str, str, str]] = ELEMENT_TYPES,
    name: str = "cpu_auto",
) -> StrategySet:
    """The StrategySet described in the module docstring, for ``target`` (ukernels off)."""
    cpu = (target or CpuTarget()).model_copy(update={"ukernels": "none", "im2col_convs": True})
    chosen = isa or detect_isa()
    rules = [rule for types in element_types for rule in packing_rules(chosen, types, cpu.name)]
    return StrategySet(name=name, targets=[cpu], rules=rules)
