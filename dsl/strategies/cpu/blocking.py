"""Workgroup blocking of the packed matmul (``linalg.mmt4d``) from the L2 size.

In IREE 3.13 the ``Mmt4dTilingExpert`` pipeline tiles only ``distribution`` and the vector
levels: ``cache_parallel`` and ``cache_reduction`` are ignored there (the pass list has no
cache-level tiling; tdsl refuses them on that pipeline), and ``DoubleTilingExpert``, which
honours them, lowers the mmt4d micro kernel about 20x slower (1024^3: 660-750 ms vs 28-34
ms). So each micro kernel runs over the whole K, and what is left to choose is the
workgroup: ``distribution = [m_tiles, n_tiles]`` outer M and N tiles. Inside a workgroup
IREE walks M outside N, so the ``n_tiles`` RHS micro panels (``n0 x K`` each) are re-read
for every one of the ``m_tiles`` LHS micro panels. The heuristic:

* ``n_tiles``: the largest power of two such that the RHS micro panels of a workgroup,
  ``n_tiles * n0 * k0 * K_REF`` elements (K_REF = 2048, the deepest K tuned for), fill at
  most half of L2;
* ``m_tiles = 32`` LHS micro panels per workgroup, which amortizes the RHS panels' trip
  from memory 32 times and still leaves one workgroup per core on 1024^3.

IREE's own mmt4d configuration (``distribution = [3, 2, ...]`` here) re-reads the RHS
panels after every 3 LHS micro panels. Measured on this project's AVX2 machine (L2 512
KiB -> n_tiles = 2; 6x16x1 f32, 1 thread, interleaved, medians): 1024^3 29.5 ms vs 33.9
ms with IREE's mmt4d configuration; 2048^3 239 ms vs 414 ms; among [16..64] x [1..4] the
chosen point was best or within noise of the best.
"""

from __future__ import annotations

from ...model.all_of import AllOf
from ...model.lowering import CpuLowering
from ...model.matchers import PackMatch, ProducerMatch
from ...sets.strategy_set import Rule
from ...targets import CpuTarget
from ...targets.host import Caches
from .tiles import InnerTile

K_REF = 2048
M_TILES = 32


def _power_of_two_at_most(value: float) -> int:
    result = 1
    while result * 2 <= value:
        result *= 2
    return result


def mmt4d_tiles(name: str, m0: object, n0: object, k0: object, m_tiles: object, n_tiles: object) -> CpuLowering:
    """The ``Mmt4dTilingExpert`` configuration of a ``linalg.mmt4d`` with inner tile ``m0`` x
    ``n0`` x ``k0``: ``m_tiles`` x ``n_tiles`` micro panels per workgroup, one inner tile per
    vector step (values, or a space's knobs)."""
    return CpuLowering(
        name=name,
        pipeline="Mmt4dTilingExpert",
        distribution=[m_tiles, n_tiles, 0, 0, 0, 0],
        vector_common_parallel=[1, 1, 0, m0, n0, 0],
        vector_reduction=[0, 0, 1, 0, 0, k0],
    )


def mmt4d_blocking(name: str, tile: InnerTile, caches: Caches, element_bytes: int = 4) -> CpuLowering:
    """The ``Mmt4dTilingExpert`` configuration described in the module docstring (uses
    ``caches.l2``; the L1 size has no level to act on in this pipeline)."""
    n_tiles = _power_of_two_at_most(caches.l2 / 2 / (tile.n0 * tile.k0 * K_REF * element_bytes))
    return mmt4d_tiles(name, tile.m0, tile.n0, tile.k0, M_TILES, n_tiles)


ALONE = ProducerMatch(names="iree_tensor_ext.dispatch.tensor.load")
"""The op reads its first operand from the dispatch's input: no producer fused before it."""


def lhs_pack_match(element_type: str, m0: object, k0: object) -> AllOf:
    """The LHS pack of an mmt4d with inner tile ``m0`` x ``k0`` (values or knobs), alone in
    its dispatch (:data:`ALONE`; see :func:`lhs_pack_rule`); ``k0 = None``: K is not packed
    (inner tile ``m0`` on the rows alone)."""
    tiled = (
        {"inner_dims_pos": [0, 1], "inner_tiles": [m0, k0]}
        if k0 is not None
        else {"inner_dims_pos": [0], "inner_tiles": [m0]}
    )
    return AllOf(matchers=[PackMatch(element_type=element_type, **tiled), ALONE])


def lhs_pack_rule(name: str, tile: InnerTile, element_type: str, target: str = CpuTarget.default_name) -> Rule:
    """Codegen tiles for the LHS pack of the mmt4d (``inner_tiles = [m0, k0]``): 16 source
    columns per vector step instead of IREE's one inner tile. Measured on the 1024x1024
    f32 LHS pack with the AVX2 6x1 tile, 1 thread: 1.07-1.40 ms vs 2.15-2.60 ms with IREE's
    configuration (a 4 MiB copy: 0.34 ms); 1024^3 matmul median 33.4 -> 32.3 ms. The RHS
    pack keeps IREE's configuration, which is faster there (0.41-0.44 ms; 0.82 ms with
    these tiles).

    Only a pack alone in its dispatch (:data:`ALONE`): IREE fuses an LHS pack after its
    producer where it can (an FFN-down projection's pack after the FFN-up projection's
    unpack and GELU), and these tiles, made for the pack's own loops, there gave the fused
    elementwise ops 16 KiB vectors and the dispatch did not compile (BERT, AVX2).

    Not done for the result unpack: ``distribution = [m0, 16 * n0]`` halves a standalone
    unpack (0.70-0.86 ms vs 1.41-1.87 ms), but the rule also reaches unpacks fused with an
    elementwise consumer, where it slowed the 1024^3 matmul + transposed add from 36.9 to
    43.1 ms (medians), and no matcher can tell the two apart (a matcher cannot look at
    the unpack's user unless the op is a linalg structured op).
    """
    return Rule(
        target=target,
        match=lhs_pack_match(element_type, tile.m0, tile.k0),
        strategy=CpuLowering(name=name, pipeline="DataTiling", distribution=[64, 64], vector_common_parallel=[1, 16]),
    )
