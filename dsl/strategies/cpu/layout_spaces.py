"""Ready CPU op-level layout spaces for ``tdsl tune``: a 2-D (or batch-1, folded) matmul
packed at the graph level for ``linalg.mmt4d`` (:func:`packing_space`) or with its RHS alone
packed into panels (:func:`panel_space`); what each requires (:func:`packable`,
:func:`panelable`). :mod:`tdsl.strategies.cpu.space` describes both with the other spaces."""

from __future__ import annotations

import math
from typing import Sequence

from ...compiler.ops import OpView
from ...model.kinds import MatcherKind
from ...model.knobs import Choice, PowersOfTwo
from ...model.layout import DataLayout, PackGreedily, PackTranspose
from ...model.lowering import CpuLowering
from ...model.matchers import ContractionMatch, OpNameMatch
from ...sets.space import Constraint, Space, Values
from ...sets.strategy_set import Rule, StrategySet
from ...targets import CpuTarget
from ...targets.host import Caches, Isa, detect_caches
from .blocking import M_TILES, lhs_pack_match, mmt4d_blocking, mmt4d_tiles
from .space import (
    _MAX_ACCUMULATORS,
    TILED_TYPES,
    _accumulator_limit,
    _ceil_pow2,
    _element_types,
    _lanes,
    _vector_widths,
    tunable,
)
from .tiles import PACKING_TYPES, inner_tile

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

    def __init__(
        self, template: StrategySet, constraints: list[Constraint], m: int, n: int, k: int, types: tuple[str, str, str]
    ) -> None:
        super().__init__(template, constraints)
        self.m, self.n, self.k, self.types = m, n, k, types

    def candidate(self, values: Values) -> StrategySet:
        concrete: StrategySet = super().candidate(values)
        layout, blocking, lhs_pack = concrete.rules
        if values["in_place"]:
            layout, blocking, lhs_pack = in_place_rules(
                layout, blocking, lhs_pack, (self.m, self.n, self.k), self.types
            )
        else:
            m0, n0 = values["m0"], values["n0"]
            lhs, rhs, out = self.types
            packed = ContractionMatch(
                lhs_type=lhs,
                rhs_type=rhs,
                output_type=out,
                maps=MMT4D_MAPS,
                batch=[],
                m=[-(-self.m // m0), m0],
                n=[-(-self.n // n0), n0],
                k=[self.k, 1],
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


def in_place_rules(
    layout: Rule, blocking: Rule, lhs_pack: Rule, problem: tuple[int, int, int], types: tuple[str, str, str]
) -> tuple[Rule, Rule, Rule]:
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
    assert (
        isinstance(strategy, DataLayout) and isinstance(strategy.pack, PackGreedily) and isinstance(tiles, CpuLowering)
    )
    m0, n0, _ = strategy.pack.matmul_packed_sizes
    m, n, k = problem
    lhs, rhs, out = types
    in_place = type(strategy)(
        **{
            **dict(strategy),
            "pack": PackGreedily(matmul_packed_sizes=[m0, n0, 0]),
            "specialize": False,
            "lower_unpack": True,
        }
    )
    m_tiles, n_tiles = tiles.distribution[:2]
    op = ContractionMatch(
        lhs_type=lhs,
        rhs_type=rhs,
        output_type=out,
        maps=IN_PLACE_MAPS,
        batch=[],
        m=[m // m0, m0],
        n=[n // n0, n0],
        k=[k],
    )
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
        Rule(
            target=lhs_pack.target,
            match=lhs_pack_match(lhs, m0, None),
            strategy=lhs_pack.strategy,
            optional=lhs_pack.optional,
        ),
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
    return min(
        points, key=lambda v: sum(w * abs(math.log2(v[key] / x)) for key, (x, w) in wanted.items()), default=None
    )


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

    def __init__(
        self, template: StrategySet, constraints: list[Constraint], m: int, n: int, k: int, types: tuple[str, str, str]
    ) -> None:
        super().__init__(template, constraints)
        self.m, self.n, self.k, self.types = m, n, k, types

    def candidate(self, values: Values) -> StrategySet:
        concrete: StrategySet = super().candidate(values)
        layout, tiles = concrete.rules
        n0 = values["n0"]
        lhs, rhs, out = self.types
        op = ContractionMatch(
            lhs_type=lhs,
            rhs_type=rhs,
            output_type=out,
            maps=PANEL_MAPS,
            batch=[],
            m=[self.m],
            n=[_panels(self.n, n0), n0],
            k=[self.k],
        )
        # A padded last panel keeps the result's unpack as a dispatch of its own.
        data_layout = type(layout.strategy)(**{**dict(layout.strategy), "lower_unpack": self.n % n0 == 0})
        return StrategySet(
            name=concrete.name,
            targets=concrete.targets,
            rules=(layout.model_copy(update={"strategy": data_layout}), tiles.model_copy(update={"match": op})),
        )


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
    transposes = (
        [PackTranspose(operand="rhs", outer_perm=[1, 0])]
        if isinstance(match, ContractionMatch) and match.operand_layout == "mk_kn"
        else []
    )
    folded = {"generalize": True, "fold_unit_dims": True} if view.roles.get("batch") else {}
    layout = DataLayout(
        name=name,
        pack=PackGreedily(matmul_packed_sizes=[0, n0, 0]),
        pack_transposes=transposes,
        lower_unpack=False,
        **folded,
    )
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
        Constraint(
            "workgroups_divide_the_problem",
            lambda v: m % min(v["wg_m"], m) == 0 and _panels(n, v["n0"]) % min(v["wg_n"], _panels(n, v["n0"])) == 0,
        ),
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


def _packing_constraints(isa: Isa, lanes: int, m: int, n: int, k: int) -> list[Constraint]:
    """The constraints of a packed matmul's space (:func:`packing_space`) on an ``m`` x ``n`` x
    ``k`` problem: the accumulator fits the registers, a workgroup stays inside the problem,
    and the in-place form gets whole tiles and no unit loop."""
    return [
        _accumulator_limit(isa, lanes, "m0", "n0"),
        Constraint(
            "workgroup_inside_the_problem",
            lambda v: v["m_tiles"] * v["m0"] <= _ceil_pow2(m) and v["n_tiles"] * v["n0"] <= max(v["n0"], _ceil_pow2(n)),
        ),
        Constraint(
            "in_place_needs_whole_tiles", lambda v: not v["in_place"] or (m % v["m0"] == 0 and n % v["n0"] == 0)
        ),
        # One M or N tile, or K = 1: IREE folds that unit loop of the generic, and the
        # in-place maps (and the layout's marker) no longer find it (16x32x100 with N0 = 32,
        # 2x512x64 with M0 = 2, 4x32x1: the rules matched nothing, the outputs stayed right).
        Constraint(
            "in_place_needs_no_unit_loop",
            lambda v: not v["in_place"] or (m // v["m0"] > 1 and n // v["n0"] > 1 and k > 1),
        ),
    ]


def packing_space(
    view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str, caches: Caches | None = None
) -> PackingSpace:
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
    transposes = (
        [PackTranspose(operand="rhs", outer_perm=[1, 0])]
        if isinstance(match, ContractionMatch) and match.operand_layout == "mk_kn"
        else []
    )
    # A batch-1 batch matmul (ONNX MatMul of a 3-D activation) is folded to the 2-D matmul first.
    folded = {"generalize": True, "fold_unit_dims": True} if view.roles.get("batch") else {}
    # in_place rides on lower_unpack; PackingSpace.candidate makes the rest of that form.
    layout = DataLayout(
        name=name,
        pack=PackGreedily(matmul_packed_sizes=[m0, n0, 1]),
        pack_transposes=transposes,
        specialize=True,
        lower_unpack=in_place,
        **folded,
    )
    blocking = mmt4d_tiles(f"{name}_mmt4d", m0, n0, 1, m_tiles, n_tiles)
    lhs_pack = CpuLowering(
        name=f"{name}_lhs_pack", pipeline="DataTiling", distribution=[64, 64], vector_common_parallel=[1, step]
    )
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
    constraints = _packing_constraints(isa, lanes, m, n, k)
    space = PackingSpace(template, constraints, m, n, k, types)
    # The seeds: the valid point nearest to the ready library's (log distance: tiles are
    # ratios; the register tile weighs twice the workgroup's, so that a small M gets fewer
    # micro panels per workgroup rather than a thinner tile), then the same without the LHS
    # pack tiles and in place.
    tile = inner_tile(isa, *types)
    library = mmt4d_blocking(name, tile, caches or detect_caches())
    wanted = {"m0": (tile.m0, 2), "n0": (tile.n0, 2), "m_tiles": (M_TILES, 1), "n_tiles": (library.distribution[1], 1)}
    valid = [
        v for v in space.assignments() if all(c(v) for c in constraints) and v["lhs_pack_step"] and not v["in_place"]
    ]
    seed = _nearest(valid, wanted)
    seeds = [seed, seed | {"lhs_pack_step": 0}, seed | {"in_place": True}] if seed is not None else []
    space.seeds = [v for v in seeds if all(c(v) for c in constraints)]
    return space
