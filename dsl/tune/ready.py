"""The ready spaces ``tdsl tune`` searches, as registered by the ready library.

The spaces live in :mod:`tdsl.strategies` (above this layer): its modules register them here
when imported (:func:`register_cpu_spaces`, :func:`register_gfx942_spaces`), and the tuners
read them back (:func:`cpu_spaces`, :func:`gfx942_spaces`). Importing :mod:`tdsl` imports
the ready library, so the registry is filled before any tuning; a missing registration is a
one-line :class:`~tdsl.errors.TdslError`.

* :class:`CpuSpaces` -- the program-level knobs, the op-level spaces of contractions and
  convolutions and the predicates that say which op has which;
* :class:`Gfx942Spaces` -- per dispatch, a :class:`Gfx942Problem`: its matcher, its space
  and the cost model's ranking of it.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence, Union

from ..compiler.hsaco import KernelResources
from ..compiler.ops import Dispatch, OpView
from ..errors import TdslError
from ..model.kinds import MatcherKind
from ..sets.space import Candidate, Space
from ..sets.strategy_set import StrategySet
from ..targets import AmdGpuTarget, CpuTarget
from ..targets.host import Isa


class CpuSpaces(Protocol):
    """The ready CPU spaces (:mod:`tdsl.strategies.cpu.space`). A predicate returns why an
    op has no such space ("" where it has one)."""

    def program_space(self, target: CpuTarget, has_convolutions: bool, name: str, has_odd_loops: bool) -> Space:
        """The program-level knobs of ``target`` (data tiling, ukernels, the conv paths, and
        peeling where a root op has a loop its vector tile does not divide)."""
        ...

    def packed_program(self, target: CpuTarget, isa: Isa, name: str) -> StrategySet:
        """The ready library's graph-level mmt4d packing of every matmul."""
        ...

    def tunable(self, view: OpView) -> str: ...

    def convolution_tunable(self, view: OpView, pipeline: str | None) -> str: ...

    def restructured(self, graph: OpView, codegen: OpView) -> bool:
        """Whether IREE rebuilds the graph-level op before codegen."""
        ...

    def packable(self, view: OpView, match: MatcherKind) -> str: ...

    def panelable(self, view: OpView, match: MatcherKind, isa: Isa) -> str: ...

    def contraction_space(
        self,
        view: OpView,
        match: MatcherKind,
        isa: Isa,
        base: CpuTarget,
        name: str,
        at_codegen: bool = False,
        threads: int = 1,
    ) -> Space: ...

    def packing_space(self, view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str) -> Space: ...

    def panel_space(self, view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str) -> Space: ...

    def convolution_space(
        self,
        view: OpView,
        match: MatcherKind,
        isa: Isa,
        base: CpuTarget,
        name: str,
        pipeline: str,
        iree_config: str | None,
        threads: int = 1,
    ) -> Space: ...


class Estimated(Protocol):
    """The cost model's estimate of a candidate."""

    @property
    def utilization(self) -> float:
        """The useful share of the MFMA work."""
        ...


class RankedCandidate(Protocol):
    """A candidate with the cost model's view of it (and, re-ranked, its kernel's resources)."""

    @property
    def candidate(self) -> Candidate: ...

    @property
    def estimate(self) -> Estimated: ...

    @property
    def resources(self) -> KernelResources | None: ...

    def to_json(self) -> dict[str, object]: ...


class Gfx942Problem(Protocol):
    """One dispatch as the gfx942 chooser sees it."""

    @property
    def match(self) -> MatcherKind:
        """The matcher of the rule a candidate makes (one job per distinct matcher)."""
        ...

    def space(self, name: str) -> Space:
        """The chooser's knobs around its own choice; raises TdslError where there is none."""
        ...

    def rank(self, space: Space) -> Sequence[RankedCandidate]:
        """Every valid candidate of ``space``, best first by the cost model."""
        ...


class Gfx942Spaces(Protocol):
    """The ready gfx942 spaces (:mod:`tdsl.strategies.gpu.space`)."""

    def problem(self, dispatch: Dispatch) -> Gfx942Problem | str:
        """The problem of ``dispatch``, or why the chooser has none."""
        ...

    def rerank(
        self, ranked: Sequence[RankedCandidate], resources: Mapping[int, Union[KernelResources, Mapping[str, Any]]]
    ) -> list[RankedCandidate]:
        """``ranked`` re-ordered with the compiled kernels' ``resources`` by candidate index."""
        ...


_CPU: list[CpuSpaces] = []
_GFX942: list[Gfx942Spaces] = []
_MISSING = "no ready {what} spaces are registered: import tdsl.strategies (tdsl's ready library) before tuning"


def register_cpu_spaces(spaces: CpuSpaces) -> None:
    """Makes ``spaces`` the ones the CPU tuner searches (the latest registration wins)."""
    _CPU[:] = [spaces]


def register_gfx942_spaces(spaces: Gfx942Spaces) -> None:
    """Makes ``spaces`` the ones the gfx942 tuner ranks (the latest registration wins)."""
    _GFX942[:] = [spaces]


def cpu_spaces() -> CpuSpaces:
    """The registered CPU spaces; a one-line TdslError where none are."""
    if not _CPU:
        raise TdslError(_MISSING.format(what="CPU"))
    return _CPU[0]


def gfx942_spaces() -> Gfx942Spaces:
    """The registered gfx942 spaces; a one-line TdslError where none are."""
    if not _GFX942:
        raise TdslError(_MISSING.format(what=AmdGpuTarget.default_name))
    return _GFX942[0]
