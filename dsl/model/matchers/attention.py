"""The attention matcher (``transform.iree.match.attention`` / ``online_attention``)."""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, Literal, Optional

from pydantic import model_validator

from ..base import problem
from ..element_types import ElementType
from ..kinds import MatcherKind
from .dims import AffineMapText, Dims, check_maps, check_sequence_count, dim_alternatives, map_dims


class AttentionMatch(MatcherKind):
    """Matches an attention op. Emits ``transform.iree.match.attention`` (``op =
    "attention"``: ``iree_linalg_ext.attention``, element types of query, key, value and
    output) or ``transform.iree.match.online_attention`` (``op = "online_attention"``,
    what IREE 3.13 has turned attention into when a tuning spec runs on gfx942; also
    ``scale_type``, ``max_type`` and ``sum_type``), with the op's ``maps`` (its
    ``indexing_maps``: query, key, value, scale[, mask], output[, max, sum]), then one
    ``transform.iree.match.dims_equal`` per constrained group: ``batch``, ``m`` (query
    rows), ``n`` (value columns), ``k1`` (head dim), ``k2`` (key rows).
    """

    template: ClassVar[Optional[str]] = "matchers/attention.mlir.j2"

    kind: Literal["attention"] = "attention"
    """The discriminator: a transform.iree.match.attention / online_attention matcher."""
    op: Literal["attention", "online_attention"] = "attention"
    """Which op: attention (iree_linalg_ext.attention) or online_attention (match.online_attention)."""
    query_type: ElementType
    """Element type of the query operand."""
    key_type: ElementType
    """Element type of the key operand."""
    value_type: ElementType
    """Element type of the value operand."""
    scale_type: Optional[ElementType] = None
    """Element type of the scale operand (online_attention only)."""
    output_type: ElementType
    """Element type of the output."""
    max_type: Optional[ElementType] = None
    """Element type of the running max result (online_attention only)."""
    sum_type: Optional[ElementType] = None
    """Element type of the running sum result (online_attention only)."""
    maps: tuple[AffineMapText, ...]
    """The op's indexing_maps: query, key, value, scale[, mask], output[, max, sum]."""
    batch: Dims = None
    """Batch dim sizes (dims_equal %batch): None any, a list, or one_of lists."""
    m: Dims = None
    """Query row dim sizes (dims_equal %m): None any, a list, or one_of lists."""
    n: Dims = None
    """Value column dim sizes (dims_equal %n): None any, a list, or one_of lists."""
    k1: Dims = None
    """Head dim sizes (dims_equal %k1): None any, a list, or one_of lists."""
    k2: Dims = None
    """Key row dim sizes (dims_equal %k2): None any, a list, or one_of lists."""

    GROUPS: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k1", "k2")
    ONLINE_TYPES: ClassVar[tuple[str, ...]] = ("scale_type", "max_type", "sum_type")

    @model_validator(mode="after")
    def _check(self) -> "AttentionMatch":
        online = self.op == "online_attention"
        for field in self.ONLINE_TYPES:
            if online and getattr(self, field) is None:
                raise problem(field, "an element type: online_attention matches scale, max and sum types", None)
            if not online and getattr(self, field) is not None:
                raise problem(
                    field, "None with op 'attention' (only online_attention matches it)", getattr(self, field)
                )
        counts = (7, 8) if online else (5, 6)
        what = (
            "query, key, value, scale, [mask,] output, max and sum"
            if online
            else "query, key, value, scale, [mask,] output"
        )
        check_maps("maps", self.maps, counts, what)
        check_sequence_count(
            [(g, len(dim_alternatives(getattr(self, g)))) for g in self.GROUPS], "one_of alternatives of its groups"
        )
        return self

    def sequence_count(self) -> int:
        return math.prod(len(dim_alternatives(getattr(self, g))) for g in self.GROUPS)

    def alternatives(self) -> list[dict[str, object]]:
        combos = itertools.product(*(dim_alternatives(getattr(self, g)) for g in self.GROUPS))
        return [dict(zip(self.GROUPS, combo)) for combo in combos]

    def loop_count(self) -> Optional[int]:
        read = map_dims(self.maps[0])
        return read[0] if read is not None else None
