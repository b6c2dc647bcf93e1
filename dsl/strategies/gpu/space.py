"""The gfx942 search space of one contraction or convolution, and its ranking without a GPU.

:func:`gfx942_space` returns a :class:`Gfx942Space`: one gfx942 rule (the problem's
exact-shape matcher and the chooser's ``GpuLowering``) with a knob in each field the
chooser decides:

| knob | field | values |
| --- | --- | --- |
| ``intrinsic`` | ``mma_kind`` | the MFMA intrinsics of the element types |
| ``workgroup`` | ``workgroup`` | an m-group tile x an n-group tile the chooser considers |
| ``subgroups_m`` / ``subgroups_n`` | ``subgroup_m_count`` / ``subgroup_n_count`` | 1, 2, 4 or 8 |
| ``reduction`` | innermost k of ``reduction`` | intrinsics of K per iteration |
| ``pipeline`` | ``pipeline`` | TileAndFuse, or VectorDistribute where one m, n, k loop divides |
| ``prefetch`` | ``prefetch_num_stages`` | 0 or 2 |
| ``waves_per_eu`` | ``llvm_func_attrs`` | none, 2 or 4 |

Assignment 0 is the chooser's own configuration; ``spread=2`` (the default) keeps values
within a factor of 2 of it (at most 5832 assignments), ``spread=None`` every value the
chooser considers. A candidate derives ``subgroup``, ``workgroup_size``, ``padding`` and,
for VectorDistribute, ``subgroup_basis`` from the values, as :func:`~.chooser.choose`
does. Named constraints prune what is no tiling or breaks a limit (``tiles_fit_intrinsic``,
``subgroups_per_workgroup``, ``subgroups_fill_workgroup``, ``reduction_tiles_k``,
``vector_distribute_unpadded``, ``lds_fits``, ``registers_fit``,
``prefetch_needs_three_k_iterations``, ``waves_per_eu_fits_registers``); each candidate left
is validated in full.

:func:`rank` orders the valid candidates by the chooser's cost model
(:func:`~.chooser.estimate`, :func:`~.chooser.rank_key`); :func:`rerank_with_resources`
re-ranks with the compiler's real register counts. Nothing here has run on a GPU: the
cost model's constants are assumptions about MI300X, and candidates are verified to
validate, render and (in the tests, a few) compile for gfx942.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar, Union

from ...compiler.hsaco import KernelResources
from ...errors import TdslError
from ...model.kinds import MatcherKind
from ...model.knobs import Choice, KnobError
from ...model.lowering import GpuLowering
from ...sets.space import Candidate, Constraint, Space, Values
from ...sets.strategy_set import Rule, StrategySet
from ...targets import GFX942, AmdGpuArch, AmdGpuTarget, MmaIntrinsic
from .chooser import (
    MAX_VGPRS,
    SUBGROUP_COUNTS,
    Estimate,
    Tiling,
    _group_tiles,
    _intrinsics,
    _mfma_cycles,
    _needs_padding,
    _reductions,
    best_tiling,
    estimate,
    lowering,
    make_tiling,
    rank_key,
)
from .problems import Contraction, Convolution, Convolution2d, Gemm

SPREAD = 2
"""Default ``spread`` of :func:`gfx942_space`: knob values within this factor of the chooser's."""
PREFETCH_STAGES = (0, 2)
"""Values of the ``prefetch`` knob (``prefetch_num_stages``)."""
WAVES_PER_EU = (None, 2, 4)
"""Values of the ``waves_per_eu`` knob: no attribute, or ``amdgpu-waves-per-eu`` N."""
PIPELINES = ("TileAndFuse", "VectorDistribute")
"""Values of the ``pipeline`` knob, where it is one (a contraction with one m, n and k loop)."""
CLOCK_HZ = 2.1e9
"""MI300X engine clock the estimated cycles are turned into microseconds with (an assumption, as the chooser's constants)."""
WAVES_ATTR = "amdgpu-waves-per-eu"

Problem = Union[Contraction, Convolution, Convolution2d]

_T = TypeVar("_T")


# --- the space -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setup:
    """What the knob values are checked against: the problem's GEMM view and, per
    intrinsic name, its legal group tiles, reductions and whether it pads."""

    gemm: Gemm
    name: str
    target: str
    facts: AmdGpuArch
    igemm: bool
    match: MatcherKind
    intrinsics: dict[str, MmaIntrinsic]
    m_tiles: dict[str, frozenset[tuple[int, ...]]]
    n_tiles: dict[str, frozenset[tuple[int, ...]]]
    reductions: dict[str, frozenset[int]]
    padded: dict[str, bool]


class Gfx942Space(Space):
    """A :class:`Space` over one gfx942 rule whose candidates derive ``subgroup``,
    ``workgroup_size``, ``padding`` (and VectorDistribute's ``subgroup_basis``) from the
    knob values (module docstring): use :meth:`candidate`, not ``template.with_values``."""

    def __init__(self, template: StrategySet, setup: _Setup) -> None:
        self.setup = setup
        self._models: dict[tuple[object, ...], Optional[tuple[Tiling, Estimate]]] = {}
        super().__init__(template, self._constraints())

    # -- values -> tiling -------------------------------------------------------------------------

    def _groups(self, values: Values) -> tuple[tuple[int, ...], tuple[int, ...]]:
        workgroup = list(values["workgroup"])
        gemm = self.setup.gemm
        return tuple(workgroup[i] for i in gemm.loops("m")), tuple(workgroup[i] for i in gemm.loops("n"))

    def model(self, values: Values) -> Optional[tuple[Tiling, Estimate]]:
        """The tiling the values stand for and its estimate (the model's defaults for
        prefetch and waves); None when they are no tiling (a group tile that does not split
        into the subgroups, or an unknown intrinsic)."""
        key = (
            values["intrinsic"],
            tuple(values["workgroup"]),
            values["subgroups_m"],
            values["subgroups_n"],
            values["reduction"],
        )
        if key not in self._models:
            x = self.setup.intrinsics.get(values["intrinsic"])
            found: Optional[tuple[Tiling, Estimate]] = None
            if x is not None:
                mt, nt = self._groups(values)
                tiling = make_tiling(
                    self.setup.gemm,
                    x,
                    mt,
                    nt,
                    values["subgroups_m"],
                    values["subgroups_n"],
                    values["reduction"],
                    self.setup.padded[x.name],
                )
                if tiling is not None:
                    found = (tiling, estimate(self.setup.gemm, tiling, self.setup.facts))
            self._models[key] = found
        return self._models[key]

    def _constraints(self) -> list[Constraint]:
        s = self.setup

        def tiles_fit_intrinsic(v: Values) -> bool:
            mt, nt = self._groups(v)
            name = v["intrinsic"]
            return name in s.intrinsics and mt in s.m_tiles[name] and nt in s.n_tiles[name]

        def subgroups_per_workgroup(v: Values) -> bool:
            return v["subgroups_m"] * v["subgroups_n"] in SUBGROUP_COUNTS

        def subgroups_fill_workgroup(v: Values) -> bool:
            return self.model(v) is not None

        def reduction_tiles_k(v: Values) -> bool:
            return v["reduction"] in s.reductions[v["intrinsic"]]

        def vector_distribute_unpadded(v: Values) -> bool:
            return bool(v.get("pipeline", "TileAndFuse") == "TileAndFuse" or not s.padded[v["intrinsic"]])

        def _estimate(v: Values) -> Estimate:
            found = self.model(v)
            assert found is not None  # subgroups_fill_workgroup ran first
            return found[1]

        def lds_fits(v: Values) -> bool:
            return bool(_estimate(v).lds_bytes <= s.facts.lds_bytes_per_workgroup)

        def registers_fit(v: Values) -> bool:
            return _estimate(v).vgprs <= MAX_VGPRS

        def prefetch_needs_three_k_iterations(v: Values) -> bool:
            return v["prefetch"] == 0 or _estimate(v).k_iterations >= 3

        def waves_per_eu_fits_registers(v: Values) -> bool:
            waves = _waves_of(v["waves_per_eu"])
            return waves == 0 or _estimate(v).vgprs <= s.facts.vgprs_per_simd // waves

        checks = [
            tiles_fit_intrinsic,
            subgroups_per_workgroup,
            subgroups_fill_workgroup,
            reduction_tiles_k,
            vector_distribute_unpadded,
            lds_fits,
            registers_fit,
            prefetch_needs_three_k_iterations,
            waves_per_eu_fits_registers,
        ]
        return [Constraint(check.__name__, check) for check in checks]

    # -- values -> configuration ------------------------------------------------------------------

    def lowering(self, values: Values) -> GpuLowering:
        """The configuration the values stand for (raises :class:`KnobError` where they are
        no tiling; the constraints prune those)."""
        missing = [k.name for k in self.knobs if k.name not in values]
        if missing:
            raise KnobError("values", f"a value for every knob ({', '.join(missing)} missing)", repr(values))
        if values["intrinsic"] not in self.setup.intrinsics:
            raise KnobError(
                "intrinsic",
                "an MFMA intrinsic of the element types: " + ", ".join(self.setup.intrinsics),
                repr(values["intrinsic"]),
            )
        found = self.model(values)
        if found is None:
            raise KnobError(
                "workgroup",
                f"a workgroup tile that {values['subgroups_m']} x {values['subgroups_n']} subgroups split into whole "
                f"{values['intrinsic']} tiles",
                repr(values["workgroup"]),
            )
        tiling = found[0]
        s = self.setup
        attrs = values["waves_per_eu"]
        attrs = dict(attrs) if attrs else None
        if values.get("pipeline", "TileAndFuse") == "TileAndFuse":
            return lowering(
                s.gemm, tiling, s.name, s.facts, s.igemm, prefetch_num_stages=values["prefetch"], llvm_func_attrs=attrs
            )
        if tiling.padded:
            raise KnobError(
                "pipeline", f"TileAndFuse where {tiling.intrinsic.name} pads the problem", "VectorDistribute"
            )
        x = tiling.intrinsic
        counts = [1] * len(s.gemm.sizes)
        counts[s.gemm.loops("m")[-1]] = values["subgroups_m"]
        counts[s.gemm.loops("n")[-1]] = values["subgroups_n"]
        k_inner = s.gemm.loops("k")[-1]
        elements = [r * x.k if i == k_inner else r for i, r in enumerate(tiling.reduction)]
        return GpuLowering(
            name=s.name,
            pipeline="VectorDistribute",
            workgroup=list(tiling.workgroup),
            reduction=elements,
            subgroup_basis=(tuple(counts), tuple(range(len(counts)))),
            mma_kind=x.name,
            promote_operands=[0, 1],
            workgroup_size=[values["subgroups_m"] * values["subgroups_n"] * s.facts.subgroup_size, 1, 1],
            prefetch_num_stages=values["prefetch"],
            llvm_func_attrs=attrs,
        )

    def candidate(self, values: Values) -> StrategySet:
        """The concrete, fully validated set for ``values`` (raises :class:`StrategyError`
        where it does not validate; constraints are not checked here)."""
        s = self.setup
        rule = Rule(target=s.target, match=s.match, strategy=self.lowering(values))
        return StrategySet(name=s.name, targets=[AmdGpuTarget(name=s.target)], rules=[rule])


def _general(problem: Problem) -> Union[Contraction, Convolution]:
    return problem.general() if isinstance(problem, Convolution2d) else problem


def _counts(gemm: Gemm, tiling: Tiling) -> tuple[int, int]:
    """Subgroups along the m and n groups of a TileAndFuse tiling."""
    x = tiling.intrinsic
    found = []
    for role, unit in (("m", x.m), ("n", x.n)):
        loops = gemm.loops(role)
        count = 1
        for j, i in enumerate(loops):
            span = tiling.subgroup[i] * (unit if j == len(loops) - 1 else 1)
            count *= tiling.workgroup[i] // max(span, 1)
        found.append(count)
    return found[0], found[1]


def _near(values: Sequence[_T], chosen: _T, size: Callable[[_T], int], spread: Optional[int]) -> list[_T]:
    """``chosen`` first, then the other ``values`` whose ``size(value)`` is within a factor
    ``spread`` of ``size(chosen)`` (all of them with ``spread=None``), in order."""
    center = size(chosen)
    rest = [
        v
        for v in values
        if v != chosen and (spread is None or center <= size(v) * spread and size(v) <= center * spread)
    ]
    return [chosen, *rest]


def gfx942_space(
    problem: Problem,
    name: str,
    target: str = AmdGpuTarget.default_name,
    facts: AmdGpuArch = GFX942,
    *,
    spread: Optional[int] = SPREAD,
) -> Space:
    """The search space of ``problem`` on gfx942 (module docstring): a :class:`Gfx942Space`
    over one rule named ``name`` for ``target``, the chooser's configuration first. Raises
    :class:`TdslError` where the chooser has no MFMA configuration (no intrinsic for the
    element types, or a problem the chooser cannot express)."""
    if spread is not None and spread < 1:
        raise TdslError(f"gfx942_space spread: expected None or a factor of at least 1, received {spread!r}")
    general = _general(problem)
    gemm = general.gemm()
    best = best_tiling(gemm, facts)
    if best is None:
        raise TdslError(
            f"gfx942_space: no MFMA intrinsic of {facts.arch} takes {gemm.lhs_type} x {gemm.rhs_type} -> {gemm.output_type} "
            "(the chooser's SIMT configuration has no knobs here)"
        )
    igemm = isinstance(general, Convolution)
    m_loops, n_loops, k_loops = gemm.loops("m"), gemm.loops("n"), gemm.loops("k")
    typed = _intrinsics(gemm, facts)
    intrinsics = {x.name: x for x in [best.intrinsic, *[x for x in typed if x != best.intrinsic]]}
    padded = {x.name: _needs_padding(gemm, x) for x in typed}
    m_tiles = {x.name: frozenset(_group_tiles([gemm.sizes[i] for i in m_loops], x.m, padded[x.name])) for x in typed}
    n_tiles = {x.name: frozenset(_group_tiles([gemm.sizes[i] for i in n_loops], x.n, padded[x.name])) for x in typed}
    reductions = {x.name: frozenset(_reductions(gemm.sizes[k_loops[-1]], x.k)) for x in typed}
    setup = _Setup(gemm, name, target, facts, igemm, general.match(), intrinsics, m_tiles, n_tiles, reductions, padded)

    chosen = lowering(gemm, best, name, facts, igemm)
    cm, cn = _counts(gemm, best)
    best_m = tuple(best.workgroup[i] for i in m_loops)
    best_n = tuple(best.workgroup[i] for i in n_loops)
    all_m = sorted(set().union(*m_tiles.values()), key=lambda t: (math.prod(t), t))  # by rows, then loop by loop
    all_n = sorted(set().union(*n_tiles.values()), key=lambda t: (math.prod(t), t))
    near_m = _near(all_m, best_m, math.prod, spread)
    near_n = _near(all_n, best_n, math.prod, spread)

    def workgroup_list(mt: tuple[int, ...], nt: tuple[int, ...]) -> list[int]:
        tiles = list(best.workgroup)
        for loops, tile in ((m_loops, mt), (n_loops, nt)):
            for j, i in enumerate(loops):
                tiles[i] = tile[j]
        return tiles

    workgroups = [workgroup_list(mt, nt) for mt in near_m for nt in near_n]
    r_best = best.reduction[k_loops[-1]]
    r_all = sorted(set().union(*reductions.values()))
    identity = lambda v: v  # noqa: E731 - the size of a count is the count

    reduction: list[Any] = list(chosen.reduction or ())
    reduction[k_loops[-1]] = Choice("reduction", _near(r_all, r_best, identity, spread))
    prefetch = chosen.prefetch_num_stages
    fields: dict[str, Any] = {
        "name": name,
        "mma_kind": Choice("intrinsic", list(intrinsics)),
        "workgroup": Choice("workgroup", workgroups),
        "subgroup_m_count": Choice("subgroups_m", _near(SUBGROUP_COUNTS, cm, identity, spread)),
        "subgroup_n_count": Choice("subgroups_n", _near(SUBGROUP_COUNTS, cn, identity, spread)),
        "reduction": reduction,
    }
    if not igemm and len(m_loops) == len(n_loops) == len(k_loops) == 1 and not all(padded.values()):
        fields["pipeline"] = Choice("pipeline", list(PIPELINES))
    fields["prefetch_num_stages"] = Choice("prefetch", [prefetch, *[p for p in PREFETCH_STAGES if p != prefetch]])
    fields["llvm_func_attrs"] = Choice(
        "waves_per_eu", [None if w is None else {WAVES_ATTR: str(w)} for w in WAVES_PER_EU]
    )
    fields.update(
        subgroup=list(chosen.subgroup or ()),
        promote_operands=list(chosen.promote_operands),
        padding=chosen.padding,
        workgroup_size=list(chosen.workgroup_size),
        use_igemm_convolution=chosen.use_igemm_convolution,
    )
    rule = Rule(target=target, match=setup.match, strategy=GpuLowering(**fields))
    template = StrategySet(name=name, targets=[AmdGpuTarget(name=target)], rules=[rule])
    return Gfx942Space(template, setup)


# --- ranking -------------------------------------------------------------------------------------


def _waves_of(attrs: Optional[Mapping[str, str]]) -> int:
    """The minimum waves per EU an ``amdgpu-waves-per-eu`` attribute asks for (0: none)."""
    text = (attrs or {}).get(WAVES_ATTR)
    return int(text.split(",")[0]) if text else 0


def tiling_of(strategy: GpuLowering, gemm: Gemm, facts: AmdGpuArch = GFX942) -> Tiling:
    """The tiling a TileAndFuse or VectorDistribute MFMA configuration of ``gemm`` stands
    for (what :func:`~.chooser.estimate` takes); raises :class:`TdslError` for one without
    an intrinsic of ``facts`` or with another loop count."""
    x = facts.intrinsic(strategy.mma_kind) if strategy.mma_kind else None
    if x is None:
        raise TdslError(
            f"{strategy.name}: the cost model needs an MFMA intrinsic of {facts.arch}, received mma_kind {strategy.mma_kind!r}"
        )
    n = len(gemm.sizes)
    if len(strategy.workgroup) != n:
        raise TdslError(
            f"{strategy.name}: expected {n} workgroup entries for loops {''.join(gemm.roles)}, received {list(strategy.workgroup)}"
        )
    workgroup = tuple(strategy.workgroup)
    reduction = list(strategy.reduction or (0,) * n)
    k_inner = gemm.loops("k")[-1]
    if strategy.pipeline == "VectorDistribute":
        assert strategy.subgroup_basis is not None  # the model requires it with VectorDistribute
        counts = strategy.subgroup_basis[0]
        inner = {gemm.loops(role)[-1]: unit for role, unit in (("m", x.m), ("n", x.n))}
        subgroup = tuple(
            (t // max(c, 1)) // inner.get(i, 1) if role in "mn" else 0 if role == "k" else 1
            for i, (role, t, c) in enumerate(zip(gemm.roles, workgroup, counts))
        )
        reduction[k_inner] = max(reduction[k_inner] // x.k, 1)
    else:
        subgroup = tuple(strategy.subgroup or (1,) * n)
    return Tiling(x, workgroup, subgroup, tuple(reduction), strategy.padding is not None)


def _model(
    strategy: GpuLowering, gemm: Gemm, facts: AmdGpuArch, resources: Optional[KernelResources] = None
) -> tuple[Tiling, Estimate]:
    tiling = tiling_of(strategy, gemm, facts)
    prefetch = None if strategy.prefetch_num_stages is None else strategy.prefetch_num_stages > 0
    if resources is None:
        return tiling, estimate(gemm, tiling, facts, prefetch=prefetch, min_waves=_waves_of(strategy.llvm_func_attrs))
    return tiling, estimate(
        gemm, tiling, facts, prefetch=prefetch, vgprs=resources.vgprs + resources.agprs, lds_bytes=resources.lds_bytes
    )


def _strategy(candidate: Candidate) -> GpuLowering:
    for rule in candidate.strategies.rules:
        if isinstance(rule.strategy, GpuLowering):
            return rule.strategy
    raise TdslError(
        f"candidate {candidate.index}: expected a rule with a GpuLowering, received {[r.strategy.kind for r in candidate.strategies.rules]}"
    )


@dataclass(frozen=True)
class Ranked:
    """One valid candidate with the cost model's view of it: ``estimate``, ``score`` (the
    estimated time in microseconds at :data:`CLOCK_HZ`, lower is better), the ``tiling``
    the model read on the problem's ``gemm`` view, the share of the GPU's MFMA peak the estimate reaches
    (``peak_fraction``), and, after :func:`rerank_with_resources`, the compiled kernel's
    ``resources``."""

    candidate: Candidate
    estimate: Estimate
    score: float
    tiling: Tiling
    gemm: Gemm
    peak_fraction: float
    resources: Optional[KernelResources] = field(default=None)

    @property
    def spills(self) -> bool:
        """The compiled kernel spills registers or uses scratch memory (False when not compiled)."""
        return self.resources is not None and (self.resources.spills > 0 or self.resources.scratch_bytes > 0)

    def to_json(self) -> dict[str, object]:
        """Knob values, estimated time and cycles, MFMA utilization (useful share of the MFMA
        work) and peak fraction, waves per SIMD, registers, LDS bytes, global traffic, and
        the compiled kernel's resources when there are some."""
        e = self.estimate
        return {
            "index": self.candidate.index,
            "values": dict(self.candidate.values),
            "score": self.score,
            "time_us": e.cycles / CLOCK_HZ * 1e6,
            "cycles": e.cycles,
            "mfma_utilization": e.utilization,
            "peak_fraction": self.peak_fraction,
            "waves_per_simd": e.waves_per_simd,
            "vgprs": e.vgprs,
            "lds_bytes": e.lds_bytes,
            "global_bytes": e.traffic_bytes,
            "workgroups": e.workgroups,
            "subgroups": e.subgroups,
            "k_iterations": e.k_iterations,
            "mfma_per_iteration": e.mfma_per_iteration,
            "spills": self.spills,
            "resources": self.resources.to_json() if self.resources is not None else None,
        }


def _ranked(candidate: Candidate, gemm: Gemm, facts: AmdGpuArch, resources: Optional[KernelResources] = None) -> Ranked:
    tiling, guess = _model(_strategy(candidate), gemm, facts, resources)
    x = tiling.intrinsic
    peak_cycles = (
        math.prod(gemm.sizes) / (x.m * x.n * x.k) * _mfma_cycles(x) / (facts.compute_units * facts.simds_per_cu)
    )
    return Ranked(candidate, guess, guess.cycles / CLOCK_HZ * 1e6, tiling, gemm, peak_cycles / guess.cycles, resources)


def _order(item: Ranked) -> tuple[object, ...]:
    strategy = _strategy(item.candidate)
    return (
        *rank_key(item.estimate),
        strategy.pipeline != "TileAndFuse",
        _waves_of(strategy.llvm_func_attrs),
        item.candidate.index,
    )


def rank(
    space: Space, problem: Problem, facts: AmdGpuArch = GFX942, count: Optional[int] = None, seed: int = 0
) -> list[Ranked]:
    """The valid candidates of ``space`` (every one, or those of ``count`` assignments
    sampled with ``seed``) in the cost model's order (module docstring), best first. Each
    candidate needs a gfx942 MFMA ``GpuLowering`` of ``problem``; ``space.pruned`` counts
    what was left out."""
    gemm = _general(problem).gemm()
    return sorted((_ranked(c, gemm, facts) for c in space.candidates(count, seed)), key=_order)


def _as_resources(value: Union[KernelResources, Mapping[str, Any]], facts: AmdGpuArch) -> KernelResources:
    if isinstance(value, KernelResources):
        return value
    missing = [k for k in ("vgprs", "lds_bytes") if k not in value]
    if missing:
        raise TdslError(
            f"kernel resources: expected {', '.join(missing)} (KernelResources.to_json() fields), received {sorted(value)}"
        )
    vgprs, agprs = int(value["vgprs"]), int(value.get("agprs", 0))
    mfma = value.get("mfma_instructions")
    return KernelResources(
        name=str(value.get("name", "?")),
        lds_bytes=int(value["lds_bytes"]),
        vgprs=vgprs,
        agprs=agprs,
        sgprs=int(value.get("sgprs", 0)),
        vgpr_spills=int(value.get("vgpr_spills", 0)),
        sgpr_spills=int(value.get("sgpr_spills", 0)),
        scratch_bytes=int(value.get("scratch_bytes", 0)),
        workgroup_size=int(value.get("workgroup_size", 0)),
        mfma_instructions=None if mfma is None else int(mfma),
        waves_per_simd=facts.waves_per_simd(vgprs + agprs),
    )


def rerank_with_resources(
    ranked: Sequence[Ranked],
    resources: Mapping[Union[int, str], Union[KernelResources, Mapping[str, Any]]],
    facts: AmdGpuArch = GFX942,
) -> list[Ranked]:
    """``ranked`` re-ordered with what compiling told: ``resources`` maps a candidate's
    index (``Candidate.index``, an int or its decimal string) to its kernel's
    :class:`KernelResources` (or ``to_json()`` dict: ``vgprs`` and ``lds_bytes`` at least).

    The rule: a compiled candidate is re-estimated with its real registers (VGPRs + AGPRs:
    the waves per SIMD they allow replace the estimated occupancy, the
    ``amdgpu-waves-per-eu`` assumption dropped) and its real LDS (workgroups per CU); then
    the compiled candidates that neither spill nor use scratch come first, in the cost
    model's order of their new estimates; then the candidates without resources (not
    compiled, or failed), in their model order; then the ones that spill, last, in the
    order of their new estimates."""
    by_index = {int(k): _as_resources(v, facts) for k, v in resources.items()}
    found = []
    for item in ranked:
        kernel = by_index.get(item.candidate.index)
        if kernel is None:
            found.append(item if item.resources is None else _ranked(item.candidate, item.gemm, facts))
        else:
            found.append(_ranked(item.candidate, item.gemm, facts, kernel))

    def group(item: Ranked) -> int:
        return 0 if item.resources is not None and not item.spills else 2 if item.spills else 1

    return sorted(found, key=lambda item: (group(item), *_order(item)))
