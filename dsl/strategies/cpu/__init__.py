"""llvm-cpu strategy library: graph-level mmt4d packing per ISA and element type, ``auto``,
and fusion strategies."""

from ...targets.host import Caches, detect_caches, detect_isa
from .blocking import mmt4d_blocking
from .chooser import auto
from .fusion import head_split_fusion, head_transpose_fusion
from .packing import mmt4d_layout, packing_rules
from .tiles import InnerTile, inner_tile

__all__ = [
    "Caches",
    "InnerTile",
    "auto",
    "detect_caches",
    "detect_isa",
    "head_split_fusion",
    "head_transpose_fusion",
    "inner_tile",
    "mmt4d_blocking",
    "mmt4d_layout",
    "packing_rules",
]
