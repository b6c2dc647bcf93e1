"""A rule's matcher from the leaves its matcher sequences hold: one leaf, an ``AllOf``
(positions from a tdsl render's locations, the function scope), or the alternatives of a
tdsl rule folded back into ``one_of`` sets; and the loop roles and root op they fix."""

from __future__ import annotations

from typing import Optional

from ..errors import TdslError
from ..model.all_of import AllOf, expand
from ..model.kinds import MatcherKind
from ..model.matchers import ContractionMatch, DagMatch, FunctionMatch, OpNameMatch, maps_loop_shape
from .matchers import Leaf


def loop_roles(leaves: list[Leaf]) -> Optional[tuple[str, ...]]:
    """The loop roles the matcher fixes: a contraction's, or a pattern DAG's root
    ``linalg.matmul`` / ``batch_matmul`` / contraction ``linalg.generic``."""
    for leaf in leaves:
        if isinstance(leaf.matcher, ContractionMatch):
            roles = leaf.matcher.loop_roles()
            if roles is not None:
                return roles
        if isinstance(leaf.matcher, DagMatch):
            return _dag_roles(leaf.matcher.pattern)
    return None


def _dag_roles(pattern: str) -> Optional[tuple[str, ...]]:
    from ..bindings import MapA
    from .ir import read_module as read

    try:
        module = read(
            "module attributes {transform.with_named_sequence} {\n  transform.named_sequence @m(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {\n"
            "    %i, %o = transform.iree.match.cast_compatible_dag_from_root %op {\n"
            + pattern
            + "\n    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)\n"
            "    transform.yield %op : !transform.any_op\n  }\n}\n"
        )
    except TdslError:
        return None
    ops = [o for o in module.sequences[0].op.body.ops[0].body.ops if o.name != "transform.yield"]
    if not ops:
        return None
    root = ops[-1]
    named = {"linalg.matmul": ("m", "n", "k"), "linalg.batch_matmul": ("b", "m", "n", "k")}
    if root.name in named and root.attr("indexing_maps") is None:
        return named[root.name]
    maps = root.attr("indexing_maps")
    if not isinstance(maps, tuple) or len(maps) != 3 or not all(isinstance(m, MapA) for m in maps):
        return None
    shape = maps_loop_shape(tuple(m.text for m in maps if isinstance(m, MapA)))
    return None if shape is None else shape.roles


def dag_root(pattern: str) -> Optional[str]:
    """The name of a pattern DAG's root op (its last op)."""
    from .ir import read_module as read

    try:
        module = read(
            "module attributes {transform.with_named_sequence} {\n  transform.named_sequence @m(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {\n"
            "    %i, %o = transform.iree.match.cast_compatible_dag_from_root %op {\n"
            + pattern
            + "\n    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)\n"
            "    transform.yield %op : !transform.any_op\n  }\n}\n"
        )
    except TdslError:
        return None
    ops = [o for o in module.sequences[0].op.body.ops[0].body.ops if o.name != "transform.yield"]
    return ops[-1].name if ops else None


def root_op(leaves: list[Leaf]) -> str:
    for leaf in leaves:
        if isinstance(leaf.matcher, OpNameMatch) and len(leaf.matcher.names) == 1:
            return leaf.matcher.names[0]
    return "linalg.generic"


def rule_matcher(leaves: list[Leaf], scope: Optional[str]) -> MatcherKind:
    """The rule's matcher: one leaf, or an ``AllOf`` (leaf positions from a tdsl render's
    ``matchers[j]`` locations; the scope's function matcher where a position is missing)."""
    positions = []
    for leaf in leaves:
        path = leaf.path or ""
        positions.append(int(path[path.rindex("[") + 1 : -1]) if path.endswith("]") and ".matchers[" in path else None)
    all_of = any(p is not None for p in positions) or scope is not None or len(leaves) != 1
    if not all_of:
        return leaves[0].matcher
    models: list[Optional[MatcherKind]]
    if all(p is not None for p in positions) and positions:
        size = max(p for p in positions if p is not None) + 1 + (1 if scope is not None else 0)
        models = [None] * size
        for leaf, p in zip(leaves, positions):
            assert p is not None
            models[p] = leaf.matcher
        if scope is not None:
            gap = next((i for i, m in enumerate(models) if m is None), len(models) - 1)
            models[gap] = FunctionMatch(function=scope)
        matchers = [m for m in models if m is not None]
    else:
        matchers = ([FunctionMatch(function=scope)] if scope is not None else []) + [leaf.matcher for leaf in leaves]
    return AllOf(matchers=tuple(matchers))


def fold_alternatives(sequences: list[list[Leaf]], scope: Optional[str]) -> MatcherKind:
    """One matcher for the alternatives of one tdsl rule (the leaves of its matcher
    sequences ``_match<k>``): each group's distinct sizes become a ``one_of`` set, checked
    against the sequences' order (tdsl renders the product of the sets in field order)."""
    if len(sequences) == 1:
        return rule_matcher(sequences[0], scope)
    count = len(sequences[0])
    if any(len(r) != count for r in sequences):
        raise TdslError("matcher sequences of one rule differ in their leaves")
    merged: list[Leaf] = []
    for j in range(count):
        models = [r[j].matcher for r in sequences]
        first = models[0]
        groups: tuple[str, ...] = getattr(first, "GROUPS", ())
        data = first.model_dump()
        for g in groups:
            values = [getattr(m, g) for m in models]
            distinct: list[object] = []
            for v in values:
                if v is not None and v[0] not in distinct:
                    distinct.append(v[0])
            if any(v is None for v in values):
                if any(v is not None for v in values):
                    raise TdslError(f"group {g} is open in some alternatives only")
                data[g] = None
            else:
                data[g] = tuple(distinct)
        for m in models[1:]:
            other = m.model_dump()
            if type(m) is not type(first) or {k: v for k, v in other.items() if k not in groups} != {
                k: v for k, v in first.model_dump().items() if k not in groups
            }:
                raise TdslError("matcher sequences of one rule differ beyond their dimension groups")
        merged.append(Leaf(type(first).model_validate(data), sequences[0][j].path, sequences[0][j].line))
    matcher = rule_matcher(merged, scope)
    expected = [[(leaf.matcher.model_dump()) for leaf in r] for r in sequences]
    produced = []
    for alternative in expand(matcher):
        produced.append(
            [
                type(leaf)
                .model_validate(
                    {
                        **leaf.model_dump(),
                        **{g: (choice[g],) if choice.get(g) is not None else None for g in getattr(leaf, "GROUPS", ())},
                    }
                )
                .model_dump()
                for _, leaf, choice in alternative
            ]
        )
    if produced != expected:
        raise TdslError("the matcher sequences of one rule are not the product of their alternatives")
    return matcher
