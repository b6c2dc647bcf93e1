"""``AllOf``, the conjunction of matchers, and the ``Matcher`` union a rule accepts.

Also the helpers that see through a matcher: its leaves, its concrete alternatives (one
matcher sequence each), the function it is scoped to and the op names it requires.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Optional, Union

from pydantic import Field, field_validator, model_validator

from ..errors import FieldProblem, StrategyError
from .base import MAX_RANK, Described, problem
from .kinds import LoopShape, MatcherKind
from .matchers import MAX_SEQUENCES, FunctionMatch, OpNameMatch, check_sequence_count
from .registry import LEAF_MATCHER_KINDS, LeafMatcher


class AllOf(MatcherKind):
    """Conjunction: every matcher in ``matchers`` must succeed (rendered in sequence)."""

    template: ClassVar[Optional[str]] = None  # renders its leaves' templates in order

    kind: Literal["all_of"] = "all_of"
    """The discriminator: every leaf's match ops, in sequence, in one matcher sequence."""
    matchers: tuple[LeafMatcher, ...]
    """The leaf matchers that must all succeed (a function matcher scopes the rule instead)."""

    @field_validator("matchers")
    @classmethod
    def _non_empty(cls, value: tuple[MatcherKind, ...]) -> tuple[MatcherKind, ...]:
        if not value:
            raise problem("", "at least one matcher", [])
        if len(value) > MAX_RANK:
            raise problem("", f"at most {MAX_RANK} matchers", Described(f"{len(value)} matchers"))
        functions = [m.function for m in value if isinstance(m, FunctionMatch)]
        if len(set(functions)) > 1:
            raise problem("", "at most one function name (an op lives in one function)", functions)
        if len(functions) == len(value):
            raise problem("", "a matcher that selects the op besides the function matcher", [m.kind for m in value])
        return value

    @model_validator(mode="after")
    def _sequences(self) -> "AllOf":
        counts = [(f"matchers[{j}]", m.sequence_count()) for j, m in enumerate(self.matchers) if m.template is not None]
        check_sequence_count(counts, "alternatives of its matchers")
        return self

    def sequence_count(self) -> int:
        return math.prod(m.sequence_count() for m in self.matchers if m.template is not None)

    def loop_count(self) -> Optional[int]:
        counts = {m.loop_count() for m in self.matchers} - {None}
        return counts.pop() if len(counts) == 1 else None

    def loop_shape(self) -> Optional[LoopShape]:
        shapes = [s for s in (m.loop_shape() for m in self.matchers) if s is not None]
        exact = [s for s in shapes if s.operands is not None]
        found = exact or shapes
        return found[0] if found else None

    def operand_count(self) -> Optional[int]:
        counts = {m.operand_count() for m in self.matchers} - {None}
        return counts.pop() if len(counts) == 1 else None

    def selects_convolutions(self) -> bool:
        return any(m.selects_convolutions() for m in self.matchers)

    def convolution_loops(self, igemm: bool) -> Optional[tuple[int, int]]:
        found = [b for b in (m.convolution_loops(igemm) for m in self.matchers) if b is not None]
        return found[0] if found else None


if TYPE_CHECKING:
    Matcher = MatcherKind
else:
    Matcher = Annotated[Union[(*LEAF_MATCHER_KINDS, AllOf)], Field(discriminator="kind")]


Alternative = list[tuple[int, MatcherKind, dict[str, object]]]
"""One concrete alternative of a matcher: (leaf index, leaf, chosen dims) to render in order."""


def leaves(matcher: MatcherKind) -> tuple[MatcherKind, ...]:
    """The leaf matchers of ``matcher`` (itself unless it is an ``AllOf``)."""
    return tuple(matcher.matchers) if isinstance(matcher, AllOf) else (matcher,)


def expand(matcher: MatcherKind) -> list[Alternative]:
    """All concrete alternatives. Scope matchers (functions) render no match ops and are
    left out. Raises :class:`StrategyError` beyond :data:`MAX_SEQUENCES` (validation
    refuses such matchers; this guards models built without it)."""
    count = matcher.sequence_count()
    if count > MAX_SEQUENCES:
        raise StrategyError(
            type(matcher).__name__,
            [FieldProblem("", f"at most {MAX_SEQUENCES} matcher sequences per rule", f"{count} sequences")],
        )
    per_leaf = [
        [(j, leaf, alt) for alt in leaf.alternatives()]
        for j, leaf in enumerate(leaves(matcher))
        if leaf.template is not None
    ]
    return [list(combo) for combo in itertools.product(*per_leaf)]


def scope(matcher: MatcherKind) -> Optional[str]:
    """The function a matcher is restricted to, if any."""
    for leaf in leaves(matcher):
        if isinstance(leaf, FunctionMatch):
            return leaf.function
    return None


def match_op_names(matcher: MatcherKind) -> set[str]:
    """Op names a matcher restricts to (empty: unrestricted)."""
    names: set[str] = set()
    for leaf in leaves(matcher):
        if isinstance(leaf, OpNameMatch):
            names.update(leaf.names)
    return names
