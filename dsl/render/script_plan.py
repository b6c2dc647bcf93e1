"""Building a :class:`~tdsl.render.plan.ScriptPlan`: each rule's symbols, locations,
matcher sequences and kind plan, and the entry's ``foreach_match`` runs.

:func:`plan_action` picks a strategy's planner by its class (a kind without one gets no
plan: its template reads the strategy). Run ``k`` without a scope rewrites the payload
root into ``%root<k+1>``; a scoped run matches its functions into ``%scope<k>`` and
leaves ``%scoped<k>``. A kind whose template has a ``cleanup`` macro gets it run once
after every run (``ScriptPlan.cleanups``). Emits no text.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Optional, Sequence

from ..model.all_of import scope
from ..model.call_replacement import CallReplacement
from ..model.codegen import Codegen
from ..model.kinds import StrategyKind
from ..model.layout import DataLayout
from ..model.lowering import CpuLowering, GpuLowering
from ..sets.strategy_set import Rule
from ..targets import Target
from .call_plan import plan_call_replacement
from .codegen_plan import plan_codegen
from .environment import has_macro
from .layout_plan import plan_layout
from .lowering_plan import plan_cpu_lowering, plan_gpu_lowering
from .matcher_plan import plan_matchers
from .plan import ActionPlan, Dispatch, RulePlan, Run, Scope, ScriptPlan


@singledispatch
def plan_action(strategy: StrategyKind, symbol: str, target: Target) -> Optional[ActionPlan]:
    """The plan of ``strategy``'s action for ``target`` (``symbol`` names its sequence);
    None for a kind without a planner."""
    return None


plan_action.register(DataLayout, plan_layout)
plan_action.register(CpuLowering, plan_cpu_lowering)
plan_action.register(GpuLowering, plan_gpu_lowering)
plan_action.register(Codegen, plan_codegen)
plan_action.register(CallReplacement, plan_call_replacement)


def plan_rule(set_name: str, index: int, rule: Rule, target: Target) -> RulePlan:
    """Rule ``index`` of the set ``set_name``: action ``@tdsl_r<index>_<name>``, matcher
    sequences ``@tdsl_r<index>_<name>_match<k>``."""
    strategy = rule.strategy
    symbol = f"tdsl_r{index}_{strategy.name}"
    rule_path = f"{set_name}.rules[{index}]"
    match_path = f"{rule_path}.match"
    return RulePlan(
        index=index,
        name=strategy.name,
        symbol=symbol,
        rule_path=rule_path,
        match_path=match_path,
        template=strategy.template,
        strategy=strategy,
        plan=plan_action(strategy, symbol, target),
        matchers=plan_matchers(rule.match, symbol, match_path),
        scope=scope(rule.match),
        has_definition=has_macro(strategy.template, "definition"),
    )


def plan_runs(rules: Sequence[RulePlan], root: str) -> tuple[tuple[Run, ...], str]:
    """Consecutive rules with the same scope form one run, in order; returns the runs and
    the handle of the payload root after them (``root`` if no run rewrites it). A run lists
    its rules with deferred work (:meth:`~tdsl.render.plan.ActionPlan.has_deferred`)."""
    groups: list[list[RulePlan]] = []
    for rule in rules:
        if groups and groups[-1][0].scope == rule.scope:
            groups[-1].append(rule)
        else:
            groups.append([rule])
    runs = []
    for k, group in enumerate(groups):
        dispatches = tuple(Dispatch(m.symbol, r.symbol) for r in group for m in r.matchers)
        deferred = tuple(r for r in group if r.plan is not None and r.plan.has_deferred())
        function = group[0].scope
        if function is None:
            runs.append(Run(None, root, f"%root{k + 1}", dispatches, deferred, f"%root{k + 1}"))
            root = f"%root{k + 1}"
        else:
            found = Scope(function, f"%scope{k}", root, group[0].match_path)
            runs.append(Run(found, found.handle, f"%scoped{k}", dispatches, deferred, root))
    return tuple(runs), root


def plan_script(set_name: str, target: Target, rules: Sequence[tuple[int, Rule]]) -> ScriptPlan:
    """The plan of one script holding ``rules`` (index in the set, rule), in order."""
    planned = tuple(plan_rule(set_name, index, rule, target) for index, rule in rules)
    runs, root = plan_runs(planned, "%root")
    definitions = tuple(r for r in planned if r.has_definition)
    cleanups = tuple(dict.fromkeys(r.template for r in planned if has_macro(r.template, "cleanup")))
    return ScriptPlan(set_name, target.name, planned, definitions, runs, root, cleanups)
