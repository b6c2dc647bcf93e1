"""StrategySet: an ordered list of rules (matcher -> strategy -> target).

Rendering a set for one target picks that target's rules, in order; the first rule
whose matcher succeeds on an op wins (``transform.foreach_match`` semantics). One set
may hold rules for several targets, e.g. pack on CPU and leave the layout alone on GPU.

Checks that need the target (the strategy kind fits the target's backend, the matcher
can match the op form seen at that injection point, MMA intrinsics, LDS, ...) live with
the targets (:func:`tdsl.targets.checks.check_rule`); they run when the set is built.

A set without rules is allowed: it means IREE's default pipeline for its targets (a
render writes no scripts, only the target flags).

Sets and rule lists compose with :func:`combine` (also ``StrategySet.combine``): the
rules are joined in order, so earlier parts win where matchers overlap, or, with
``precedence="specific"``, more specific matchers go first
(:func:`tdsl.model.subsume.specificity`).

Example::

    StrategySet(name="demo", rules=[
        Rule(target="cpu", match=OpNameMatch(names=["linalg.matmul"]),
             strategy=DataLayout(name="mm_pack", pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]))),
    ])
"""

from __future__ import annotations

from typing import Iterable, Literal, Union

from pydantic import Field, model_validator

from ..errors import FieldProblem, StrategyError, TargetError
from ..model.all_of import Matcher
from ..model.base import StrategyModel, StrictBool, SymbolName, fmt, problem
from ..model.matchers import FunctionMatch
from ..model.registry import Strategy
from ..model.subsume import covers, specificity
from ..targets import Target, TargetKind, default_targets, target_names
from ..targets.checks import check_rule


class Rule(StrategyModel):
    """Apply ``strategy`` to every op ``match`` accepts, when compiling for ``target``."""

    target: SymbolName
    """Name of the target (one of the set's targets) this rule compiles for."""
    match: Matcher
    """The matcher: which ops the rule applies to (a transform.foreach_match matcher sequence)."""
    strategy: Strategy
    """The strategy applied to every matched op (its action sequence or compilation_info)."""
    optional: StrictBool = False
    """A ready-library rule: matching nothing in a program is expected (summed up in one line, never a --strict error)."""

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
    return default_targets()


def _defaults_text() -> str:
    return "the default " + " and ".join(target_names())


class StrategySet(StrategyModel):
    """An ordered list of rules for one or more targets; see the module docstring."""

    _names_errors = True

    name: SymbolName
    """The set's name, used in the generated spec files."""
    targets: tuple[Target, ...] = Field(default_factory=_default_targets)
    """The compilation targets (default: cpu and gfx942); each renders its own scripts and flags."""
    rules: tuple[Rule, ...]
    """The rules in order: per target and injection point, the first matching rule wins."""

    @model_validator(mode="after")
    def _check(self) -> "StrategySet":
        if not self.targets:
            raise problem("targets", f"at least one target (leave it out for {_defaults_text()})", [])
        names = [t.name for t in self.targets]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise problem(f"targets[{i}].name", "unique target names", name)
        seen: dict[tuple[str, str], object] = {}
        defined: dict[tuple[str, str], int] = {}
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
            for symbol in rule.strategy.defined_symbols():
                first = defined.setdefault((rule.target, symbol), i)
                if first != i:
                    raise problem(
                        f"rules[{i}].strategy.symbols",
                        f"payload symbols no other rule for target {rule.target!r} defines (rules[{first}] defines @{symbol})",
                        f"@{symbol}",
                    )
            index = names.index(rule.target)
            check_rule(i, rule.match, rule.strategy, self.targets[index], index)
        for index, target in enumerate(self.targets):
            own = [(i, r.match, r.strategy) for i, r in enumerate(self.rules) if r.target == target.name]
            target.check_rules(own, index)
        return self

    def target(self, name: str) -> Target:
        """The target called ``name`` (a target name such as ``cpu`` or ``gfx942``)."""
        for target in self.targets:
            if target.name == name:
                return target
        if not self.targets:
            raise problem("targets", f"at least one target (leave it out for {_defaults_text()})", [])
        names = [t.name for t in self.targets]
        raise TargetError(f"strategy set {self.name!r} has no target {name!r}; expected one of {names}")

    def for_target(self, target: Union[TargetKind, str]) -> tuple["StrategySet", Target]:
        """This set and its target called ``target``; given a target model instead of a
        name, the set with that model in place of its target of the same name (added when
        it has none), its rules checked again on it."""
        if isinstance(target, str):
            return self, self.target(target)
        if target in self.targets:
            return self, target
        replaced = tuple(target if t.name == target.name else t for t in self.targets)
        targets = replaced if any(t.name == target.name for t in self.targets) else (*self.targets, target)
        return StrategySet(name=self.name, targets=targets, rules=self.rules), target

    def rules_for(self, target: str) -> list[tuple[int, Rule]]:
        """(index in ``rules``, rule) for every rule of ``target``, in order."""
        return [(i, r) for i, r in enumerate(self.rules) if r.target == target]

    @classmethod
    def combine(
        cls,
        *parts: "Part",
        name: str,
        precedence: "Precedence" = "first",
    ) -> "StrategySet":
        """The same as :func:`combine`."""
        return combine(*parts, name=name, precedence=precedence)


Part = Union[StrategySet, Rule, Iterable[Rule]]
"""What :func:`combine` joins: a strategy set, one rule or a list of rules."""
Precedence = Literal["first", "specific"]
"""How :func:`combine` orders the joined rules."""


def _part_problem(path: str, expected: str, received: object) -> FieldProblem:
    return FieldProblem(path, expected, fmt(received))


def combine(*parts: Part, name: str, precedence: Precedence = "first") -> StrategySet:
    """One strategy set named ``name`` from ``parts`` (strategy sets, rules, lists of rules).

    **Targets** are merged by name, in order of first appearance; two parts may both have a
    target of one name only if the targets are equal (else :class:`StrategyError`). A rule
    from a rule list whose target no set part has gets the default target of that name
    (``cpu``, ``gfx942``); without any set part the targets are the default ones.

    **Precedence.** Within one target and injection point the first rule whose matcher
    accepts an op wins (``transform.foreach_match``), so the order of the joined rules
    decides where matchers overlap:

    * ``precedence="first"`` (the default) keeps the rules in the order given: earlier
      parts win. ``combine(head_split_fusion(...), auto(), name="bert")`` lets the
      head-split rule take BERT's Q projection before ``auto()``'s packing rules see it.
    * ``precedence="specific"`` puts a part's rule before an earlier part's rule of the same
      target when it is more specific: certainly (its matcher is covered by the other's,
      :func:`tdsl.model.subsume.covers`) or, when neither covers the other, by
      :func:`tdsl.model.subsume.specificity` (an exact-shape contraction or convolution
      matcher first, then all_of matchers with more leaves, then more set constraints).
      Each part keeps its own order (a set such as ``auto()`` orders its rules on
      purpose); pass rules one by one to have all of them ordered.

    The result is validated as any set (unique strategy names per target, target checks).
    """
    if precedence not in ("first", "specific"):
        raise StrategyError(name, [_part_problem("precedence", "'first' or 'specific'", precedence)])
    targets: dict[str, Target] = {}
    origin: dict[str, int] = {}
    groups: list[list[Rule]] = []
    has_set = False
    problems: list[FieldProblem] = []
    for i, part in enumerate(parts):
        if isinstance(part, StrategySet):
            has_set = True
            for j, target in enumerate(part.targets):
                if target.name in targets and targets[target.name] != target:
                    problems.append(
                        _part_problem(
                            f"parts[{i}].targets[{j}]",
                            f"a target equal to the target {target.name!r} of parts[{origin[target.name]}] "
                            "(combined sets share their targets by name)",
                            target,
                        )
                    )
                targets.setdefault(target.name, target)
                origin.setdefault(target.name, i)
            groups.append(list(part.rules))
        elif isinstance(part, Rule):
            groups.append([part])
        else:
            listed: list[object]
            try:
                listed = list(part)
            except TypeError:
                problems.append(_part_problem(f"parts[{i}]", "a StrategySet, a Rule or a list of rules", part))
                continue
            for j, rule in enumerate(listed):
                if not isinstance(rule, Rule):
                    problems.append(_part_problem(f"parts[{i}][{j}]", "a Rule", rule))
            groups.append([r for r in listed if isinstance(r, Rule)])
    if problems:
        raise StrategyError(name, problems)
    defaults = {t.name: t for t in _default_targets()}
    if not has_set:
        targets = dict(defaults)
    rules = _merged(groups) if precedence == "specific" else [r for group in groups for r in group]
    for rule in rules:
        if rule.target not in targets and rule.target in defaults:
            targets[rule.target] = defaults[rule.target]
    return StrategySet(name=name, targets=tuple(targets.values()), rules=tuple(rules))


def more_specific(rule: Rule, other: Rule) -> bool:
    """``rule`` goes before ``other`` under ``precedence="specific"``: same target, and
    ``other``'s matcher certainly covers ``rule``'s but not the reverse, or neither covers
    the other and ``rule``'s :func:`~tdsl.model.subsume.specificity` is higher."""
    if rule.target != other.target:
        return False
    mine, theirs = covers(rule.match, other.match), covers(other.match, rule.match)
    if mine or theirs:
        return theirs and not mine
    return specificity(rule.match) > specificity(other.match)


def _merged(groups: list[list[Rule]]) -> list[Rule]:
    """The rules of ``groups`` (one per part), each part's rule placed before the first rule
    of an earlier part it is :func:`more_specific` than, never before its own part's
    earlier rules."""
    result: list[tuple[int, Rule]] = []
    for part, group in enumerate(groups):
        floor = 0
        for rule in group:
            position = len(result)
            for k in range(floor, len(result)):
                owner, other = result[k]
                if owner != part and more_specific(rule, other):
                    position = k
                    break
            result.insert(position, (part, rule))
            floor = position + 1
    return [rule for _, rule in result]
