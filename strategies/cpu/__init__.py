"""llvm-cpu strategy library: graph-level mmt4d packing per ISA and element type, and ``auto``."""

from .chooser import auto
from .packing import mmt4d_layout, packing_rules
from .tiles import InnerTile, detect_isa, inner_tile

__all__ = ["InnerTile", "auto", "detect_isa", "inner_tile", "mmt4d_layout", "packing_rules"]
