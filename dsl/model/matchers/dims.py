"""Dimension groups, indexing maps and tensor types as matchers spell them, and the
limit on the matcher sequences one rule expands to."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import AfterValidator, BeforeValidator, Field, Strict

from ..base import I64_MAX, Described, check_length, in_range, problem
from ..mlir_text import canonical_attribute

MAX_SEQUENCES = 64
"""The most matcher sequences one rule may expand to (the product of its ``one_of`` sets)."""


DYNAMIC = -1
"""A dynamic dimension, as IREE's ``transform.iree.match.dims_equal`` spells it (``?`` in
strategy files)."""

DimSize = Annotated[
    int,
    Strict(),
    in_range(
        DYNAMIC,
        I64_MAX,
        "a size, or -1 (or '?') for a dynamic dimension",
        f"a size at most {I64_MAX} (2**63 - 1, the largest MLIR i64)",
    ),
]
"""One dimension of a matcher's group: a size, or :data:`DYNAMIC` for a dynamic one."""


def _dynamic(value: object) -> object:
    """``"?"`` -> :data:`DYNAMIC`, in a size or a (nested) list of sizes."""
    if value == "?":
        return DYNAMIC
    if isinstance(value, (list, tuple)):
        return type(value)(_dynamic(v) for v in value)
    return value


def _canonical_dims(value: object) -> object:
    """``None``/``"any"`` -> None; ``7`` -> ((7,),); ``[56, 56]`` -> ((56, 56),);
    ``[[128], [256]]`` or ``{"one_of": [[128], [256]]}`` -> ((128,), (256,)); ``"?"`` or
    ``-1`` is a dynamic dimension (``["?", 1024]`` -> ((-1, 1024),))."""
    if value is None or value == "any":
        return None
    if isinstance(value, dict) and set(value) == {"one_of"}:
        value = {"one_of": _dynamic(value["one_of"])}
    else:
        value = _dynamic(value)
    if isinstance(value, dict) and set(value) == {"one_of"}:
        value = value["one_of"]
        if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
            return tuple((v,) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return ((value,),)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return (tuple(value),)
        if all(isinstance(v, (list, tuple)) for v in value):
            return tuple(tuple(v) for v in value)
    raise problem(
        "",
        "None (any size), an int, a list of ints ('?' or -1 for a dynamic dimension), or a set of lists {one_of: [[..], ..]}",
        value,
    )


def _check_dims(value: Optional[tuple[tuple[int, ...], ...]]) -> object:
    if value is None:
        return None
    if not value:
        raise problem("", "at least one alternative in one_of", [])
    if len(value) > MAX_SEQUENCES:
        raise problem(
            "",
            f"at most {MAX_SEQUENCES} alternatives in one_of (each renders a matcher sequence)",
            Described(f"{len(value)} alternatives"),
        )
    for i, alternative in enumerate(value):
        check_length(f"[{i}]", alternative, what="one per dimension of the group")
    return value


Dims = Annotated[
    Optional[tuple[tuple[DimSize, ...], ...]],
    BeforeValidator(_canonical_dims),
    AfterValidator(_check_dims),
    Field(default=None),
]


def _affine_map(value: str) -> str:
    """An affine map as the printer spells it, without ``affine_map<..>``:
    ``(d0, d1, d2) -> (d0, d2)``."""
    text = value.strip()
    if text.startswith("affine_map<") and text.endswith(">"):
        text = text[len("affine_map<") : -1]
    printed = canonical_attribute(f"affine_map<{text}>")
    if printed is None or not printed.startswith("affine_map<"):
        raise problem("", "an affine map such as '(d0, d1, d2) -> (d0, d2)'", value)
    return printed[len("affine_map<") : -1]


AffineMapText = Annotated[str, Strict(), AfterValidator(_affine_map)]
"""An indexing map, ``(d0, d1, d2) -> (d0, d2)`` (spelled as the MLIR printer spells it)."""


def map_dims(text: str) -> Optional[tuple[int, tuple[int, ...]]]:
    """(dimension count, result dims) of a projected permutation ``(d0, d1) -> (d1)``;
    None when a result is an expression (``d1 * 2 + d4``) or a symbol map."""
    head, _, tail = text.partition(" -> ")
    if not head.startswith("(") or not tail.startswith("(") or "[" in head:
        return None
    dims = [d.strip() for d in head[1:-1].split(",") if d.strip()]
    results = [r.strip() for r in tail[1:-1].split(",") if r.strip()]
    index = {d: i for i, d in enumerate(dims)}
    if any(r not in index for r in results):
        return None
    return len(dims), tuple(index[r] for r in results)


def check_maps(field: str, maps: tuple[str, ...], counts: tuple[int, ...], what: str) -> None:
    if len(maps) not in counts:
        raise problem(field, f"{' or '.join(str(c) for c in counts)} maps ({what})", list(maps))
    heads = {m.partition(" -> ")[0] for m in maps}
    if len(heads) != 1:
        raise problem(field, "maps over the same loops (one dimension list)", list(maps))


def _tensor_type(value: str) -> str:
    printed = canonical_attribute(value.strip())
    if printed is None or not printed.startswith("tensor<"):
        raise problem("", "a ranked tensor type such as 'tensor<?x?x64xf16>' ('?' for any size)", value)
    return printed


TensorTypeText = Annotated[str, Strict(), AfterValidator(_tensor_type)]
"""A ranked tensor type as the printer spells it: ``tensor<?x64xf16>``."""


def static(size: int) -> Optional[int]:
    """``size``, or None for a dynamic dimension."""
    return None if size == DYNAMIC else size


def dim_alternatives(dims: Optional[tuple[tuple[int, ...], ...]]) -> list[Optional[tuple[int, ...]]]:
    return [None] if dims is None else list(dims)


def check_sequence_count(counts: list[tuple[str, int]], what: str) -> None:
    """Raises unless the product of ``counts`` ((field, alternatives) pairs) is at most
    :data:`MAX_SEQUENCES`; the error names the field with the most alternatives."""
    total = 1
    for _, count in counts:
        total *= count
    if total <= MAX_SEQUENCES:
        return
    field, widest = max(counts, key=lambda fc: fc[1])
    factors = " x ".join(f"{count} ({name})" for name, count in counts if count > 1)
    raise problem(
        field,
        f"at most {MAX_SEQUENCES} matcher sequences per rule: tdsl renders one per combination of the {what}",
        Described(f"{factors} = {total} sequences"),
        hint=(
            f"give {field} at most {MAX_SEQUENCES * widest // total} alternatives, or split the rule"
            if MAX_SEQUENCES * widest // total >= 1
            else "split the rule into several rules with fewer alternatives each"
        ),
    )


def group_rank(dims: Optional[tuple[tuple[int, ...], ...]]) -> Optional[int]:
    if dims is None:
        return None
    ranks = {len(alt) for alt in dims}
    return ranks.pop() if len(ranks) == 1 else None
