"""``auto``: a StrategySet that packs every supported matmul of a model for one CPU.

Heuristic: every 2-D matmul with M > 1, K >= 128 and some dim above 256 (smaller ones run
faster in IREE's default pipeline; ``small_max``), plain or transposed-B, of f32, f16/bf16
-> f32 or i8 -> i32 gets the ISA's mmt4d tile (:mod:`tdsl.strategies.cpu.tiles`; the ISA
is read from this machine when not given), and the packed ``linalg.mmt4d`` gets a
workgroup blocking from the L2 size (:mod:`tdsl.strategies.cpu.blocking`; read from sysfs
when not given), and the f32 LHS pack gets wider vector steps. Convolutions go through IREE's
im2col rewrite (``CpuTarget.im2col_convs``; 3x3 conv 1x56x56x64 -> 64: about 1.3x IREE's
default here). Matrix-vector products stay unpacked; with a (k, n) matrix they get
K-blocked codegen tiles (``packing.matvec_blocking``: 1x4096x4096 f32 about 5x IREE's
default here). Everything else is left to IREE's default pipeline.
"""

from __future__ import annotations

from typing import Sequence

from tdsl import CpuTarget, StrategySet

from tdsl import OpNameMatch, Rule

from tdsl.targets.host import Caches, Isa, detect_caches, detect_isa

from .blocking import lhs_pack_rule, mmt4d_blocking
from .packing import SMALL_MAX, packing_rules
from .tiles import inner_tile

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
    caches: Caches | None = None,
    small_max: int | None = SMALL_MAX,
) -> StrategySet:
    """The StrategySet described in the module docstring, for ``target`` (ukernels off).

    One blocking rule serves every element type (the tile is per ISA; panel sizes are
    counted at 4 bytes per element, which is exact for f32 and conservative otherwise).
    """
    cpu = (target or CpuTarget()).model_copy(update={"ukernels": "none", "im2col_convs": True})
    chosen = isa or detect_isa()
    rules = [rule for types in element_types for rule in packing_rules(chosen, types, cpu.name, small_max)]
    tile = inner_tile(chosen, "f32", "f32", "f32")
    blocking = mmt4d_blocking(f"{chosen}_mmt4d_blocking", tile, caches or detect_caches())
    rules.append(Rule(target=cpu.name, match=OpNameMatch(names="linalg.mmt4d"), strategy=blocking))
    if ("f32", "f32", "f32") in element_types:
        rules.append(lhs_pack_rule(f"{chosen}_f32_lhs_pack_tiles", tile, "f32", cpu.name))
    return StrategySet(name=name, targets=[cpu], rules=rules)
