"""Rendering: a StrategySet and a target name in, verified transform-dialect scripts out.

Rendering is pure: no I/O besides reading templates, no clock, no environment; equal
strategy sets give byte-identical scripts. Each target rule is assigned an injection
point (:func:`injections`), the rules of each point are planned
(:func:`~tdsl.render.script_plan.plan_script`) and laid out by that point's skeleton
template, and each script is parsed and verified with the MLIR bindings
(:func:`~tdsl.render.verify.verify`) before it is returned in a :class:`Rendered`.

IREE ignores a tuning spec when a codegen library is given, so when a target has a
``codegen`` rule its lowering rules go into the library's ``__kernel_config`` instead.
"""

from __future__ import annotations

from typing import Sequence, Union

from ..model.all_of import scope
from ..model.kinds import Injection
from ..model.subsume import covers
from ..sets.strategy_set import Rule, StrategySet
from ..targets import Target
from .environment import environment
from .script_plan import plan_script
from .scripts import Rendered, Script
from .verify import verify

PREPROCESSING = Injection.PREPROCESSING
TUNING_SPEC = Injection.TUNING_SPEC
CODEGEN_LIBRARY = Injection.CODEGEN_LIBRARY

SKELETON = {
    PREPROCESSING: "preprocessing.mlir.j2",
    TUNING_SPEC: "tuning_spec.mlir.j2",
    CODEGEN_LIBRARY: "codegen_library.mlir.j2",
}
"""The skeleton template of each injection point's script (rendered with ``script``, a
:class:`~tdsl.render.plan.ScriptPlan`)."""

__all__ = ["CODEGEN_LIBRARY", "PREPROCESSING", "SKELETON", "TUNING_SPEC", "injections", "render", "shadowed_rules"]


def injections(rules: Sequence[Rule]) -> list[Injection]:
    """The script each rule of one target renders into: its kind's injection point, except
    that tuning-spec rules join the codegen library when the target has one (IREE ignores
    a tuning spec next to a codegen library)."""
    has_library = any(r.strategy.injection is Injection.CODEGEN_LIBRARY for r in rules)
    moved = {Injection.TUNING_SPEC: Injection.CODEGEN_LIBRARY} if has_library else {}
    return [moved.get(r.strategy.injection, r.strategy.injection) for r in rules]


def render(strategy_set: StrategySet, target: Union[Target, str]) -> Rendered:
    """Renders and verifies every script ``strategy_set`` needs for ``target`` (a set
    without knobs; a target name of the set, or a target model: see
    :meth:`~tdsl.StrategySet.for_target`)."""
    strategy_set.require_concrete("render")
    strategy_set, target_model = strategy_set.for_target(target)
    target = target_model.name
    rules = strategy_set.rules_for(target)
    groups: dict[Injection, list[tuple[int, Rule]]] = {}
    for (index, rule), injection in zip(rules, injections([r for _, r in rules])):
        groups.setdefault(injection, []).append((index, rule))
    scripts = []
    for injection, skeleton in SKELETON.items():
        if injection not in groups:
            continue
        plan = plan_script(strategy_set.name, target_model, groups[injection])
        text = environment().get_template(skeleton).render(script=plan)
        verify(text, f"{strategy_set.name} ({injection} for {target})")
        scripts.append(Script(injection, text))
    shadowed = tuple(
        line for injection in SKELETON if injection in groups for line in shadowed_rules(groups[injection])
    )
    return Rendered(strategy_set=strategy_set.name, target=target_model, scripts=tuple(scripts), shadowed=shadowed)


def shadowed_rules(rules: Sequence[tuple[int, Rule]]) -> list[str]:
    """The rules of one script (``(index in the set, rule)``, in order) that never fire: a
    rule whose matcher an earlier rule's matcher certainly covers
    (:func:`tdsl.model.subsume.covers`) in the same ``transform.foreach_match`` run
    (consecutive rules with the same function scope, as
    :func:`~tdsl.render.script_plan.plan_runs` groups them; each run matches anew). One
    line each: ``"rules[3] (mm_tiles) is shadowed by rules[1] (mm_all)"``."""
    lines = []
    run: list[tuple[int, Rule]] = []
    for index, rule in rules:
        if run and scope(run[0][1].match) != scope(rule.match):
            run = []
        cover = next((earlier for earlier in run if covers(earlier[1].match, rule.match)), None)
        if cover is not None:
            lines.append(
                f"rules[{index}] ({rule.strategy.name}) is shadowed by rules[{cover[0]}] ({cover[1].strategy.name})"
            )
        run.append((index, rule))
    return lines
