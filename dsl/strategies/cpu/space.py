"""Ready CPU search spaces for ``tdsl tune``.

Two levels, measured differently (see :mod:`tdsl.tune`):

* **Program level** (:func:`program_space`): the knobs of the CPU target that act on every
  op of the program -- ``data_tiling`` (IREE's ``--iree-opt-data-tiling``: pack every
  matmul for mmt4d, or not), ``ukernels`` (under data tiling: IREE's mmt4d ukernels or
  its mmt4d codegen) and, where the program has convolutions, the conv path:
  ``im2col_convs`` (IREE's global im2col) x ``channels_last_convs`` (IREE's
  channels-last rewrite of NCHW / NCW convolutions) and, where a root op has a loop its
  vector tile does not divide (an odd-size softmax or LayerNorm row), ``peel_vector_loops``
  (peeled, not masked). IREE default and data tiling
  are two of its points, so the baselines are candidates like any other. Measured on the
  whole program (they change the dispatches).
* **Op level** (:func:`contraction_space`): one contraction kept out of data tiling and
  pinned at the graph level (:class:`tdsl.GraphCpuLowering`, a compilation_info on the op
  before dispatch formation) with knobs for its tiles: workgroup tile of M and N
  (distribution), register tile of M and N (vector_common_parallel; N in whole vectors
  of the ISA), K step (vector_reduction) and a K cache block (cache_reduction; the
  matrix-vector blocking of :func:`tdsl.strategies.cpu.packing.matvec_pin` is one point;
  the ready library's points for the shape are the space's ``seeds``, tried first).
  Batch loops get tile 1. Constraints keep the register tile inside the workgroup tile and
  the workgroup tile inside the problem; the target's own checks (vector tile bytes
  against the ISA) prune the rest when candidates are validated. An op IREE rebuilds
  before codegen (:func:`restructured`: a batch matmul whose RHS is broadcast becomes a
  matmul) is pinned on codegen's op instead (:class:`tdsl.CpuLowering`, codegen's matcher).

The matcher of each op-level rule is the op listing's exact graph-level matcher
(:func:`tdsl.compiler.ops.matcher_for`), so a tuned rule applies to that shape and layout
only; thresholds (K, size bounds) are not knobs here because a per-op rule needs none.
* **Op level, packed** (:func:`~tdsl.strategies.cpu.layout_spaces.packing_space`): one 2-D contraction (or a batch-1 batch
  matmul, its unit batch folded first: ``DataLayout.fold_unit_dims``) packed at the graph
  level for ``linalg.mmt4d`` (the path of ``auto(pack_matmuls=True)``, here per op) with
  knobs for the inner tile M0 x N0 (K0 = 1; N0 in whole vectors), the mmt4d workgroup
  blocking (M and N micro panels per workgroup), the LHS pack's vector step and
  ``in_place``: the packed op kept a ``linalg.generic`` that writes the result in place
  (:func:`~tdsl.strategies.cpu.layout_spaces.in_place_rules`), so that IREE fuses its elementwise consumers (an FFN-up
  projection's bias and GELU) into its dispatch and no unpack dispatch is left. Its
  candidates turn IREE's ukernels off for the whole program (the mmt4d ukernel is wrong on
  graph-level mmt4d ops; see :class:`tdsl.CpuTarget`) and keep the base's data tiling for
  the other ops (it leaves the packed mmt4d alone; with it off, BERT's packed projections
  measured 1.44 ms against 1.08 ms for data tiling, the other matmuls having lost it), so
  they are measured on the whole program like every op-level candidate; whether to pack at
  all is the choice between this space, the pinned one and the base.

* **Op level, RHS panels** (:func:`~tdsl.strategies.cpu.layout_spaces.panel_space`): one 2-D (or batch-1, folded) matmul whose
  RHS alone is packed into panels of N0 columns (``[N/N0, K, N0]``: ``matmul_packed_sizes =
  [0, N0, 0]``), the LHS read in place and the result written in place (its unpack is a
  reshape: ``DataLayout.lower_unpack``); the packed op (loops M, N1, N0, K) is pinned with
  knobs for its workgroup and register tiles (M rows x N1 panels, K step). With constant
  weights the panel pack runs at compile time, so a call runs the contraction alone: no LHS
  pack, no unpack, no transient buffer (1024^3 f32 on AVX-512: 8.19 ms against 9.63 ms
  for data tiling, whose mmt4d ukernel is faster but pays for the packs). Candidates keep
  the base's target (data tiling leaves the panel op alone: its N loops are apart in the RHS).

* **Op level, convolutions** (:func:`convolution_space`): one batch convolution pinned at
  the graph level on IREE's own pipeline for it, with knobs for the workgroup and register
  tiles of its output channel and innermost output image loop and its input-channel step
  (IREE's tiles are the seed). A batch-1 convolution has none: IREE 3.13 drops a
  compilation_info on it. The conv path as a whole is the program level's ``im2col_convs``
  and ``channels_last_convs``.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence, Union

from ...compiler.ops import OpView
from ...model.element_types import ELEMENT_BITS
from ...model.kinds import MatcherKind
from ...model.knobs import Choice, Knob, PowersOfTwo
from ...model.lowering import CpuLowering, GraphCpuLowering
from ...sets.space import Constraint, Space
from ...sets.strategy_set import Rule, StrategySet
from ...targets import CpuTarget
from ...targets.host import Isa

TileEntry = Union[int, Knob]
"""A tile size in a space's template: fixed, or a knob the space searches."""


VECTOR_BITS = {"avx512": 512, "avx2": 256, "neon": 128, "generic": 128}
"""Bits of one vector register per ISA: the N register tile is whole vectors."""
TILED_TYPES = {
    ("f32", "f32", "f32"),
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("f16", "f16", "f16"),
    ("i8", "i8", "i32"),
    ("i32", "i32", "i64"),
}
"""Element types whose contractions get an op-level space."""


def program_space(
    target: CpuTarget, has_convolutions: bool, name: str = "program", has_odd_loops: bool = False
) -> Space:
    """The program-level space on ``target``: ``data_tiling`` x ``ukernels`` (IREE's mmt4d
    ukernels or its own mmt4d codegen; only under data tiling) x (``im2col_convs`` x
    ``channels_last_convs`` where the program has convolutions) x (``peel_vector_loops``
    where a root op has a loop its vector tile does not divide: elsewhere peeling builds the
    same code). No rules: every op keeps IREE's path of that point."""
    update: dict[str, Knob] = {
        "data_tiling": Choice("data_tiling", [False, True]),
        "ukernels": Choice("ukernels", ["default", "none"]),
    }
    if has_convolutions:
        update["im2col_convs"] = Choice("im2col_convs", [False, True])
        update["channels_last_convs"] = Choice("channels_last_convs", [False, True])
    if has_odd_loops:
        update["peel_vector_loops"] = Choice("peel_vector_loops", [False, True])
    data = target.model_dump(mode="json") | update
    ukernels_need_data_tiling = Constraint(
        "ukernels_only_matter_under_data_tiling", lambda v: v["data_tiling"] or v["ukernels"] == "default"
    )
    return Space(StrategySet(name=name, targets=[CpuTarget(**data)], rules=[]), [ukernels_need_data_tiling])


def _ceil_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _element_types(view: OpView) -> tuple[str, ...]:
    """(lhs, rhs, result) element types of a contraction view (() with fewer operands)."""
    return (
        (view.operands[0].element, view.operands[1].element, view.operands[-1].element)
        if len(view.operands) >= 3
        else ()
    )


def _lanes(isa: Isa, view: OpView) -> int:
    """Lanes of one vector register of ``isa`` for ``view``'s result (accumulator) type."""
    return int(VECTOR_BITS[isa] // ELEMENT_BITS[view.operands[-1].element])


def _vector_widths(n: int, lanes: int) -> list[int]:
    """Register-tile widths along N: 1, 2 or 4 whole vectors, none wider than N needs."""
    return [v for v in (lanes, 2 * lanes, 4 * lanes) if v <= max(n, lanes)]


def _accumulator_limit(isa: Isa, lanes: int, m_knob: str, n_knob: str) -> Constraint:
    """A register tile of ``m_knob`` x ``n_knob`` elements takes at most the ISA's accumulator
    registers (:data:`_MAX_ACCUMULATORS`)."""
    limit = _MAX_ACCUMULATORS[isa]
    return Constraint(f"at_most_{limit}_accumulator_registers", lambda v: v[m_knob] * (v[n_knob] // lanes) <= limit)


def _workgroups(sizes: Sequence[int], distribution: Sequence[TileEntry], values: Mapping[str, object]) -> int:
    """Workgroups a distribution tiling makes of loops of ``sizes`` (knob tiles read from
    ``values``; a 0 tile leaves its loop whole)."""
    count = 1
    for size, entry in zip(sizes, distribution):
        tile = values[entry.name] if isinstance(entry, Knob) else entry
        if isinstance(tile, int) and tile > 0 and size > 0:
            count *= -(-size // tile)
    return count


def thread_constraint(view: OpView, distribution: Sequence[TileEntry], threads: int) -> Constraint | None:
    """On ``threads`` > 1 threads, a point must make at least as many workgroups as threads
    (as many as its smallest tiles make, where the op has less work), so every thread gets
    work; None on one thread."""
    if threads <= 1:
        return None
    smallest = {e.name: min(x for x in e.values() if isinstance(x, int)) for e in distribution if isinstance(e, Knob)}
    need = min(threads, _workgroups(view.loop_sizes, distribution, smallest))
    if need <= 1:
        return None
    return Constraint(
        f"at_least_{need}_workgroups_for_{threads}_threads",
        lambda v: _workgroups(view.loop_sizes, distribution, v) >= need,
    )


def tunable(view: OpView) -> str:
    """Why ``view`` gets no op-level space ("" when it gets one)."""
    if view.kind == "contraction" and view.zero_points:
        return (
            "a quantized matmul (zero points): IREE rewrites it into a matmul and zero-point sums after the graph-level "
            "rules run, and a pin on it is lost with the op"
        )
    if view.kind != "contraction":
        return "not a plain contraction"
    types = _element_types(view)
    if types not in TILED_TYPES:
        return f"element types {' x '.join(types)} have no space"
    if len(view.roles.get("n", ())) != 1 or len(view.roles.get("k", ())) != 1 or len(view.roles.get("m", ())) > 1:
        return "an m, n or k group of more than one loop"
    if any(s <= 0 for s in view.loop_sizes):
        return "dynamic sizes"
    return ""


def contraction_space(
    view: OpView,
    match: MatcherKind,
    isa: Isa,
    base: CpuTarget,
    name: str,
    at_codegen: bool = False,
    threads: int = 1,
) -> Space:
    """The op-level space of one contraction (see the module docstring): ``base`` with one
    rule pinning ``view`` (selected by ``match``) on knob tiles: a
    :class:`tdsl.GraphCpuLowering` on the graph-level op, or with ``at_codegen`` a
    :class:`tdsl.CpuLowering` on the op as codegen sees it (``view`` and ``match`` then
    codegen's; see :func:`restructured`). On ``threads`` threads every point makes a
    workgroup per thread (:func:`thread_constraint`). Requires ``tunable(view) == ""``."""
    reason = tunable(view)
    if reason:
        raise ValueError(f"{name}: {reason}")
    rank = len(view.loop_sizes)
    m = view.sizes("m")[0] if view.roles.get("m") else 1
    n, k = view.sizes("n")[0], view.sizes("k")[0]
    lanes = _lanes(isa, view)
    vec_m = [v for v in (1, 2, 4, 8, 16) if v <= m] or [1]
    vec_n = _vector_widths(n, lanes)
    vec_k = [v for v in (1, 4, 8, 16) if v <= k]
    cache_k = [0] + [v for v in (16, 64, 256, 1024) if v < k]

    def place(**by_role: TileEntry) -> list[TileEntry]:
        out: list[TileEntry] = [0] * rank
        for d in view.roles.get("batch", ()):
            out[d] = by_role.get("batch", 0)
        for role, value in by_role.items():
            if role != "batch" and view.roles.get(role):
                out[view.roles[role][0]] = value
        return out

    distribution = place(
        batch=1,
        m=PowersOfTwo("wg_m", 1, min(256, _ceil_pow2(m))),
        n=PowersOfTwo("wg_n", lanes, min(2048, max(lanes, _ceil_pow2(n)))),
    )
    lowering = (CpuLowering if at_codegen else GraphCpuLowering)(
        name=name,
        distribution=distribution,
        cache_reduction=place(k=Choice("cache_k", cache_k)),
        vector_common_parallel=place(batch=1, m=Choice("vec_m", vec_m), n=Choice("vec_n", vec_n)),
        vector_reduction=place(k=Choice("vec_k", vec_k)),
    )
    rule = Rule(target=base.name, match=match, strategy=lowering, optional=False)
    template = StrategySet(name=f"tune_{name}", targets=[base], rules=[rule])
    constraints = [
        Constraint(
            "register_tile_inside_workgroup_tile", lambda v: v["wg_m"] % v["vec_m"] == 0 and v["wg_n"] % v["vec_n"] == 0
        ),
        Constraint("k_block_holds_k_steps", lambda v: v["cache_k"] % v["vec_k"] == 0),
        _accumulator_limit(isa, lanes, "vec_m", "vec_n"),
    ]
    if (per_thread := thread_constraint(view, distribution, threads)) is not None:
        constraints.append(per_thread)
    space = Space(template, constraints)
    space.seeds = [
        v
        for v in _library_points(m, n, lanes)
        if all(v[key] in knob.values() for key, knob in ((k_.name, k_) for k_ in space.knobs))
    ]
    return space


CONV_PIPELINES = ("ConvTileAndDecomposeExpert", "DoubleTilingExpert")
"""IREE's CPU pipelines of convolutions that :func:`convolution_space` pins tiles for."""


def convolution_tunable(view: OpView, pipeline: str | None) -> str:
    """Why the graph-level convolution ``view``, which IREE lowers with ``pipeline``
    (``#iree_cpu.pipeline<..>`` or its name), gets no op-level space ("" when it gets one)."""
    if view.kind != "convolution" or not view.roles.get("filter_loop"):
        return "not a convolution"
    if not view.roles.get("input_channel") and not view.roles.get("depth"):
        return "a pooling op (no channel loop to tile)"
    types = _element_types(view)
    if types not in TILED_TYPES:
        return f"element types {' x '.join(types)} have no space"
    if any(s <= 0 for s in view.loop_sizes):
        return "dynamic sizes"
    if all(s == 1 for s in view.sizes("batch")):
        return "a batch-1 convolution: IREE 3.13 drops a compilation_info on it (InsertBatchDimForBatchlessConv rebuilds the op)"
    name = (pipeline or "").removeprefix("#iree_cpu.pipeline<").removesuffix(">")
    if name not in CONV_PIPELINES:
        return f"IREE lowers it with {name or 'no known pipeline'}, not {' or '.join(CONV_PIPELINES)}"
    if len(view.maps) != 3:
        return "no indexing maps to pin its layout"
    return ""


def _convolution_knobs(view: OpView) -> dict[int, tuple[TileEntry, TileEntry, TileEntry]]:
    """Each loop's (distribution, vector, reduction) tile in :func:`convolution_space`: knobs
    on the output channel (the depthwise channel where the op has no other), the output image
    loops and the input-channel step; 1 or 0 elsewhere."""
    rank = len(view.loop_sizes)
    roles = view.roles
    channel_role = "output_channel" if roles.get("output_channel") else "depth"
    channel = roles[channel_role][0]
    image = roles["output_image"]
    width, outer = image[-1], image[:-1]
    f, w = view.loop_sizes[channel], view.loop_sizes[width]
    c = view.loop_sizes[roles["input_channel"][0]] if roles.get("input_channel") else 0
    steps = (1, 2, 4, 8, 16, 32)
    knobs: dict[int, tuple[TileEntry, TileEntry, TileEntry]] = {
        d: (1, 1, 0) for d in range(rank)
    }  # loop -> (distribution, vector, reduction)
    for d in roles.get("filter_loop", ()):
        knobs[d] = (0, 0, 1)
    knobs[channel] = (
        PowersOfTwo("wg_f", 1, min(256, _ceil_pow2(f))),
        Choice("vec_f", [v for v in steps if v <= f] or [1]),
        0,
    )
    knobs[width] = (
        PowersOfTwo("wg_w", 1, min(64, _ceil_pow2(w))),
        Choice("vec_w", [v for v in steps[:5] if v <= w] or [1]),
        0,
    )
    for i, d in enumerate(outer):
        knobs[d] = (PowersOfTwo(f"wg_h{i}", 1, min(64, _ceil_pow2(view.loop_sizes[d]))), 1, 0)
    if c:
        knobs[roles["input_channel"][0]] = (
            0,
            0,
            Choice("vec_c", sorted({v for v in steps if v <= c} | ({c} if c <= steps[-1] else set()))),
        )
    return knobs


def convolution_space(
    view: OpView,
    match: MatcherKind,
    isa: Isa,
    base: CpuTarget,
    name: str,
    pipeline: str,
    iree_config: str | None = None,
    threads: int = 1,
) -> Space:
    """The op-level space of one convolution (every point a workgroup per thread on
    ``threads`` threads, :func:`thread_constraint`): ``base`` with one rule pinning ``view`` at the
    graph level (:class:`tdsl.GraphCpuLowering` on ``pipeline``, IREE's own for the op;
    ``match`` with the op's indexing maps added, so one layout only) on knob tiles.
    Knobs: workgroup and register tile of the output channel (of the depthwise channel where
    the op has no other) and of the innermost output image loop, workgroup tile of the outer
    output image loops, and the input-channel step. Register tiles of the outer output image
    loops and steps of the filter loops are 1: IREE's conv pipelines decompose the op into
    1-D convolutions there; a group loop (grouped convolutions) and the batch get tile 1.
    ``iree_config`` (IREE's ``#iree_cpu.lowering_config`` for the op, from the op listing)
    is the space's seed where it is one of its points. Requires
    ``convolution_tunable(view, pipeline) == ""``."""
    reason = convolution_tunable(view, pipeline)
    if reason:
        raise ValueError(f"{name}: {reason}")
    pipeline = pipeline.removeprefix("#iree_cpu.pipeline<").removesuffix(">")
    rank = len(view.loop_sizes)
    lanes = _lanes(isa, view)
    knobs = _convolution_knobs(view)
    distribution = [knobs[d][0] for d in range(rank)]
    lowering = GraphCpuLowering(
        name=name,
        pipeline=pipeline,
        distribution=distribution,
        vector_common_parallel=[knobs[d][1] for d in range(rank)],
        vector_reduction=[knobs[d][2] for d in range(rank)],
    )
    pinned = (
        match.model_validate(match.model_dump(mode="json") | {"maps": list(view.maps)})
        if hasattr(match, "maps")
        else match
    )
    rule = Rule(target=base.name, match=pinned, strategy=lowering, optional=False)
    limit = _MAX_ACCUMULATORS[isa] * lanes
    constraints = [
        Constraint(
            "register_tile_inside_workgroup_tile", lambda v: v["wg_f"] % v["vec_f"] == 0 and v["wg_w"] % v["vec_w"] == 0
        ),
        Constraint(
            f"at_most_{_MAX_ACCUMULATORS[isa]}_accumulator_registers", lambda v: v["vec_f"] * v["vec_w"] <= limit
        ),
    ]
    if (per_thread := thread_constraint(view, distribution, threads)) is not None:
        constraints.append(per_thread)
    space = Space(StrategySet(name=f"tune_{name}", targets=[base], rules=[rule]), constraints)
    seed = _config_point(iree_config, knobs)
    space.seeds = [seed] if seed and all(k.name in seed and seed[k.name] in k.values() for k in space.knobs) else []
    return space


def _config_point(
    config: str | None, knobs: dict[int, tuple[TileEntry, TileEntry, TileEntry]]
) -> dict[str, int] | None:
    """The knob values of IREE's ``#iree_cpu.lowering_config`` for an op (None where it has
    not the levels or the loops of ``knobs``)."""
    if not config:
        return None
    levels = {}
    for level in ("distribution", "vector_common_parallel", "vector_reduction"):
        found = re.search(rf"\b{level} = \[([^\]]*)\]", config)
        if found is None:
            return None
        levels[level] = [int(x) for x in found[1].split(",") if x.strip()]
    if any(len(sizes) != len(knobs) for sizes in levels.values()):
        return None
    point: dict[str, int] = {}
    for d, entries in knobs.items():
        for level, entry in zip(levels, entries):
            if isinstance(entry, int):
                if levels[level][d] != entry:
                    return None  # IREE tiles a loop the space keeps fixed differently
            else:
                point[entry.name] = levels[level][d]
    return point


def restructured(graph: OpView, codegen: OpView) -> bool:
    """Whether IREE reshapes the contraction ``graph`` on its way to codegen (``codegen``,
    its dispatch's root) beyond dropping unit loops: its batch, M, N or K sizes differ,
    unit sizes aside. A batch matmul whose RHS is one matrix broadcast over the batch (what
    ``F.linear`` on a ``(L, 1, E)`` input exports, as ``nn.MultiheadAttention`` does) reaches
    codegen as a matmul with the batch in M; a compilation_info attached at the graph level
    is lost with the op, so such an op's tiles are pinned at codegen."""
    roles = ("batch", "m", "n", "k")

    def sizes(view: OpView) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(s for s in view.sizes(role) if s != 1) for role in roles)

    return codegen.kind == "contraction" and sizes(graph) != sizes(codegen)


def _library_points(m: int, n: int, lanes: int) -> list[dict[str, int]]:
    """The tiles of the ready library for such a shape, tried first: IREE default's register
    tile pinned (:func:`tdsl.strategies.cpu.packing.narrow_matmul_rule`) and, for a
    matrix-vector product, the K-blocked matvec tiles (:func:`~tdsl.strategies.cpu.packing.matvec_pin`);
    each tile no larger than the problem allows (a batch of 8 rows: 8 x 8 instead of 16 x 8)."""
    vec_m = max(v for v in (1, 2, 4, 8) if v <= max(m, 1))
    points = [
        {
            "wg_m": min(16, _ceil_pow2(m)),
            "wg_n": min(128, _ceil_pow2(n)),
            "cache_k": 0,
            "vec_m": vec_m,
            "vec_n": lanes,
            "vec_k": 16,
        }
    ]
    if m == 1:
        points.append(
            {"wg_m": 1, "wg_n": min(2048, _ceil_pow2(n)), "cache_k": 16, "vec_m": 1, "vec_n": 4 * lanes, "vec_k": 4}
        )
    return points


_MAX_ACCUMULATORS = {"avx512": 24, "avx2": 12, "neon": 24, "generic": 8}
"""Accumulator registers a register tile may take (32 zmm on AVX-512, 16 ymm on AVX2, 32
NEON registers; the rest hold operands)."""
