"""The ready gfx942 spaces, registered for ``tdsl tune --target gfx942``
(:func:`tdsl.tune.ready.register_gfx942_spaces`) when this module is imported
(:mod:`tdsl.strategies` imports it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence, Union

from ...compiler.hsaco import KernelResources
from ...compiler.ops import Dispatch
from ...model.kinds import MatcherKind
from ...sets.space import Space
from ...tune.ready import RankedCandidate, register_gfx942_spaces
from .dispatch import gpu_problem
from .problems import Contraction, Convolution
from .space import Ranked, gfx942_space, rank, rerank_with_resources


@dataclass(frozen=True)
class ChooserProblem:
    """:class:`tdsl.tune.ready.Gfx942Problem`: a dispatch's matcher and the chooser's problem."""

    match: MatcherKind
    problem: Union[Contraction, Convolution]

    def space(self, name: str) -> Space:
        return gfx942_space(self.problem, name)

    def rank(self, space: Space) -> Sequence[RankedCandidate]:
        return rank(space, self.problem)


class ReadyGfx942Spaces:
    """:class:`tdsl.tune.ready.Gfx942Spaces` of :mod:`tdsl.strategies.gpu.space`."""

    def problem(self, dispatch: Dispatch) -> ChooserProblem | str:
        found = gpu_problem(dispatch)
        return found if isinstance(found, str) else ChooserProblem(*found)

    def rerank(
        self, ranked: Sequence[RankedCandidate], resources: Mapping[int, Union[KernelResources, Mapping[str, Any]]]
    ) -> list[RankedCandidate]:
        mine = [r for r in ranked if isinstance(r, Ranked)]
        assert len(mine) == len(ranked), "ranked by another cost model"
        return list(rerank_with_resources(mine, dict(resources.items())))


register_gfx942_spaces(ReadyGfx942Spaces())
