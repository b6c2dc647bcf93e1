"""The ready CPU spaces, registered for ``tdsl tune`` (:func:`tdsl.tune.ready.register_cpu_spaces`)
when this module is imported (:mod:`tdsl.strategies` imports it)."""

from __future__ import annotations

from ...compiler.ops import OpView
from ...model.kinds import MatcherKind
from ...sets.space import Space
from ...sets.strategy_set import StrategySet
from ...targets import CpuTarget
from ...targets.host import Isa
from ...tune.ready import register_cpu_spaces
from . import layout_spaces, space
from .chooser import auto


class ReadyCpuSpaces:
    """:class:`tdsl.tune.ready.CpuSpaces` of :mod:`tdsl.strategies.cpu.space` and
    :func:`tdsl.strategies.cpu.auto`."""

    def program_space(self, target: CpuTarget, has_convolutions: bool, name: str, has_odd_loops: bool) -> Space:
        return space.program_space(target, has_convolutions, name=name, has_odd_loops=has_odd_loops)

    def packed_program(self, target: CpuTarget, isa: Isa, name: str) -> StrategySet:
        return auto(target, isa=isa, pack_matmuls=True, name=name)

    def tunable(self, view: OpView) -> str:
        return space.tunable(view)

    def convolution_tunable(self, view: OpView, pipeline: str | None) -> str:
        return space.convolution_tunable(view, pipeline)

    def restructured(self, graph: OpView, codegen: OpView) -> bool:
        return space.restructured(graph, codegen)

    def packable(self, view: OpView, match: MatcherKind) -> str:
        return layout_spaces.packable(view, match)

    def panelable(self, view: OpView, match: MatcherKind, isa: Isa) -> str:
        return layout_spaces.panelable(view, match, isa)

    def contraction_space(
        self,
        view: OpView,
        match: MatcherKind,
        isa: Isa,
        base: CpuTarget,
        name: str,
        at_codegen: bool = False,
        threads: int = 1,
    ) -> Space:
        return space.contraction_space(view, match, isa, base, name, at_codegen=at_codegen, threads=threads)

    def packing_space(self, view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str) -> Space:
        return layout_spaces.packing_space(view, match, isa, base, name)

    def panel_space(self, view: OpView, match: MatcherKind, isa: Isa, base: CpuTarget, name: str) -> Space:
        return layout_spaces.panel_space(view, match, isa, base, name)

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
    ) -> Space:
        return space.convolution_space(view, match, isa, base, name, pipeline, iree_config, threads=threads)


register_cpu_spaces(ReadyCpuSpaces())
