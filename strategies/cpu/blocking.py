"""Cache blocking of the packed matmul (``linalg.mmt4d``) from the L1/L2 sizes.

IREE's own mmt4d configuration (``distribution = [3, 2, ...]``, no reduction blocking)
streams a whole K panel per micro tile: with K = 2048 the RHS micro panel (16 x 2048 f32 =
128 KiB) falls out of L1 and 2048^3 runs at 28 % of peak here. The heuristic:

* ``kc`` (``cache_reduction`` on the outer K loop): the largest power of two such that the
  LHS and RHS micro panels, ``(m0 + n0) * k0 * kc`` elements, fill at most half of L1;
* ``m_tiles`` (``distribution`` on the outer M loop): the largest power of two such that the
  workgroup's LHS block, ``m_tiles * m0 * k0 * kc`` elements, fills at most a quarter of L2;
* ``n_tiles = 2`` outer N tiles per workgroup (enough work per workgroup, many workgroups).

Measured on this project's AVX2 machine (L1d 32 KiB, L2 512 KiB -> kc = 128, m_tiles = 32;
6x16x1 f32, 1 thread, interleaved, medians): 1024^3 29.5 ms vs 33.9 ms with IREE's mmt4d
configuration; 2048^3 239 ms vs 414 ms; among [16..64] x [1..4] x kc [64..512] the chosen
point was best or within noise of the best.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tdsl import CpuLowering

from .tiles import InnerTile


@dataclass(frozen=True)
class Caches:
    """Per-core data cache sizes in bytes."""

    l1: int = 32 * 1024
    l2: int = 512 * 1024


def detect_caches(root: str = "/sys/devices/system/cpu/cpu0/cache") -> Caches:
    """L1d and L2 of this machine from sysfs (the defaults where it is not readable)."""
    sizes: dict[int, int] = {}
    for index in sorted(Path(root).glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
        sizes[level] = int(text.rstrip("KM")) * scale
    default = Caches()
    return Caches(l1=sizes.get(1, default.l1), l2=sizes.get(2, default.l2))


def _power_of_two_at_most(value: float) -> int:
    result = 1
    while result * 2 <= value:
        result *= 2
    return result


def mmt4d_blocking(name: str, tile: InnerTile, caches: Caches, element_bytes: int = 4) -> CpuLowering:
    """The ``Mmt4dTilingExpert`` configuration described in the module docstring."""
    kc = _power_of_two_at_most(caches.l1 / 2 / ((tile.m0 + tile.n0) * tile.k0 * element_bytes))
    m_tiles = _power_of_two_at_most(caches.l2 / 4 / (tile.m0 * tile.k0 * kc * element_bytes))
    return CpuLowering(
        name=name,
        pipeline="Mmt4dTilingExpert",
        distribution=[m_tiles, 2, 0, 0, 0, 0],
        cache_reduction=[0, 0, kc, 0, 0, 0],
        vector_common_parallel=[1, 1, 0, tile.m0, tile.n0, 0],
        vector_reduction=[0, 0, 1, 0, 0, tile.k0],
    )
