"""Matcher subsumption: when every op one matcher selects is certainly selected by another.

``covers(earlier, later)`` is True only when it is certain that each op ``later`` accepts,
``earlier`` accepts too, so that a rule with ``later`` placed after a rule with
``earlier`` in the same ``transform.foreach_match`` never fires (the first matcher that
succeeds wins). It is conservative: False means "not certain", never "they differ".

A matcher is the conjunction of its leaves (:func:`tdsl.model.all_of.leaves`); ``earlier``
covers ``later`` when both are scoped to the same function (or ``earlier`` to none) and
every non-scope leaf of ``earlier`` is covered by a leaf of ``later`` of the same kind. One
function per leaf kind decides that, from the leaves' public fields: each field it knows
must be implied; any other field (one a newer matcher version adds) must be equal.

:func:`specificity` ranks matchers for ``combine(..., precedence="specific")``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .all_of import leaves, scope
from .kinds import MatcherKind
from .matchers import (
    ConsumerMatch,
    ContractionMatch,
    ConvolutionMatch,
    FunctionMatch,
    OpNameMatch,
    PackMatch,
    ProducerMatch,
)

DimSets = Optional[tuple[tuple[int, ...], ...]]


def _dims_cover(earlier: DimSets, later: DimSets) -> bool:
    """A dimension group: ``earlier`` is any size, or holds every alternative of ``later``."""
    if earlier is None:
        return True
    if later is None:
        return False
    return set(later) <= set(earlier)


def _others_equal(earlier: MatcherKind, later: MatcherKind, known: set[str]) -> bool:
    """Every field not in ``known`` is equal (a field this module does not know about)."""
    return all(getattr(earlier, f) == getattr(later, f) for f in type(earlier).model_fields if f not in known)


def _optional_equal(earlier: object, later: object) -> bool:
    """An optional constraint: ``earlier`` has none, or the same as ``later``."""
    return earlier is None or earlier == later


def names_cover(
    earlier: OpNameMatch | ConsumerMatch | ProducerMatch, later: OpNameMatch | ConsumerMatch | ProducerMatch
) -> bool:
    """A matcher of op names (of the op, of its single user, of an operand's producer):
    ``later``'s names are among ``earlier``'s, every other field equal (the same operand)."""
    return set(later.names) <= set(earlier.names) and _others_equal(earlier, later, {"kind", "names"})


def _single_sizes(dims: DimSets) -> Optional[list[int]]:
    """The size of each alternative of a one-dimension group; None unless every alternative
    has exactly one dimension."""
    if dims is None or any(len(alternative) != 1 for alternative in dims):
        return None
    return [alternative[0] for alternative in dims]


def _k_min_implied(earlier: ContractionMatch, later: ContractionMatch) -> bool:
    if earlier.k_min is None:
        return True
    if later.k_min is not None and later.k_min >= earlier.k_min:
        return True
    sizes = _single_sizes(later.k)
    return sizes is not None and all(k >= earlier.k_min for k in sizes)


def _size_max_implied(earlier: ContractionMatch, later: ContractionMatch) -> bool:
    if earlier.size_max is None:
        return True
    if later.size_max is not None and later.size_max <= earlier.size_max:
        return True
    groups = [_single_sizes(later.m), _single_sizes(later.n), _single_sizes(later.k)]
    # a dynamic size (-1) may be any size: it implies no bound
    return all(g is not None and all(0 <= size <= earlier.size_max for size in g) for g in groups)


def contraction_covers(earlier: ContractionMatch, later: ContractionMatch) -> bool:
    """Same element types; ``earlier``'s operand layout and loop order are unset or the same;
    each of its dimension groups is any size or holds ``later``'s alternatives; its K lower
    bound and size upper bound (if any) hold for ``later`` (by its own bounds or its exact
    sizes)."""
    known = {
        "kind",
        "lhs_type",
        "rhs_type",
        "output_type",
        "operand_layout",
        "loop_order",
        "k_min",
        "size_max",
        *earlier.GROUPS,
    }
    return (
        (earlier.lhs_type, earlier.rhs_type, earlier.output_type) == (later.lhs_type, later.rhs_type, later.output_type)
        and _optional_equal(earlier.operand_layout, later.operand_layout)
        and _optional_equal(earlier.loop_order, later.loop_order)
        and all(_dims_cover(getattr(earlier, g), getattr(later, g)) for g in earlier.GROUPS)
        and _k_min_implied(earlier, later)
        and _size_max_implied(earlier, later)
        and _others_equal(earlier, later, known)
    )


def convolution_covers(earlier: ConvolutionMatch, later: ConvolutionMatch) -> bool:
    """Same element types; each of ``earlier``'s dimension groups is any size or holds
    ``later``'s alternatives."""
    known = {"kind", "lhs_type", "rhs_type", "output_type", *earlier.GROUPS}
    return (
        (earlier.lhs_type, earlier.rhs_type, earlier.output_type) == (later.lhs_type, later.rhs_type, later.output_type)
        and all(_dims_cover(getattr(earlier, g), getattr(later, g)) for g in earlier.GROUPS)
        and _others_equal(earlier, later, known)
    )


def pack_covers(earlier: PackMatch, later: PackMatch) -> bool:
    """Equal pack matchers only (what an unset ``outer_dims_perm`` accepts is IREE's call)."""
    return earlier == later


COVERS: dict[type[MatcherKind], Callable[[Any, Any], bool]] = {
    OpNameMatch: names_cover,
    ConsumerMatch: names_cover,
    ProducerMatch: names_cover,
    ContractionMatch: contraction_covers,
    ConvolutionMatch: convolution_covers,
    PackMatch: pack_covers,
}
"""Leaf kind -> its cover test. A leaf kind not listed here is covered only by an equal leaf."""


def leaf_covers(earlier: MatcherKind, later: MatcherKind) -> bool:
    """``earlier`` (a leaf) accepts every op ``later`` (a leaf of the same kind) accepts."""
    if type(earlier) is not type(later):
        return False
    test = COVERS.get(type(earlier))
    return test(earlier, later) if test is not None else earlier == later


def covers(earlier: MatcherKind, later: MatcherKind) -> bool:
    """Every op ``later`` accepts, ``earlier`` accepts too (certainly; see the module docstring)."""
    if scope(earlier) is not None and scope(earlier) != scope(later):
        return False
    wanted = [leaf for leaf in leaves(earlier) if not isinstance(leaf, FunctionMatch)]
    have = [leaf for leaf in leaves(later) if not isinstance(leaf, FunctionMatch)]
    if not wanted:
        return False  # a scope alone selects nothing (rules refuse it); never certain
    return all(any(leaf_covers(w, h) for h in have) for w in wanted)


def _exact(leaf: MatcherKind) -> bool:
    """A contraction or convolution matcher that pins every dimension group to one shape."""
    if isinstance(leaf, (ContractionMatch, ConvolutionMatch)):
        groups = [
            getattr(leaf, g)
            for g in leaf.GROUPS
            if not (isinstance(leaf, ConvolutionMatch) and g in ("depth", "strides", "dilations"))
        ]
        return all(g is not None and len(g) == 1 for g in groups)
    return False


def _constraints(leaf: MatcherKind) -> int:
    """How many fields of ``leaf`` constrain the op (set, non-default fields)."""
    return sum(1 for name in leaf.model_fields_set if name != "kind" and getattr(leaf, name) is not None)


def specificity(matcher: MatcherKind) -> tuple[int, int, int]:
    """(pins an exact contraction/convolution shape, number of leaves, number of set
    constraints): higher is more specific. ``combine(..., precedence="specific")`` puts
    higher first."""
    found = leaves(matcher)
    return (int(any(_exact(leaf) for leaf in found)), len(found), sum(_constraints(leaf) for leaf in found))
