"""The checks of a rule that need its target; run by :class:`tdsl.StrategySet` when it is
built, so a strategy that cannot work on a target fails before anything renders.

Common to every target: the strategy kind runs on the target's backend, the matcher can
match the op form seen at the strategy's injection point, and the strategy's loop count
agrees with the matcher's. Each target class adds its own in ``check_strategy``.
Raises the ``problem`` errors that name the strategy field.
"""

from __future__ import annotations

from ..model.all_of import match_op_names
from ..model.base import Described, problem
from ..model.kinds import Injection, MatcherKind, StrategyKind
from .kind import TargetKind


def check_rule(index: int, match: MatcherKind, strategy: StrategyKind, target: TargetKind, target_index: int) -> None:
    """Raises ``problem`` when rule ``index`` (``match`` -> ``strategy``) cannot work on
    ``target`` (the set's ``targets[target_index]``)."""
    if target.backend not in strategy.backends:
        raise problem(
            f"rules[{index}].strategy.kind",
            f"a strategy for {target.backend} (target {target.name!r}); "
            f"{strategy.kind} runs on {', '.join(sorted(b.value for b in strategy.backends))}",
            strategy.kind,
        )
    if strategy.injection is not Injection.PREPROCESSING:
        for op in sorted(match_op_names(match)):
            if op.startswith(target.ops_gone_at_codegen):
                alternative = "convolution" if "conv" in op else "contraction"
                raise problem(
                    f"rules[{index}].match.names",
                    f"an op that exists at codegen time on {target.name}: {op} is a "
                    f"linalg.generic by then, so this rule would match nothing",
                    op,
                    hint=f"use a {alternative} matcher",
                )
    expected = match.loop_count()
    loops = strategy.loops()
    if expected is not None and loops is not None and expected != loops[1]:
        field, got = loops
        listed = f" {list(getattr(strategy, field, ()) or ())}" if "." not in field else ""
        raise problem(
            field,
            f"{expected} entries, one per loop of the matched op (rules[{index}].match fixes {expected} loops)",
            Described(f"{got} entries{listed}"),
            strategy=strategy.name,
        )
    target.check_strategy(index, match, strategy, target_index)
