"""The parts of a matcher leaf as the reader assembles them from a sequence's ops (a
match op with its dimension groups, an operand's checks), and the matcher model each
becomes, a contraction's trailing ``dim_bounds`` folded into its ``k_min`` / ``size_max``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from ..errors import StrategyError
from ..model.kinds import MatcherKind
from ..model.matchers import (
    AttentionMatch,
    ContractionMatch,
    ConvolutionMatch,
    DimConstraint,
    OperandMatch,
    ProducerMatch,
    contraction_with_layout,
)
from .problems import Unsupported

CONTRACTION_GROUPS = ("batch", "m", "n", "k")
CONVOLUTION_GROUPS = (
    "batch",
    "output_image",
    "output_channel",
    "filter",
    "input_channel",
    "depth",
    "strides",
    "dilations",
)
ATTENTION_GROUPS = ("batch", "m", "n", "k1", "k2")


@dataclass
class PendingMatch:
    """A leaf being assembled: its kind, fields, group handles and location."""

    kind: str
    fields: dict[str, object]
    groups: dict[int, str]
    path: Optional[str]
    line: Optional[int]
    dims: dict[str, Optional[tuple[int, ...]]] = field(default_factory=dict)


@dataclass
class OperandChecks:
    """An operand (or result) of the candidate taken by ``get_operand``, and the checks on
    it: its type, per-dim bounds and multiples, and a producer's names."""

    index: int
    result: bool
    path: Optional[str]
    line: Optional[int]
    type: Optional[str] = None
    dims: dict[int, dict[str, int]] = field(default_factory=dict)
    checks: list[tuple[str, int, Optional[int], Optional[int]]] = field(default_factory=list)
    producer: Optional[int] = None
    """The handle of the operand's defining op (transform.get_defining_op), if taken."""
    producer_names: Optional[tuple[str, ...]] = None
    """The names operation_name requires of that producer (a ProducerMatch)."""


def is_bound_of(contraction: PendingMatch, item: object) -> bool:
    """``item`` is one dim_bounds check that may be the contraction's k_min / size_max:
    in a tdsl render located at the contraction's own leaf, else right after it."""
    if (
        not isinstance(item, OperandChecks)
        or item.type is not None
        or len(item.checks) != 1
        or item.checks[0][0] != "bounds"
    ):
        return False
    return item.path == contraction.path


def fold_bounds(matcher: ContractionMatch, bounds: list[OperandChecks]) -> tuple[ContractionMatch, int]:
    """The contraction with the ``k_min`` and ``size_max`` the leading ``bounds`` are (tdsl's
    renders of them: ``dim_bounds`` on the lhs's K with ``umin``; on the lhs's M and K and the
    rhs's N with one ``umax``), and how many checks that took."""
    if matcher.operand_layout is None or not bounds:
        return matcher, 0
    data = matcher.model_dump()
    used = 0
    first = bounds[0]
    _, dim, lower, upper = first.checks[0]
    if first.index == 0 and not first.result and dim == matcher.lhs_k_dim() and lower is not None and upper is None:
        data["k_min"] = lower
        used = 1
    rest = bounds[used : used + 3]
    if len(rest) == 3:
        limit = rest[0].checks[0][3]
        trial = dict(data, size_max=limit)
        try:
            candidate = ContractionMatch.model_validate(trial)
        except StrategyError:
            candidate = None
        if candidate is not None and limit is not None:
            want = candidate.bounded_dims()
            got = [(b.index, b.checks[0][1]) for b in rest]
            if want == got and all(b.checks[0][2] is None and b.checks[0][3] == limit and not b.result for b in rest):
                data = trial
                used += 3
    if not used:
        return matcher, 0
    try:
        folded: ContractionMatch = ContractionMatch.model_validate(data)
        return folded, used
    except StrategyError:
        return matcher, 0


def finish(item: Union[PendingMatch, OperandChecks]) -> MatcherKind:
    """The matcher model of a finished leaf part (raises :class:`Unsupported` where tdsl's
    matcher refuses what the ops check)."""
    if isinstance(item, OperandChecks) and item.producer is not None:
        if item.producer_names is None or item.type is not None or item.checks:
            raise Unsupported(
                "transform.get_defining_op", item.line, "a producer check that is operation_name alone (ProducerMatch)"
            )
        return ProducerMatch(operand=item.index, names=item.producer_names)
    if isinstance(item, OperandChecks):
        dims = [DimConstraint(dim=d, **c) for d, c in item.dims.items()]
        try:
            return OperandMatch(operand=item.index, result=item.result, type=item.type, dims=tuple(dims))
        except StrategyError as err:
            raise Unsupported(
                "transform.get_operand", item.line, f"operand checks tdsl's operand matcher takes ({err})"
            ) from None
    fields = dict(item.fields)
    groups = {"contraction": CONTRACTION_GROUPS, "convolution": CONVOLUTION_GROUPS, "attention": ATTENTION_GROUPS}[
        item.kind
    ]
    for g in groups:
        sizes = item.dims.get(g)
        fields[g] = None if sizes is None else (sizes,)
    try:
        if item.kind == "contraction":
            return _contraction(fields)
        if item.kind == "convolution":
            convolution: ConvolutionMatch = ConvolutionMatch.model_validate(fields)
            return convolution
        attention: AttentionMatch = AttentionMatch.model_validate(fields)
        return attention
    except StrategyError as err:
        op = {"contraction": "contraction", "convolution": "convolution", "attention": fields.get("op", "attention")}[
            item.kind
        ]
        model = {"contraction": "ContractionMatch", "convolution": "ConvolutionMatch", "attention": "AttentionMatch"}[
            item.kind
        ]
        raise Unsupported(
            f"transform.iree.match.{op}", item.line, f"tdsl's {model} rejects this matcher: {err}"
        ) from None


def _contraction(fields: dict[str, object]) -> ContractionMatch:
    """A contraction matcher; maps that are one of tdsl's operand layouts (with an exact
    batch of the maps' batch rank) become ``operand_layout``."""
    maps = fields.get("maps")
    if isinstance(maps, tuple):
        layout = contraction_with_layout(fields, tuple(maps))
        if layout is not None:
            return layout
    plain: ContractionMatch = ContractionMatch.model_validate(fields)
    return plain
