"""The plan of one script: frozen, typed data that the skeleton templates lay out.

A :class:`ScriptPlan` holds the rules that render into one script (:class:`RulePlan`:
symbols, location prefixes, the rule's matcher sequences and its kind's action plan) and
the ``foreach_match`` runs of the script's entry sequence (:class:`Run`). Every SSA name,
type, mapping and choice between alternative ops is decided here or in the per-kind
planners (:mod:`.matcher_plan`, :mod:`.layout_plan`, :mod:`.lowering_plan`,
:mod:`.codegen_plan`); templates only print these fields. Nothing here emits text.

A choice between alternative ops is a *macro name*: a step class names the macro of its
kind's template that renders it (``step.macro``), and the template calls
``macro(r.template, step.macro)(r, step)``. Building plans is done by
:mod:`.script_plan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

from ..model.kinds import StrategyKind

ANY_OP = "!transform.any_op"
"""The type of an untyped transform handle."""


def op_type(name: str) -> str:
    """The transform type of a handle to ops named ``name``: ``!transform.op<"linalg.generic">``."""
    return f'!transform.op<"{name}">'


@dataclass(frozen=True)
class Handle:
    """A transform SSA value and its type: ``%packed1`` of ``!transform.op<"linalg.generic">``.

    Templates print ``h.name`` and ``h.type`` (or ``handles | names`` / ``handles | types``)."""

    name: str
    type: str = ANY_OP


@dataclass(frozen=True)
class Step:
    """One op group of an action, rendered by the macro ``macro`` of the kind's template
    (called with the rule plan and the step)."""

    macro: ClassVar[str]


@dataclass(frozen=True)
class ActionPlan:
    """Base of a strategy kind's plan (``RulePlan.plan``): what its ``action`` and
    ``definition`` macros print besides the rule's own symbol and locations.

    A plan with :meth:`has_deferred` also has work that must not run inside the
    ``transform.foreach_match`` walk (it rewrites ops other than the matched one, which
    the walk may still visit): its kind's template has a ``deferred_ops(r, root)`` macro
    that takes the handle of the ops the action marked (``root``: the payload handle after
    the run) and a ``deferred(r, root)`` macro that runs the work on that handle. The entry
    takes every rule's handle before it runs any rule's work (one rule's rewrite may drop
    another's markers; handles follow their ops)."""

    def has_deferred(self) -> bool:
        return False


@dataclass(frozen=True)
class LeafPlan:
    """Base of a matcher leaf's plan: ``leaf(l)`` of ``l.template`` renders it inside a
    matcher sequence (``%op`` is the candidate op); ``l.path`` is the leaf's location."""

    template: str
    path: str


@dataclass(frozen=True)
class MatcherSequence:
    """One concrete alternative of a rule's matcher: the named sequence ``@symbol`` that
    runs ``leaves`` in order and yields ``%op``."""

    symbol: str
    leaves: tuple[LeafPlan, ...]


@dataclass(frozen=True)
class RulePlan:
    """A rule as the templates see it.

    ``symbol`` names the action sequence (``@tdsl_r<index>_<name>``), ``name`` is the
    strategy name (the location prefix of its ops), ``rule_path`` / ``match_path`` are the
    locations of the rule and its matcher, ``template`` is the kind's template with the
    ``action`` (and optional ``definition``) macro, ``plan`` the kind's :class:`ActionPlan`
    (None for a kind without a planner: its template reads ``strategy`` directly) and
    ``matchers`` the matcher sequences. ``scope`` is the function the rule is restricted
    to (a ``foreach_match`` root), if any.
    """

    index: int
    name: str
    symbol: str
    rule_path: str
    match_path: str
    template: str
    strategy: StrategyKind
    plan: Optional[ActionPlan]
    matchers: tuple[MatcherSequence, ...]
    scope: Optional[str]
    has_definition: bool


@dataclass(frozen=True)
class Scope:
    """The functions named ``function`` under ``parent``, matched into ``handle`` (``%scope<k>``):
    the root of a scoped ``foreach_match``. ``path`` is the location (the first rule's matcher)."""

    function: str
    handle: str
    parent: str
    path: str


@dataclass(frozen=True)
class Dispatch:
    """One ``@matcher -> @action`` pair of a ``foreach_match``."""

    matcher: str
    action: str


@dataclass(frozen=True)
class Run:
    """Consecutive rules with the same scope: ``result = transform.foreach_match in operand``
    over ``dispatches``, inside ``scope`` when it is set; then the ``deferred_ops`` macro of
    each rule in ``deferred`` (rules whose plan :meth:`~ActionPlan.has_deferred`), then the
    ``deferred`` macro of each, in order, on ``payload``: the one payload root after the run (``result``, or the scope's parent:
    a scope may hold no function, and ``transform.structured.match`` needs one op)."""

    scope: Optional[Scope]
    operand: str
    result: str
    dispatches: tuple[Dispatch, ...]
    deferred: tuple["RulePlan", ...] = ()
    payload: str = ""


@dataclass(frozen=True)
class ScriptPlan:
    """One script: the rules it holds in order, the rules with a ``definition`` (placed
    before every matcher sequence), the entry's ``foreach_match`` runs and ``root``, the
    handle of the (still valid) payload root after them; ``cleanups``: the templates whose
    ``cleanup(root, path)`` macro the entry runs once on ``root`` after the runs (a
    :class:`~tdsl.model.call_replacement.CallReplacement`'s dead-code elimination and
    inlining)."""

    set_name: str
    target_name: str
    rules: tuple[RulePlan, ...]
    definitions: tuple[RulePlan, ...]
    runs: tuple[Run, ...]
    root: str
    cleanups: tuple[str, ...] = ()
