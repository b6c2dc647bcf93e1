"""Choosing a gfx942 configuration (a TileAndFuse ``GpuLowering``) for a contraction or a
convolution, from its loops, sizes and element types.

**Problems.** :class:`Contraction` (any batch, m, n and k groups, the loops in any order:
``loop_order`` gives the role of each loop, e.g. ``"nmmk"`` for a strided 1x1 convolution
that IREE turned into a contraction with two m loops) and :class:`Convolution` (any layout,
batch or none, strides and dilations: ``loop_order`` spells each loop's role as ``tdsl ops``
prints it, ``b o f w c d`` for batch, output image, output channel, filter window, input
channel, depth). :class:`Convolution2d` is the older 2-D shorthand.

**One GEMM view.** Both become a :class:`Gemm`, one role (``b``, ``m``, ``n``, ``k``) and
size per loop that the configuration tiles. A contraction's loops are its own. A convolution
is configured as IREE's implicit GEMM (``use_igemm_convolution``): its parallel loops in
order (batch and depth are ``b``; the output image is M and the output channel N, or the
other way round when the output channel comes first, NCHW, where the filter is IREE's lhs),
then one ``k`` loop of filter x input channel elements. Strides and dilations only change
the im2col addresses, not the loops. This is IREE's own structure (its default config for
these ops has the same loops; compare ``tdsl compile --baseline``).

**Tilings considered** (IREE's TileAndFuse + MFMA structure): for each MFMA intrinsic of
the element types, a rectangular workgroup tile of the m group and of the n group (the
innermost loop of each a multiple of the intrinsic, outer loops tiled past 1 only when the
loops inside them are whole, at most 256 rows per group), 1 to 8 subgroups split over m
and n (innermost loops first), batch tiles of 1, a reduction on the innermost k loop that
divides it, up to 64 intrinsics (outer k loops by 1), and 2 prefetch stages when the k loop
runs 3 times or more. A problem that no intrinsic divides is padded (``padding``: the
workgroup tile, and the k tile; K is padded only where the intrinsic does not divide it),
as IREE's default does. No intrinsic for the types (e.g. f16 x f16 -> f16): a SIMT
configuration (``thread`` tiles, 256 threads).

**Cost model** (:func:`estimate`), the chooser takes the tiling of least estimated time,
then the least wasted (padded) MFMA work, the least global traffic, the most waves per
SIMD, the least LDS and the fewest threads:

* per K iteration one subgroup issues ``tm * tn * r`` MFMAs (``tm`` x ``tn`` intrinsic
  tiles, ``r`` intrinsics of K) of 8 passes of 4 cycles each (16 passes for a 32x32
  intrinsic, CDNA3); the subgroups sharing a SIMD add up;
* each K iteration waits ``MEMORY_LATENCY_CYCLES`` for its global loads unless that much
  MFMA work hides it (prefetching; without it the two add up), and at least the LDS reads
  of the CU at ``LDS_BYTES_PER_CYCLE``;
* occupancy: workgroups per CU limited by LDS (``tdsl.targets.amdgpu_resources`` model) and
  by registers (an estimate: accumulators, operand fragments of a K iteration, the lane's
  share of the global-to-LDS copy, 24 more; the waves per SIMD of
  :meth:`~tdsl.targets.AmdGpuArch.waves_per_simd`); workgroups beyond what the CUs hold
  run in further rounds;
* time = the larger of (rounds x K iterations x iteration time), the tile loads over
  ``CACHE_BYTES_PER_CYCLE`` and the problem's own bytes over ``HBM_BYTES_PER_CYCLE``.

So big problems get big tiles (less traffic, as many rounds), small ones keep enough
workgroups to spread over the CUs and a reduction deep enough that each K iteration's MFMA
work covers the memory latency. The constants are assumptions about MI300X (gfx942), not
measurements here (no GPU): a model to rank tilings, not to predict times.

``choose_contraction`` / ``choose_convolution`` (or :func:`choose`) return the
``GpuLowering``; ``rule_for`` / ``conv_rule_for`` wrap it in a Rule whose matcher pins the
shape (and the loop order), ready for a StrategySet. A problem the chooser cannot express
(no m, n or k loop; a convolution without output or input channel loop, e.g. depthwise, or
whose types no intrinsic takes) raises :class:`tdsl.TdslError` naming the field and value.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import prod
from typing import Optional, Sequence, Union

from ...errors import TdslError
from ...model.element_types import element_bytes
from ...model.lowering import GpuLowering
from ...sets.strategy_set import Rule
from ...targets import GFX942, AmdGpuArch, AmdGpuTarget, MmaIntrinsic
from ...targets.amdgpu_resources import ROW_PAD_BYTES
from .problems import Contraction, Convolution, Convolution2d, Gemm, Problem

MEMORY_LATENCY_CYCLES = 1000
"""Cycles a K iteration waits for its global loads (to LDS, and the barrier) unless MFMA work hides them."""
LDS_BYTES_PER_CYCLE = 128
"""LDS bytes one CU reads per cycle."""
CACHE_BYTES_PER_CYCLE = 8192
"""Bytes per cycle the caches behind the CUs deliver for tile loads (~17 TB/s at 2.1 GHz)."""
HBM_BYTES_PER_CYCLE = 2520
"""Bytes per cycle from memory for the problem's own operands and result (~5.3 TB/s at 2.1 GHz)."""
MAX_GROUP_ROWS = 256
"""The largest workgroup tile of the m group or the n group, in elements."""
SUBGROUP_COUNTS = (1, 2, 4, 8)
"""Subgroups per workgroup considered (64 threads each)."""
MAX_REDUCTION = 64
"""The deepest reduction tile considered, in intrinsics of K."""
MAX_VGPRS = 224
"""The register estimate a tiling may reach (256 per lane; a margin against spills)."""


def _mfma_cycles(intrinsic: MmaIntrinsic) -> int:
    """Cycles of one MFMA: 8 passes of 4 cycles for a 16x16 intrinsic, 16 for a 32x32 one (CDNA3)."""
    return 4 * (16 if intrinsic.m >= 32 else 8)


# --- tilings and their estimate ----------------------------------------------------------------


@dataclass(frozen=True)
class Tiling:
    """A TileAndFuse + MFMA tiling of a :class:`Gemm`, per loop: ``workgroup`` (elements,
    0 = whole loop), ``subgroup`` (intrinsics on the innermost m and n loops, elements on
    outer ones), ``reduction`` (intrinsics on the innermost k loop, elements on outer ones);
    ``padded`` when the problem is padded to the tiles."""

    intrinsic: MmaIntrinsic
    workgroup: tuple[int, ...]
    subgroup: tuple[int, ...]
    reduction: tuple[int, ...]
    padded: bool = False


@dataclass(frozen=True)
class Estimate:
    """The cost model's view of one tiling (see the module docstring)."""

    cycles: float
    workgroups: int
    subgroups: int
    k_iterations: int
    mfma_per_iteration: int
    """MFMAs one subgroup issues per K iteration."""
    utilization: float
    """Useful share of the MFMA work (1.0 unless padded)."""
    lds_bytes: int
    vgprs: int
    waves_per_simd: int
    traffic_bytes: int
    """Bytes all workgroups load from global memory."""

    def line(self) -> str:
        return (
            f"{self.cycles:.0f} cycles: {self.workgroups} workgroups x {self.subgroups} subgroups, {self.k_iterations} K iterations "
            f"of {self.mfma_per_iteration} MFMA, utilization {self.utilization:.2f}, LDS {self.lds_bytes} B, ~{self.vgprs} VGPR, "
            f"{self.waves_per_simd} waves/SIMD"
        )


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _innermost(gemm: Gemm) -> dict[str, int]:
    """The innermost loop of each of the m, n and k roles (-1: none)."""
    return {role: (gemm.loops(role) or [-1])[-1] for role in "mnk"}


def _workgroup_tiles(gemm: Gemm, tiling: Tiling) -> tuple[int, dict[str, int], dict[str, int], int, int]:
    """(workgroups, elements of a workgroup tile per b / m / n role, intrinsic tiles of a
    subgroup per m / n role, subgroups per workgroup, padded size of the parallel loops)."""
    x = tiling.intrinsic
    inner = _innermost(gemm)
    unit = {"m": x.m, "n": x.n}
    workgroups = 1
    rows = {"b": 1, "m": 1, "n": 1}
    per_subgroup = {"m": 1, "n": 1}  # intrinsic tiles
    counts = 1
    padded_work = 1
    for i, (role, size) in enumerate(zip(gemm.roles, gemm.sizes)):
        if role == "k":
            continue
        tile = tiling.workgroup[i] or size
        workgroups *= _ceil(size, tile)
        padded_work *= _ceil(size, tile) * tile
        rows[role] *= tile
        if role in "mn":
            span = tiling.subgroup[i] * (unit[role] if i == inner[role] else 1)
            counts *= max(1, tile // max(span, 1))
            per_subgroup[role] *= tiling.subgroup[i]
    return workgroups, rows, per_subgroup, counts, padded_work


def _k_steps(gemm: Gemm, tiling: Tiling) -> tuple[int, int, int, int]:
    """(K iterations, MFMAs along K per m x n intrinsic tile and K iteration, K elements one
    iteration loads, padded size of the K loops)."""
    x = tiling.intrinsic
    inner = _innermost(gemm)
    k_iterations = 1
    steps = 1
    k_elements = 1
    padded = 1
    for i in gemm.loops("k"):
        r = max(tiling.reduction[i], 1)
        elements = r * x.k if i == inner["k"] else r
        k_iterations *= _ceil(gemm.sizes[i], elements)
        padded *= _ceil(gemm.sizes[i], elements) * elements
        steps *= r
        k_elements *= elements
    return k_iterations, steps, k_elements, padded


def estimate(
    gemm: Gemm,
    tiling: Tiling,
    facts: AmdGpuArch = GFX942,
    *,
    prefetch: Optional[bool] = None,
    min_waves: int = 0,
    vgprs: Optional[int] = None,
    lds_bytes: Optional[int] = None,
) -> Estimate:
    """The cost model's estimate of ``tiling`` on ``gemm`` (module docstring); any TileAndFuse
    MFMA tiling, IREE's default configurations too.

    The keywords replace what the model would otherwise assume (their defaults change
    nothing): ``prefetch`` whether K iterations overlap their loads (default: when the K
    loop runs 3 times or more, as the chooser configures); ``min_waves`` waves per SIMD
    the kernel is held to (``amdgpu-waves-per-eu``); ``vgprs`` and ``lds_bytes`` a compiled
    kernel's registers (VGPRs + AGPRs) and LDS, in place of the estimates."""
    x = tiling.intrinsic
    a_bytes, b_bytes = element_bytes(gemm.lhs_type), element_bytes(gemm.rhs_type)
    c_bytes = element_bytes(gemm.output_type)
    workgroups, rows, per_subgroup, counts, padded_work = _workgroup_tiles(gemm, tiling)
    k_iterations, steps, k_elements, padded_k = _k_steps(gemm, tiling)
    padded_work *= padded_k
    useful = prod(gemm.sizes)
    tm, tn = per_subgroup["m"], per_subgroup["n"]
    mfma = tm * tn * steps
    # LDS: both operands promoted, each row padded (the rhs by the larger of its row counts: K x N or N x K)
    b, m, n = rows["b"], rows["m"], rows["n"]
    lds = b * k_elements * (m * a_bytes + n * b_bytes) + ROW_PAD_BYTES * b * (m + max(n, k_elements))
    if lds_bytes is not None:
        lds = lds_bytes
    if vgprs is None:
        vgprs = _vgprs(
            x, tm, tn, steps, c_bytes, b * k_elements * (m * a_bytes + n * b_bytes), counts * facts.subgroup_size
        )
    waves = max(facts.waves_per_simd(vgprs), min(min_waves, facts.max_waves_per_simd))
    simds = facts.simds_per_cu
    by_lds = facts.lds_bytes_per_workgroup // max(lds, 1)
    by_waves = waves * simds // counts
    per_cu = max(1, min(by_lds, by_waves))
    active = min(_ceil(workgroups, facts.compute_units), per_cu)
    rounds = _ceil(workgroups, facts.compute_units * per_cu)
    sharing = _ceil(active * counts, simds)
    compute = sharing * mfma * _mfma_cycles(x)
    lds_reads = active * counts * steps * (tm * x.m * x.k * a_bytes + tn * x.n * x.k * b_bytes) // LDS_BYTES_PER_CYCLE
    busy = max(compute, lds_reads)
    overlapped = k_iterations >= 3 if prefetch is None else prefetch
    iteration = max(MEMORY_LATENCY_CYCLES, busy) if overlapped else MEMORY_LATENCY_CYCLES + busy
    k_total = prod(gemm.sizes[i] for i in gemm.loops("k"))
    traffic = workgroups * b * (m * a_bytes + n * b_bytes) * k_total
    own = gemm.extent("b") * (
        gemm.extent("m") * k_total * a_bytes
        + gemm.extent("n") * k_total * b_bytes
        + gemm.extent("m") * gemm.extent("n") * c_bytes
    )
    cycles = max(rounds * k_iterations * iteration, traffic / CACHE_BYTES_PER_CYCLE, own / HBM_BYTES_PER_CYCLE)
    return Estimate(cycles, workgroups, counts, k_iterations, mfma, useful / padded_work, lds, vgprs, waves, traffic)


def _vgprs(x: MmaIntrinsic, tm: int, tn: int, steps: int, c_bytes: int, staged_bytes: int, threads: int) -> int:
    """Registers of one lane: accumulators, the operand fragments of one K iteration, its
    share of the workgroup's global-to-LDS copy (``staged_bytes``), 24 more. Against 127
    compiled configurations (f16, bf16, f32, i8; 24 to 492 registers) it is off by 31 on
    average (root mean square)."""
    lanes = 64
    accumulators: int = tm * tn * x.m * x.n * max(c_bytes, 4) // (4 * lanes)
    fragments: int = (
        steps * (tm * x.m * x.k * element_bytes(x.a_type) + tn * x.n * x.k * element_bytes(x.b_type)) // (4 * lanes)
    )
    return accumulators + fragments + _ceil(staged_bytes, 4 * threads) + 24


# --- candidates ----------------------------------------------------------------------------------


def _group_tiles(sizes: Sequence[int], align: int, pad: bool) -> list[tuple[int, ...]]:
    """Workgroup tiles of one m or n group (loop sizes outermost first): the innermost a
    multiple of ``align`` that divides its loop (with ``pad``: powers of two times ``align``
    and the loop rounded up to ``align``), outer loops past 1 only while the loops inside are
    whole; at most MAX_GROUP_ROWS rows."""
    *outer, last = sizes
    if pad:
        top = _ceil(last, align) * align
        inner = sorted({align << j for j in range(8) if align << j < top} | {top})
        inner = [t for t in inner if t <= MAX_GROUP_ROWS] or [align]
    else:
        inner = [t for t in range(align, min(last, MAX_GROUP_ROWS) + 1, align) if last % t == 0]
    tiles: list[tuple[int, ...]] = []

    def extend(tile: tuple[int, ...], depth: int) -> None:
        tiles.append((1,) * (len(outer) - depth) + tile)
        if depth == len(outer) or tile[0] != sizes[len(outer) - depth]:
            return
        size = outer[len(outer) - depth - 1]
        for t in range(2, size + 1):
            if size % t == 0 and t * prod(tile) <= MAX_GROUP_ROWS:
                extend((t,) + tile, depth + 1)

    for t in inner:
        extend((t,), 0)
    return tiles


def _split(tile: tuple[int, ...], align: int, count: int) -> Optional[tuple[int, ...]]:
    """The subgroup span of each loop when ``count`` subgroups share the group's workgroup
    ``tile``: innermost loops first, the innermost span a multiple of ``align``; None when
    the tile does not split so."""
    total = prod(tile)
    if total % count:
        return None
    remaining = total // count
    spans = [1] * len(tile)
    for i in reversed(range(len(tile))):
        fits = [
            s
            for s in range(1, tile[i] + 1)
            if tile[i] % s == 0 and remaining % s == 0 and (i != len(tile) - 1 or s % align == 0)
        ]
        if not fits:
            return None
        spans[i] = max(fits)
        remaining //= spans[i]
    return tuple(spans) if remaining == 1 else None


def _intrinsics(gemm: Gemm, facts: AmdGpuArch) -> list[MmaIntrinsic]:
    types = (gemm.lhs_type, gemm.rhs_type, gemm.output_type)
    return [x for x in facts.mma_intrinsics if (x.a_type, x.b_type, x.c_type) == types]


def choose_intrinsic(problem: Contraction, facts: AmdGpuArch = GFX942) -> tuple[Optional[MmaIntrinsic], bool]:
    """(an intrinsic for the types or None for SIMT, whether the problem must be padded to
    use it): a 16x16 one that divides the innermost m, n and k loops, else a 32x32 one, else
    the 16x16 one with padding. :func:`choose` weighs every intrinsic of the types."""
    gemm = problem.gemm()
    typed = sorted(_intrinsics(gemm, facts), key=lambda x: (x.m != 16, -x.k))
    if not typed:
        return None, False
    for x in typed:
        if not _needs_padding(gemm, x):
            return x, False
    return typed[0], True


def _needs_padding(gemm: Gemm, x: MmaIntrinsic) -> bool:
    inner = {role: gemm.sizes[gemm.loops(role)[-1]] for role in "mnk"}
    return bool(inner["m"] % x.m or inner["n"] % x.n or inner["k"] % x.k)


def _reductions(k: int, step: int) -> list[int]:
    """Reduction tiles (intrinsics) of a k loop of ``k`` elements: the divisors of ``k / step``
    up to MAX_REDUCTION; when ``step`` does not divide ``k`` (padding K), powers of two up
    to the padded loop."""
    if k % step == 0:
        return [r for r in range(1, min(k // step, MAX_REDUCTION) + 1) if (k // step) % r == 0]
    top = _ceil(k, step)
    return sorted(
        {r for r in (1 << j for j in range(7)) if r < top} | {top}
        if top <= MAX_REDUCTION
        else {1 << j for j in range(7)}
    )


def tilings(gemm: Gemm, facts: AmdGpuArch = GFX942) -> list[Tiling]:
    """Every tiling the chooser considers (module docstring), for each MFMA intrinsic of
    the element types, before the LDS and register limits."""
    return [tiling for x in _intrinsics(gemm, facts) for tiling in _tilings(gemm, x)]


def _tilings(gemm: Gemm, x: MmaIntrinsic) -> list[Tiling]:
    pad = _needs_padding(gemm, x)
    m_loops, n_loops, k_loops = gemm.loops("m"), gemm.loops("n"), gemm.loops("k")
    m_tiles = _group_tiles([gemm.sizes[i] for i in m_loops], x.m, pad)
    n_tiles = _group_tiles([gemm.sizes[i] for i in n_loops], x.n, pad)
    k_inner = gemm.sizes[k_loops[-1]]
    reductions = _reductions(k_inner, x.k)
    found = []
    for mt, nt in itertools.product(m_tiles, n_tiles):
        for cm, cn in itertools.product(SUBGROUP_COUNTS, SUBGROUP_COUNTS):
            if cm * cn not in SUBGROUP_COUNTS:
                continue
            for r in reductions:
                tiling = make_tiling(gemm, x, mt, nt, cm, cn, r, pad)
                if tiling is None:
                    break
                found.append(tiling)
    return found


def make_tiling(
    gemm: Gemm,
    x: MmaIntrinsic,
    m_tile: Sequence[int],
    n_tile: Sequence[int],
    m_count: int,
    n_count: int,
    reduction: int,
    padded: bool,
) -> Optional[Tiling]:
    """The tiling with workgroup tile ``m_tile`` / ``n_tile`` of the m and n groups (one
    size per loop of the group, outermost first), ``m_count`` x ``n_count`` subgroups
    (each group's tile split innermost loops first), ``reduction`` intrinsics on the
    innermost k loop (outer k loops by 1) and batch tiles of 1; None when a group's tile
    does not split into whole intrinsic tiles so."""
    ms, ns = _split(tuple(m_tile), x.m, m_count), _split(tuple(n_tile), x.n, n_count)
    if ms is None or ns is None:
        return None
    workgroup, subgroup, tiles = [1] * len(gemm.sizes), [1] * len(gemm.sizes), [0] * len(gemm.sizes)
    for loops, tile, spans, align in ((gemm.loops("m"), m_tile, ms, x.m), (gemm.loops("n"), n_tile, ns, x.n)):
        for j, i in enumerate(loops):
            workgroup[i] = tile[j]
            subgroup[i] = spans[j] // align if j == len(loops) - 1 else spans[j]
    k_loops = gemm.loops("k")
    for i in k_loops:
        workgroup[i], subgroup[i], tiles[i] = 0, 0, reduction if i == k_loops[-1] else 1
    return Tiling(x, tuple(workgroup), tuple(subgroup), tuple(tiles), padded)


def rank_key(guess: Estimate) -> tuple[int, float, int, int, int, int, int]:
    """The chooser's order of an estimate (lower is better): time, then wasted MFMA work,
    global traffic, waves per SIMD, LDS, subgroups, MFMAs per iteration."""
    return (
        round(guess.cycles),
        -guess.utilization,
        guess.traffic_bytes,
        -guess.waves_per_simd,
        guess.lds_bytes,
        guess.subgroups,
        -guess.mfma_per_iteration,
    )


def _rank(gemm: Gemm, tiling: Tiling, facts: AmdGpuArch) -> Optional[tuple[int, float, int, int, int, int, int]]:
    """:func:`rank_key` of a tiling's estimate, None when it breaks a limit (LDS, or the
    register estimate over MAX_VGPRS)."""
    guess = estimate(gemm, tiling, facts)
    if guess.lds_bytes > facts.lds_bytes_per_workgroup or guess.vgprs > MAX_VGPRS:
        return None
    return rank_key(guess)


def best_tiling(gemm: Gemm, facts: AmdGpuArch = GFX942) -> Optional[Tiling]:
    """The tiling of least cost among those the module docstring lists; None when no MFMA
    intrinsic takes the element types."""
    for role in "mnk":
        if not gemm.loops(role):
            raise TdslError(
                f"the chooser needs at least one {role} loop (MFMA tiles m x n x k), received loop roles {''.join(gemm.roles)!r}"
            )
    ranked = []
    for x in _intrinsics(gemm, facts):
        for tiling in _tilings(gemm, x):
            rank = _rank(gemm, tiling, facts)
            if rank is not None:
                ranked.append((rank, tiling))
    if not ranked and _intrinsics(gemm, facts):
        raise TdslError(f"no MFMA tiling of {gemm} fits {facts.arch}'s LDS and registers")
    return min(ranked, key=lambda pair: pair[0])[1] if ranked else None


# --- configurations ------------------------------------------------------------------------------


def padding_of(gemm: Gemm, tiling: Tiling) -> Optional[list[int]]:
    """The ``padding`` entry of a padded tiling (the workgroup tile per parallel loop, the K
    tile in elements per k loop); None when the tiling is not padded."""
    if not tiling.padded:
        return None
    return [
        (t or size) if role != "k" else (r * tiling.intrinsic.k if i == gemm.loops("k")[-1] else max(r, 1))
        for i, (role, size, t, r) in enumerate(zip(gemm.roles, gemm.sizes, tiling.workgroup, tiling.reduction))
    ]


def lowering(
    gemm: Gemm,
    tiling: Tiling,
    name: str,
    facts: AmdGpuArch = GFX942,
    igemm: bool = False,
    *,
    prefetch_num_stages: Optional[int] = None,
    llvm_func_attrs: Optional[dict[str, str]] = None,
) -> GpuLowering:
    """The TileAndFuse ``GpuLowering`` of an MFMA tiling, as :func:`choose` emits it: both
    operands promoted, 64 threads per subgroup, ``padding`` when the tiling is padded,
    ``use_igemm_convolution`` with ``igemm``; ``prefetch_num_stages`` defaults to 2 when
    the K loop runs 3 times or more, else 0."""
    guess = estimate(gemm, tiling, facts)
    if prefetch_num_stages is None:
        prefetch_num_stages = 2 if guess.k_iterations >= 3 else 0
    return GpuLowering(
        name=name,
        workgroup=list(tiling.workgroup),
        reduction=list(tiling.reduction),
        subgroup=list(tiling.subgroup),
        mma_kind=tiling.intrinsic.name,
        promote_operands=[0, 1],
        padding=padding_of(gemm, tiling),
        workgroup_size=[guess.subgroups * facts.subgroup_size, 1, 1],
        prefetch_num_stages=prefetch_num_stages,
        use_igemm_convolution=True if igemm else None,
        llvm_func_attrs=llvm_func_attrs,
    )


def _lowering(gemm: Gemm, tiling: Tiling, name: str, facts: AmdGpuArch, igemm: bool) -> GpuLowering:
    return lowering(gemm, tiling, name, facts, igemm)


def _simt(gemm: Gemm, name: str) -> GpuLowering:
    """SIMT TileAndFuse (no intrinsic for the types): 256 threads as 16 x 16 over the
    innermost m and n loops, 4 x 4 elements per thread where the loops allow, and a K tile
    of up to 32."""
    workgroup, thread, reduction = [1] * len(gemm.sizes), [1] * len(gemm.sizes), [0] * len(gemm.sizes)
    for role in "mn":
        i = gemm.loops(role)[-1]
        size = gemm.sizes[i]
        per_thread = next((t for t in (4, 2) if size % (16 * t) == 0), 1)
        workgroup[i], thread[i] = 16 * per_thread, per_thread
    for i in gemm.loops("k"):
        size = gemm.sizes[i]
        workgroup[i], thread[i] = 0, 0
        reduction[i] = next((t for t in (32, 16, 8, 4, 2) if size % t == 0), 1) if i == gemm.loops("k")[-1] else 1
    padding = None
    if any(gemm.sizes[i] % workgroup[i] for i in (gemm.loops("m")[-1], gemm.loops("n")[-1])):
        padding = [reduction[i] if role == "k" else workgroup[i] for i, role in enumerate(gemm.roles)]
    return GpuLowering(
        name=name,
        workgroup=workgroup,
        reduction=reduction,
        thread=thread,
        promote_operands=[0, 1],
        padding=padding,
        workgroup_size=[256, 1, 1],
    )


def choose(problem: Problem, name: str, facts: AmdGpuArch = GFX942) -> GpuLowering:
    """The TileAndFuse configuration of least estimated cost for a contraction or
    convolution (module docstring); raises :class:`tdsl.TdslError` naming the field the
    chooser cannot express."""
    if isinstance(problem, Convolution2d):
        problem = problem.general()
    gemm = problem.gemm()
    tiling = best_tiling(gemm, facts)
    if tiling is None:
        if isinstance(problem, Convolution):
            raise TdslError(
                f"Convolution types: no MFMA intrinsic of {facts.arch} takes {problem.lhs_type} x {problem.rhs_type} -> "
                f"{problem.output_type} (implicit GEMM needs one)"
            )
        return _simt(gemm, name)
    return _lowering(gemm, tiling, name, facts, isinstance(problem, Convolution))


def choose_contraction(problem: Contraction, name: str, facts: AmdGpuArch = GFX942) -> GpuLowering:
    """:func:`choose` for a contraction: one workgroup entry per loop of the op, in its loop order."""
    return choose(problem, name, facts)


def choose_convolution(
    problem: Union[Convolution, Convolution2d], name: str, facts: AmdGpuArch = GFX942
) -> GpuLowering:
    """:func:`choose` for a convolution: implicit GEMM (``use_igemm_convolution``), one
    workgroup entry per parallel loop of the convolution plus one for the im2col K."""
    return choose(problem, name, facts)


def rule_for(
    problem: Contraction, name: str, target: str = AmdGpuTarget.default_name, facts: AmdGpuArch = GFX942
) -> Rule:
    """A gfx942 Rule: the exact-shape matcher and the chosen configuration."""
    return Rule(target=target, match=problem.match(), strategy=choose(problem, name, facts))


def rules_for(problems: Sequence[tuple[str, Contraction]], target: str = AmdGpuTarget.default_name) -> list[Rule]:
    """One rule per named problem, in order."""
    return [rule_for(problem, name, target) for name, problem in problems]


def conv_rule_for(
    problem: Union[Convolution, Convolution2d],
    name: str,
    target: str = AmdGpuTarget.default_name,
    facts: AmdGpuArch = GFX942,
) -> Rule:
    """A gfx942 Rule for one convolution: exact-shape matcher and the chosen configuration."""
    return Rule(target=target, match=problem.match(), strategy=choose(problem, name, facts))
