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

from typing import Sequence

from ..spec.kinds import Injection
from ..spec.strategy_set import Rule, StrategySet
from .environment import environment
from .markers import LAYOUT_MARKER, LAYOUT_RULE_MARKER, MARKER, ROOT_MARKER, RULE_MARKER
from .script_plan import plan_script
from .scripts import SERIAL_LOADING, Rendered, Script
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

__all__ = [
    "CODEGEN_LIBRARY",
    "LAYOUT_MARKER",
    "LAYOUT_RULE_MARKER",
    "MARKER",
    "PREPROCESSING",
    "ROOT_MARKER",
    "RULE_MARKER",
    "SERIAL_LOADING",
    "SKELETON",
    "TUNING_SPEC",
    "Rendered",
    "Script",
    "injections",
    "render",
    "verify",
]


def injections(rules: Sequence[Rule]) -> list[Injection]:
    """The script each rule of one target renders into: its kind's injection point, except
    that tuning-spec rules join the codegen library when the target has one (IREE ignores
    a tuning spec next to a codegen library)."""
    has_library = any(r.strategy.injection is Injection.CODEGEN_LIBRARY for r in rules)
    moved = {Injection.TUNING_SPEC: Injection.CODEGEN_LIBRARY} if has_library else {}
    return [moved.get(r.strategy.injection, r.strategy.injection) for r in rules]


def render(strategy_set: StrategySet, target: str) -> Rendered:
    """Renders and verifies every script ``strategy_set`` needs for ``target``."""
    target_model = strategy_set.target(target)
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
    return Rendered(strategy_set=strategy_set.name, target=target_model, scripts=tuple(scripts))
