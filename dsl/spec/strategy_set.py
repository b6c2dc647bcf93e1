"""StrategySet: an ordered list of rules (matcher -> strategy -> target).

Rendering a set for one target picks that target's rules, in order; the first rule
whose matcher succeeds on an op wins (``transform.foreach_match`` semantics). One set
may hold rules for several targets, e.g. pack on CPU and leave the layout alone on GPU.

Checks that need the target (the strategy kind fits the target's backend, the matcher
can match the op form seen at that injection point, MMA intrinsics, LDS, ...) live with
the targets (:func:`tdsl.targets.checks.check_rule`); they run when the set is built.

Example::

    StrategySet(name="demo", rules=[
        Rule(target="cpu", match=OpNameMatch(names=["linalg.matmul"]),
             strategy=DataLayout(name="mm_pack", pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]))),
    ])
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ..errors import TargetError
from ..targets import AmdGpuTarget, CpuTarget, Target
from ..targets.checks import check_rule
from .all_of import Matcher
from .base import StrategyModel, SymbolName, problem
from .matchers import FunctionMatch
from .registry import Strategy


class Rule(StrategyModel):
    """Apply ``strategy`` to every op ``match`` accepts, when compiling for ``target``."""

    target: SymbolName
    match: Matcher
    strategy: Strategy

    @model_validator(mode="after")
    def _selects_ops(self) -> "Rule":
        if isinstance(self.match, FunctionMatch):
            raise problem(
                "match",
                "a matcher that selects ops; a function matcher only restricts where to look "
                "(combine it in all_of with an op_name, contraction or convolution matcher)",
                "function",
            )
        self.strategy.check_match(self.match)
        return self


def _default_targets() -> tuple[Target, ...]:
    return (CpuTarget(), AmdGpuTarget())


class StrategySet(StrategyModel):
    """An ordered list of rules for one or more targets; see the module docstring."""

    _names_errors = True

    name: SymbolName
    targets: tuple[Target, ...] = Field(default_factory=_default_targets)
    rules: tuple[Rule, ...]

    @model_validator(mode="after")
    def _check(self) -> "StrategySet":
        if not self.targets:
            raise problem("targets", "at least one target (leave it out for the default cpu and gfx942)", [])
        names = [t.name for t in self.targets]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise problem(f"targets[{i}].name", "unique target names", name)
        if not self.rules:
            raise problem("rules", "at least one rule", [])
        seen: dict[tuple[str, str], Any] = {}
        for i, rule in enumerate(self.rules):
            if rule.target not in names:
                raise problem(f"rules[{i}].target", f"one of the targets {names}", rule.target)
            key = (rule.target, rule.strategy.name)
            if key in seen and seen[key] != rule.strategy:
                raise problem(
                    f"rules[{i}].strategy.name",
                    f"a name not used by another strategy for target {rule.target!r}",
                    rule.strategy.name,
                )
            seen[key] = rule.strategy
            index = names.index(rule.target)
            check_rule(i, rule.match, rule.strategy, self.targets[index], index)
        return self

    def target(self, name: str) -> Target:
        """The target called ``name`` (a target name such as ``cpu`` or ``gfx942``)."""
        for target in self.targets:
            if target.name == name:
                return target
        if not self.targets:
            raise problem("targets", "at least one target (leave it out for the default cpu and gfx942)", [])
        names = [t.name for t in self.targets]
        raise TargetError(f"strategy set {self.name!r} has no target {name!r}; expected one of {names}")

    def rules_for(self, target: str) -> list[tuple[int, Rule]]:
        """(index in ``rules``, rule) for every rule of ``target``, in order."""
        return [(i, r) for i, r in enumerate(self.rules) if r.target == target]
