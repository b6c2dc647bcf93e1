"""Ready CPU search spaces for ``tdsl tune``.

Two levels, measured differently (see :mod:`tdsl.tune`):

* **Program level** (:func:`program_space`): the knobs of the CPU target that act on every
  op of the program -- ``data_tiling`` (IREE's ``--iree-opt-data-tiling``: pack every
  matmul for mmt4d, or not), ``ukernels`` (under data tiling: IREE's mmt4d ukernels or
  its mmt4d codegen) and, where the program has convolutions, the conv path:
  ``im2col_convs`` (IREE's global im2col) x ``channels_last_convs`` (IREE's
  channels-last rewrite of NCHW / NCW convolutions). IREE default and data tiling
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
(:func:`tdsl.iree.ops.matcher_for`), so a tuned rule applies to that shape and layout
only; thresholds (K, size bounds) are not knobs here because a per-op rule needs none.
* **Op level, packed** (:func:`packing_space`): one 2-D contraction (or a batch-1 batch
  matmul, its unit batch folded first: ``DataLayout.fold_unit_dims``) packed at the graph
  level for ``linalg.mmt4d`` (the path of ``auto(pack_matmuls=True)``, here per op) with
  knobs for the inner tile M0 x N0 (K0 = 1; N0 in whole vectors), the mmt4d workgroup
  blocking (M and N micro panels per workgroup), the LHS pack's vector step and
  ``in_place``: the packed op kept a ``linalg.generic`` that writes the result in place
  (:func:`in_place_rules`), so that IREE fuses its elementwise consumers (an FFN-up
  projection's bias and GELU) into its dispatch and no unpack dispatch is left. Its
  candidates turn IREE's ukernels off for the whole program (the mmt4d ukernel is wrong on
  graph-level mmt4d ops; see :class:`tdsl.CpuTarget`) and keep the base's data tiling for
  the other ops (it leaves the packed mmt4d alone; with it off, BERT's packed projections
  measured 1.44 ms against 1.08 ms for data tiling, the other matmuls having lost it), so
  they are measured on the whole program like every op-level candidate; whether to pack at
  all is the choice between this space, the pinned one and the base.

* **Op level, RHS panels** (:func:`panel_space`): one 2-D (or batch-1, folded) matmul whose
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

import math
import re
from typing import Any, Sequence

from ...model.layout import DataLayout, PackGreedily, PackTranspose
from ...model.lowering import CpuLowering, GraphCpuLowering
from ...model.matchers import ContractionMatch, OpNameMatch
from ...sets.strategy_set import Rule, StrategySet
from ...targets import CpuTarget
from ...iree.ops import OpView
from ...model.element_types import ELEMENT_BITS
from ...model.knobs import Choice, PowersOfTwo
from ...model.kinds import MatcherKind
from ...sets.space import Constraint, Space, Values
from ...targets.host import Caches, Isa, detect_caches

from .blocking import M_TILES, lhs_pack_match, mmt4d_blocking
from .tiles import PACKING_TYPES, inner_tile

VECTOR_BITS = {"avx512": 512, "avx2": 256, "neon": 128, "generic": 128}
"""Bits of one vector register per ISA: the N register tile is whole vectors."""
TILED_TYPES = {("f32", "f32", "f32"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f16", "f16", "f16"), ("i8", "i8", "i32"), ("i32", "i32", "i64")}
"""Element types whose contractions get an op-level space."""



def program_space(target: CpuTarget, has_convolutions: bool, name: str = "program") -> Space:
    """The program-level space on ``target``: ``data_tiling`` x ``ukernels`` (IREE's mmt4d
    ukernels or its own mmt4d codegen; only under data tiling) x (``im2col_convs`` x
    ``channels_last_convs`` where the program has convolutions). No rules: every op keeps
    IREE's path of that point."""
    update: dict[str, Any] = {"data_tiling": Choice("data_tiling", [False, True]), "ukernels": Choice("ukernels", ["default", "none"])}
    if has_convolutions:
        update["im2col_convs"] = Choice("im2col_convs", [False, True])
        update["channels_last_convs"] = Choice("channels_last_convs", [False, True])
    data = target.model_dump(mode="json") | update
    ukernels_need_data_tiling = Constraint("ukernels_only_matter_under_data_tiling", lambda v: v["data_tiling"] or v["ukernels"] == "default")
    return Space(StrategySet(name=name, targets=[CpuTarget(**data)], rules=[]), [ukernels_need_data_tiling])


def _ceil_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _element_types(view: OpView) -> tuple[str, ...]:
    """(lhs, rhs, result) element types of a contraction view (() with fewer operands)."""
    return (view.operands[0].element, view.operands[1].element, view.operands[-1].element) if len(view.operands) >= 3 else ()


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


def contraction_space(view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str, at_codegen: bool = False) -> Space:
    """The op-level space of one contraction (see the module docstring): ``base`` with one
    rule pinning ``view`` (selected by ``match``) on knob tiles: a
    :class:`tdsl.GraphCpuLowering` on the graph-level op, or with ``at_codegen`` a
    :class:`tdsl.CpuLowering` on the op as codegen sees it (``view`` and ``match`` then
    codegen's; see :func:`restructured`). Requires ``tunable(view) == ""``."""
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

    def place(**by_role: Any) -> list[Any]:
        out: list[Any] = [0] * rank
        for d in view.roles.get("batch", ()):
            out[d] = by_role.get("batch", 0)
        for role, value in by_role.items():
            if role != "batch" and view.roles.get(role):
                out[view.roles[role][0]] = value
        return out

    lowering = (CpuLowering if at_codegen else GraphCpuLowering)(
        name=name,
        distribution=place(batch=1, m=PowersOfTwo("wg_m", 1, min(256, _ceil_pow2(m))), n=PowersOfTwo("wg_n", lanes, min(2048, max(lanes, _ceil_pow2(n))))),
        cache_reduction=place(k=Choice("cache_k", cache_k)),
        vector_common_parallel=place(batch=1, m=Choice("vec_m", vec_m), n=Choice("vec_n", vec_n)),
        vector_reduction=place(k=Choice("vec_k", vec_k)),
    )
    rule = Rule(target=base.name, match=match, strategy=lowering, optional=False)
    template = StrategySet(name=f"tune_{name}", targets=[base], rules=[rule])
    constraints = [
        Constraint("register_tile_inside_workgroup_tile", lambda v: v["wg_m"] % v["vec_m"] == 0 and v["wg_n"] % v["vec_n"] == 0),
        Constraint("k_block_holds_k_steps", lambda v: v["cache_k"] % v["vec_k"] == 0),
        _accumulator_limit(isa, lanes, "vec_m", "vec_n"),
    ]
    space = Space(template, constraints)
    space.seeds = [v for v in _library_points(m, n, lanes) if all(v[key] in knob.values() for key, knob in ((k_.name, k_) for k_ in space.knobs))]
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


def convolution_space(view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str, pipeline: str, iree_config: str | None = None) -> Space:
    """The op-level space of one convolution: ``base`` with one rule pinning ``view`` at the
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
    roles = view.roles
    channel_role = "output_channel" if roles.get("output_channel") else "depth"
    channel = roles[channel_role][0]
    image = roles["output_image"]
    width, outer = image[-1], image[:-1]
    lanes = _lanes(isa, view)
    f, w = view.loop_sizes[channel], view.loop_sizes[width]
    c = view.loop_sizes[roles["input_channel"][0]] if roles.get("input_channel") else 0
    steps = (1, 2, 4, 8, 16, 32)
    knobs: dict[int, tuple[Any, Any, Any]] = {d: (1, 1, 0) for d in range(rank)}  # loop -> (distribution, vector, reduction)
    for d in roles.get("filter_loop", ()):
        knobs[d] = (0, 0, 1)
    knobs[channel] = (PowersOfTwo("wg_f", 1, min(256, _ceil_pow2(f))), Choice("vec_f", [v for v in steps if v <= f] or [1]), 0)
    knobs[width] = (PowersOfTwo("wg_w", 1, min(64, _ceil_pow2(w))), Choice("vec_w", [v for v in steps[:5] if v <= w] or [1]), 0)
    for i, d in enumerate(outer):
        knobs[d] = (PowersOfTwo(f"wg_h{i}", 1, min(64, _ceil_pow2(view.loop_sizes[d]))), 1, 0)
    if c:
        knobs[roles["input_channel"][0]] = (0, 0, Choice("vec_c", sorted({v for v in steps if v <= c} | ({c} if c <= steps[-1] else set()))))
    lowering = GraphCpuLowering(
        name=name,
        pipeline=pipeline,
        distribution=[knobs[d][0] for d in range(rank)],
        vector_common_parallel=[knobs[d][1] for d in range(rank)],
        vector_reduction=[knobs[d][2] for d in range(rank)],
    )
    pinned = match.model_validate(match.model_dump(mode="json") | {"maps": list(view.maps)}) if hasattr(match, "maps") else match
    rule = Rule(target=base.name, match=pinned, strategy=lowering, optional=False)
    limit = _MAX_ACCUMULATORS[isa] * lanes
    constraints = [
        Constraint("register_tile_inside_workgroup_tile", lambda v: v["wg_f"] % v["vec_f"] == 0 and v["wg_w"] % v["vec_w"] == 0),
        Constraint(f"at_most_{_MAX_ACCUMULATORS[isa]}_accumulator_registers", lambda v: v["vec_f"] * v["vec_w"] <= limit),
    ]
    space = Space(StrategySet(name=f"tune_{name}", targets=[base], rules=[rule]), constraints)
    seed = _config_point(iree_config, knobs)
    space.seeds = [seed] if seed and all(k.name in seed and seed[k.name] in k.values() for k in space.knobs) else []
    return space


def _config_point(config: str | None, knobs: dict[int, tuple[Any, Any, Any]]) -> dict[str, int] | None:
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
    points = [{"wg_m": min(16, _ceil_pow2(m)), "wg_n": min(128, _ceil_pow2(n)), "cache_k": 0, "vec_m": vec_m, "vec_n": lanes, "vec_k": 16}]
    if m == 1:
        points.append({"wg_m": 1, "wg_n": min(2048, _ceil_pow2(n)), "cache_k": 16, "vec_m": 1, "vec_n": 4 * lanes, "vec_k": 4})
    return points


_MAX_ACCUMULATORS = {"avx512": 24, "avx2": 12, "neon": 24, "generic": 8}
"""Accumulator registers a register tile may take (32 zmm on AVX-512, 16 ymm on AVX2, 32
NEON registers; the rest hold operands)."""


PACKED_LAYOUTS = ("mk_kn", "mk_nk")
"""The operand layouts :func:`packing_space` packs (a plain and a transposed-B matmul)."""


def packable(view: OpView, match: MatcherKind) -> str:
    """Why ``view`` (selected by ``match``) gets no packing space ("" when it gets one)."""
    reason = _plain_matmul(view, match)
    types = _element_types(view)
    if not reason and types not in PACKING_TYPES:
        reason = f"element types {' x '.join(types)} have no mmt4d inner tile"
    return reason


def _plain_matmul(view: OpView, match: MatcherKind) -> str:
    """Why ``view`` is not a 2-D matmul (or a batch-1 one) that a graph-level layout can
    pack ("" when it is one)."""
    reason = tunable(view)
    if reason:
        return reason
    if any(size != 1 for size in view.sizes("batch")) or not view.roles.get("m"):
        return "not a 2-D matmul (a batch matmul, or a matrix-vector product as codegen sees it)"
    if view.roles.get("batch") and 1 in view.sizes("m") + view.sizes("n") + view.sizes("k"):
        return "a batch-1 matmul with a unit m, n or k (folding its unit loops leaves no 2-D matmul)"
    layout = match.operand_layout if isinstance(match, ContractionMatch) else None
    if layout not in PACKED_LAYOUTS:
        return f"operand layout {layout or 'by indexing maps'} is not one of {', '.join(PACKED_LAYOUTS)}"
    return ""


MMT4D_MAPS = (
    "(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)",
    "(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)",
    "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)",
)
"""linalg.mmt4d's indexing maps (loops M1, N1, K1, M0, N0, K0)."""

IN_PLACE_MAPS = (
    "(d0, d1, d2, d3, d4) -> (d0, d4, d1)",
    "(d0, d1, d2, d3, d4) -> (d2, d4, d3)",
    "(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)",
)
"""The packed op's indexing maps where it writes its result in place (loops M1, M0, N1, N0,
K): LHS ``[M1, K, M0]``, RHS ``[N1, K, N0]``, result ``[M1, M0, N1, N0]``, the row-major
``[M, N]`` (IREE folds the transpose of the lowered unpack into the op's result map)."""


class PackingSpace(Space):
    """A :class:`Space` over the graph-level packing of one 2-D matmul (see
    :func:`packing_space`) whose candidates derive what the knobs imply: the matcher of the
    packed op (``linalg.mmt4d`` of ``ceil(M/M0) x M0`` by ``ceil(N/N0) x N0``, so that its
    blocking reaches that op only), and the LHS pack rule only where its step is not 0
    (IREE's own pack configuration). With ``in_place`` the candidate is the in-place form
    (:func:`in_place_rules`)."""

    def __init__(self, template: StrategySet, constraints: list[Constraint], m: int, n: int, k: int, types: tuple[str, str, str]) -> None:
        super().__init__(template, constraints)
        self.m, self.n, self.k, self.types = m, n, k, types

    def candidate(self, values: Values) -> StrategySet:
        concrete: StrategySet = super().candidate(values)
        layout, blocking, lhs_pack = concrete.rules
        if values["in_place"]:
            layout, blocking, lhs_pack = in_place_rules(layout, blocking, lhs_pack, (self.m, self.n, self.k), self.types)
        else:
            m0, n0 = values["m0"], values["n0"]
            lhs, rhs, out = self.types
            packed = ContractionMatch(
                lhs_type=lhs, rhs_type=rhs, output_type=out, maps=MMT4D_MAPS, batch=[], m=[-(-self.m // m0), m0], n=[-(-self.n // n0), n0], k=[self.k, 1]
            )
            blocking = blocking.model_copy(update={"match": packed})
        rules = [layout, blocking]
        if values["lhs_pack_step"]:
            rules.append(lhs_pack)
        return StrategySet(name=concrete.name, targets=concrete.targets, rules=tuple(rules))

    def without_unmatched(self, values: Values, unmatched: Sequence[str]) -> Values | None:
        """Where only the LHS pack rule matched nothing, IREE fused that pack into its
        producer's dispatch (the previous layer's epilogue, seen on an ONNX MLP): no pack
        rule can reach it in this program, so the point stands as the same one with IREE's
        pack configuration (``lhs_pack_step = 0``), and the space keeps to those from now on
        (constraint ``lhs_pack_fused_into_its_producer``)."""
        lhs_pack = self.template.rules[2].strategy.name
        if list(unmatched) != [lhs_pack] or not values["lhs_pack_step"]:
            return None
        self.constrain(Constraint(LHS_PACK_FUSED, lambda v: not v["lhs_pack_step"]))
        return values | {"lhs_pack_step": 0}


LHS_PACK_FUSED = "lhs_pack_fused_into_its_producer"
"""The constraint a packing space takes on once an LHS pack rule matched nothing (see
:meth:`PackingSpace.without_unmatched`)."""


def in_place_rules(layout: Rule, blocking: Rule, lhs_pack: Rule, problem: tuple[int, int, int], types: tuple[str, str, str]) -> tuple[Rule, Rule, Rule]:
    """The packing candidate's three rules (layout, mmt4d blocking, LHS pack tiles) in the
    form that writes the result in place: K is not packed (``matmul_packed_sizes = [M0, N0,
    0]``), the packed op stays a ``linalg.generic`` (not specialized) and the result's unpack
    is lowered (``DataLayout.lower_unpack``). IREE then folds the unpack's transpose into the
    op (loops M1, M0, N1, N0, K: :data:`IN_PLACE_MAPS`) and, the op being a generic, fuses
    its elementwise consumers into its dispatch, where linalg.mmt4d takes none: an FFN-up
    projection's GELU runs on the register tile, and no unpack dispatch is left. The
    blocking keeps the knobs' workgroup (M1 and N1 micro panels) and register tile (M0 x N0,
    one K step) on IREE's DoubleTilingExpert; the LHS pack tiles reach the ``[M1, K, M0]``
    pack. Requires M and N multiples of M0 and N0 (a padded result is copied out), each at
    least two tiles, and K > 1 (IREE folds a unit loop of the generic)."""
    strategy, tiles = layout.strategy, blocking.strategy
    assert isinstance(strategy, DataLayout) and isinstance(strategy.pack, PackGreedily) and isinstance(tiles, CpuLowering)
    m0, n0, _ = strategy.pack.matmul_packed_sizes
    m, n, k = problem
    lhs, rhs, out = types
    in_place = type(strategy)(**{**dict(strategy), "pack": PackGreedily(matmul_packed_sizes=[m0, n0, 0]), "specialize": False, "lower_unpack": True})
    m_tiles, n_tiles = tiles.distribution[:2]
    op = ContractionMatch(lhs_type=lhs, rhs_type=rhs, output_type=out, maps=IN_PLACE_MAPS, batch=[], m=[m // m0, m0], n=[n // n0, n0], k=[k])
    register = CpuLowering(
        name=tiles.name.removesuffix("_mmt4d") + "_in_place",
        pipeline="DoubleTilingExpert",
        distribution=[m_tiles, m0, n_tiles, n0, 0],
        vector_common_parallel=[1, m0, 1, n0, 0],
        vector_reduction=[0, 0, 0, 0, 1],
    )
    return (
        Rule(target=layout.target, match=layout.match, strategy=in_place, optional=layout.optional),
        Rule(target=blocking.target, match=op, strategy=register, optional=blocking.optional),
        Rule(target=lhs_pack.target, match=lhs_pack_match(lhs, m0, None), strategy=lhs_pack.strategy, optional=lhs_pack.optional),
    )


PANEL_MAPS = (
    "(d0, d1, d2, d3) -> (d0, d3)",
    "(d0, d1, d2, d3) -> (d1, d3, d2)",
    "(d0, d1, d2, d3) -> (d0, d1, d2)",
)
"""The RHS-panel op's indexing maps (loops M, N1, N0, K): LHS ``[M, K]``, RHS ``[N1, K, N0]``,
result ``[M, N1, N0]``."""
PANEL_TYPES = TILED_TYPES - {("i8", "i8", "i32"), ("i32", "i32", "i64")}
"""Element types with a panel space (i8 contractions lower to VNNI ukernels under data tiling,
which an outer product of i32 lanes does not approach; the i32 x i32 -> i64 matmul of ONNX
MatMulInteger has not been tried with panels)."""


MAX_PANEL_PADDING = 1 / 8
"""The most padding (a fraction of N) a panel width may add where no whole vector divides N."""


def _nearest(points: list[Values], wanted: dict[str, tuple[int, int]]) -> Values | None:
    """The point of ``points`` nearest to ``wanted`` ({knob: (value, weight)}): the weighted
    sum of log distances (tiles are ratios); ties go to the first in ``points``."""
    return min(points, key=lambda v: sum(w * abs(math.log2(v[key] / x)) for key, (x, w) in wanted.items()), default=None)


def panel_widths(view: OpView, isa: Isa) -> list[int]:
    """Panel widths N0 for ``view``: one or two whole vectors, each that divides N or pads it
    by at most :data:`MAX_PANEL_PADDING` (1000^3 on AVX-512, 63 panels of 16 padded to 1008
    columns, the result unpacked by its own dispatch: 7.98 ms against 9.35 ms for data
    tiling; half-vector panels of 8, 17.2 ms). A padded width beside a dividing one gives
    an odd panel count a register tile two vectors wide (1000 on AVX2: 125 panels of 8 take
    one panel per register tile, 63 of 16 take two vectors). At least two panels: one panel
    is the RHS as it is, IREE folds its unit panel loop, and the tiles pinned for the panel
    loops would match nothing."""
    n = view.sizes("n")[0]
    lanes = _lanes(isa, view)
    return [w for w in (lanes, 2 * lanes) if n > w and -n % w <= n * MAX_PANEL_PADDING]  # -n % w: 0 where w divides N


def _problem(view: OpView, match: MatcherKind, name: str, reason: str) -> tuple[int, int, int, tuple[str, str, str]]:
    """M, N, K and the (lhs, rhs, result) element types of a matmul ``view`` that a space
    takes (``reason`` empty; else ValueError naming the space ``name``)."""
    if reason:
        raise ValueError(f"{name}: {reason}")
    assert isinstance(match, ContractionMatch) and match.operand_layout is not None
    lhs, rhs, out = _element_types(view)
    return view.sizes("m")[0], view.sizes("n")[0], view.sizes("k")[0], (lhs, rhs, out)


def _row_tiles(m: int) -> list[int]:
    """Rows per workgroup of the panel op over ``m`` rows: powers of two from 8 to 512 and
    the divisors of ``m`` from 8 to 1024, those that divide ``m`` or cover it (a workgroup
    tile that leaves a remainder measured 3x slower: 1000^3 in 64-row workgroups 23.6 ms,
    in 40-row ones 8.0 ms)."""
    top = max(8, min(512, _ceil_pow2(m)))
    tiles = {2**e for e in range(3, top.bit_length())} | {d for d in range(8, min(m, 1024) + 1) if m % d == 0}
    return sorted(t for t in tiles if m % min(t, m) == 0)


def _panels(n: int, n0: int) -> int:
    """Panels of width ``n0`` over ``n`` columns (the last one padded)."""
    return -(-n // n0)


def panelable(view: OpView, match: MatcherKind, isa: Isa) -> str:
    """Why ``view`` (selected by ``match``) gets no RHS-panel space ("" when it gets one)."""
    reason = _plain_matmul(view, match)
    if reason:
        return reason
    if not view.roles.get("m") or view.sizes("m")[0] == 1:
        return "a matrix-vector product (no rows to share a panel)"
    types = _element_types(view)
    if types not in PANEL_TYPES:
        return f"element types {' x '.join(types)} have no panel space"
    if not _row_tiles(view.sizes("m")[0]):
        return f"M = {view.sizes('m')[0]} has no workgroup tile (no divisor from 8 to 1024, over 512 rows)"
    if not panel_widths(view, isa):
        n, lanes = view.sizes("n")[0], _lanes(isa, view)
        if n <= lanes:
            return f"N = {n} fits one panel of {lanes} lanes (one panel is the RHS as it is)"
        return f"N = {n} is not a multiple of a vector ({lanes} lanes) and panels of {lanes} or {2 * lanes} would pad it by more than {MAX_PANEL_PADDING:.1%}"
    return ""


class PanelSpace(Space):
    """A :class:`Space` over the RHS panels of one matmul (see :func:`panel_space`) whose
    candidates derive the matcher of the panel op from the panel width: loops ``M x N/N0 x
    N0 x K`` with :data:`PANEL_MAPS`, so that the tiles reach that op only."""

    def __init__(self, template: StrategySet, constraints: list[Constraint], m: int, n: int, k: int, types: tuple[str, str, str]) -> None:
        super().__init__(template, constraints)
        self.m, self.n, self.k, self.types = m, n, k, types

    def candidate(self, values: Values) -> StrategySet:
        concrete: StrategySet = super().candidate(values)
        layout, tiles = concrete.rules
        n0 = values["n0"]
        lhs, rhs, out = self.types
        op = ContractionMatch(lhs_type=lhs, rhs_type=rhs, output_type=out, maps=PANEL_MAPS, batch=[], m=[self.m], n=[_panels(self.n, n0), n0], k=[self.k])
        # A padded last panel keeps the result's unpack as a dispatch of its own.
        data_layout = type(layout.strategy)(**{**dict(layout.strategy), "lower_unpack": self.n % n0 == 0})
        return StrategySet(name=concrete.name, targets=concrete.targets, rules=(layout.model_copy(update={"strategy": data_layout}), tiles.model_copy(update={"match": op})))


_PANEL_SEEDS: dict[str, list[dict[str, int]]] = {
    "avx512": [
        {"wg_m": 256, "wg_n": 2, "vec_m": 8, "vec_n": 2, "vec_k": 1},
        {"wg_m": 64, "wg_n": 4, "vec_m": 8, "vec_n": 2, "vec_k": 1},
    ],
    "avx2": [
        {"wg_m": 32, "wg_n": 4, "vec_m": 4, "vec_n": 2, "vec_k": 4},
        {"wg_m": 128, "wg_n": 16, "vec_m": 4, "vec_n": 2, "vec_k": 4},
    ],
}
"""The panel space's wanted seeds per ISA (panels of one vector; each space seeds with the
valid points nearest to them). AVX-512: the best points on 1024^3 (Zen 5). AVX2: the
winners of the constant-weights suite on Zen 3 (1024^3, 1024^3 + transposed add and
3136x64x64 chose the first, 2048^3 the second; 4 rows x 2 panels, 8 of the 12 accumulators).
Other ISAs take AVX-512's (not measured)."""


def panel_space(view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str) -> PanelSpace:
    """The RHS-panel op-level space of one 2-D or batch-1 matmul (see the module docstring):
    ``base`` with two rules -- the graph-level layout of ``view`` (selected by ``match``):
    RHS packed into ``[N/N0, K, N0]`` panels, the result's unpack lowered to a reshape -- and
    the tiles of the panel op (``DoubleTilingExpert``). Where no whole vector divides N
    the last panel is padded and the result's unpack stays a dispatch of its own (lowered,
    the copy out of the padding ran as a host-side strided copy: 11.2 ms against 8.0 ms
    on 1000^3). Knobs: ``n0`` (panel width, whole vectors, see :func:`panel_widths`), ``wg_m`` / ``wg_n`` (rows / panels per workgroup), ``vec_m`` /
    ``vec_n`` (rows / panels per register tile; panel counts are powers of two or three times
    them; rows per workgroup also the divisors of M) and ``vec_k``. Workgroup tiles divide
    the rows and the panels, register tiles the workgroup tiles (a remainder inside every
    workgroup measured 4x slower, a remainder panel 2-5x, a remainder workgroup 3x). Seeds: the valid
    points nearest to the ISA's :data:`_PANEL_SEEDS`. Requires ``panelable(view, match, isa) == ""``."""
    m, n, k, types = _problem(view, match, name, panelable(view, match, isa))
    lanes = _lanes(isa, view)
    n0 = Choice("n0", panel_widths(view, isa))
    wg_m = Choice("wg_m", _row_tiles(m))
    # Panels per workgroup and per register tile: powers of two and three times them (63
    # panels of 1000 columns divide by 3, not 2; 8 x 3 register tiles measured best there).
    most_panels = max(1, min(64, _ceil_pow2(n // lanes)))
    wg_n = Choice("wg_n", sorted({f * 2**e for f in (1, 3) for e in range(7) if f * 2**e <= most_panels} | {1}))
    vec_m = Choice("vec_m", [v for v in (1, 2, 4, 8, 16) if v <= m])
    vec_n = Choice("vec_n", [1, 2, 3, 4])
    vec_k = Choice("vec_k", [1, 2, 4])
    transposes = [PackTranspose(operand="rhs", outer_perm=[1, 0])] if isinstance(match, ContractionMatch) and match.operand_layout == "mk_kn" else []
    folded = {"generalize": True, "fold_unit_dims": True} if view.roles.get("batch") else {}
    layout = DataLayout(name=name, pack=PackGreedily(matmul_packed_sizes=[0, n0, 0]), pack_transposes=transposes, lower_unpack=False, **folded)
    tiles = CpuLowering(
        name=f"{name}_tiles",
        distribution=[wg_m, wg_n, n0, 0],
        vector_common_parallel=[vec_m, vec_n, n0, 0],
        vector_reduction=[0, 0, 0, vec_k],
    )
    template = StrategySet(
        name=f"tune_{name}",
        targets=[base],
        rules=[
            Rule(target=base.name, match=match, strategy=layout, optional=False),
            Rule(target=base.name, match=OpNameMatch(names="linalg.generic"), strategy=tiles, optional=False),
        ],
    )
    constraints = [
        Constraint("workgroups_divide_the_problem", lambda v: m % min(v["wg_m"], m) == 0 and _panels(n, v["n0"]) % min(v["wg_n"], _panels(n, v["n0"])) == 0),
        Constraint(
            "register_tile_inside_workgroup_tile",
            lambda v: min(v["wg_m"], m) % v["vec_m"] == 0 and min(v["wg_n"], _panels(n, v["n0"])) % v["vec_n"] == 0,
        ),
        Constraint("workgroup_inside_the_problem", lambda v: v["wg_n"] * v["n0"] <= max(v["n0"], _ceil_pow2(n))),
        Constraint(
            f"at_most_{_MAX_ACCUMULATORS[isa]}_accumulator_registers",
            lambda v: v["vec_m"] * v["vec_n"] * (v["n0"] // lanes) <= _MAX_ACCUMULATORS[isa],
        ),
    ]
    space = PanelSpace(template, constraints, m, n, k, types)
    wanted = [{"n0": lanes, **point} for point in _PANEL_SEEDS.get(isa, _PANEL_SEEDS["avx512"])]
    valid = [v for v in space.assignments() if all(c(v) for c in constraints)]
    seeds: list[Values] = []
    for point in wanted:
        seed = _nearest(valid, {key: (value, 1) for key, value in point.items()})
        if seed is not None and seed not in seeds:
            seeds.append(seed)
    space.seeds = seeds
    return space


def packing_space(view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str, caches: Caches | None = None) -> PackingSpace:
    """The packed op-level space of one 2-D or batch-1 matmul (see the module docstring):
    ``base`` with ukernels off, and three rules -- the graph-level packing of
    ``view`` (selected by ``match``), the ``Mmt4dTilingExpert`` blocking of the packed op
    and the LHS pack's tiles. Knobs: ``m0``, ``n0`` (the inner tile), ``m_tiles``,
    ``n_tiles`` (micro panels per workgroup) and ``lhs_pack_step`` (0: IREE's
    configuration). The ready library's point (:func:`tdsl.strategies.cpu.auto` with
    ``pack_matmuls=True``: the ISA's inner tile, blocking from ``caches``, 16-wide LHS pack
    steps) is the seed. Requires ``packable(view, match) == ""``."""
    m, n, k, types = _problem(view, match, name, packable(view, match))
    lanes = _lanes(isa, view)
    m0 = Choice("m0", [v for v in (2, 4, 8, 16) if v <= m] or [1])  # 1: a matrix-vector product
    n0 = Choice("n0", _vector_widths(n, lanes))
    m_tiles = PowersOfTwo("m_tiles", 1, 64)
    n_tiles = PowersOfTwo("n_tiles", 1, 16)
    step = Choice("lhs_pack_step", [0, 16])
    in_place = Choice("in_place", [False, True])
    transposes = [PackTranspose(operand="rhs", outer_perm=[1, 0])] if isinstance(match, ContractionMatch) and match.operand_layout == "mk_kn" else []
    # A batch-1 batch matmul (ONNX MatMul of a 3-D activation) is folded to the 2-D matmul first.
    folded = {"generalize": True, "fold_unit_dims": True} if view.roles.get("batch") else {}
    # in_place rides on lower_unpack; PackingSpace.candidate makes the rest of that form.
    layout = DataLayout(name=name, pack=PackGreedily(matmul_packed_sizes=[m0, n0, 1]), pack_transposes=transposes, specialize=True, lower_unpack=in_place, **folded)
    blocking = CpuLowering(
        name=f"{name}_mmt4d",
        pipeline="Mmt4dTilingExpert",
        distribution=[m_tiles, n_tiles, 0, 0, 0, 0],
        vector_common_parallel=[1, 1, 0, m0, n0, 0],
        vector_reduction=[0, 0, 1, 0, 0, 1],
    )
    lhs_pack = CpuLowering(name=f"{name}_lhs_pack", pipeline="DataTiling", distribution=[64, 64], vector_common_parallel=[1, step])
    cpu = base.model_copy(update={"ukernels": "none"})
    template = StrategySet(
        name=f"tune_{name}",
        targets=[cpu],
        rules=[
            Rule(target=cpu.name, match=match, strategy=layout, optional=False),
            Rule(target=cpu.name, match=OpNameMatch(names="linalg.mmt4d"), strategy=blocking, optional=False),
            Rule(target=cpu.name, match=lhs_pack_match(types[0], m0, 1), strategy=lhs_pack, optional=False),
        ],
    )
    constraints = [
        _accumulator_limit(isa, lanes, "m0", "n0"),
        Constraint("workgroup_inside_the_problem", lambda v: v["m_tiles"] * v["m0"] <= _ceil_pow2(m) and v["n_tiles"] * v["n0"] <= max(v["n0"], _ceil_pow2(n))),
        Constraint("in_place_needs_whole_tiles", lambda v: not v["in_place"] or (m % v["m0"] == 0 and n % v["n0"] == 0)),
        # One M or N tile, or K = 1: IREE folds that unit loop of the generic, and the
        # in-place maps (and the layout's marker) no longer find it (16x32x100 with N0 = 32,
        # 2x512x64 with M0 = 2, 4x32x1: the rules matched nothing, the outputs stayed right).
        Constraint("in_place_needs_no_unit_loop", lambda v: not v["in_place"] or (m // v["m0"] > 1 and n // v["n0"] > 1 and k > 1)),
    ]
    space = PackingSpace(template, constraints, m, n, k, types)
    # The seeds: the valid point nearest to the ready library's (log distance: tiles are
    # ratios; the register tile weighs twice the workgroup's, so that a small M gets fewer
    # micro panels per workgroup rather than a thinner tile), then the same without the LHS
    # pack tiles and in place.
    tile = inner_tile(isa, *types)
    library = mmt4d_blocking(name, tile, caches or detect_caches())
    wanted = {"m0": (tile.m0, 2), "n0": (tile.n0, 2), "m_tiles": (M_TILES, 1), "n_tiles": (library.distribution[1], 1)}
    valid = [v for v in space.assignments() if all(c(v) for c in constraints) and v["lhs_pack_step"] and not v["in_place"]]
    seed = _nearest(valid, wanted)
    seeds = [seed, seed | {"lhs_pack_step": 0}, seed | {"in_place": True}] if seed is not None else []
    space.seeds = [v for v in seeds if all(c(v) for c in constraints)]
    return space
