"""Matchers: which payload ops a rule applies to.

Each matcher renders to the body of a ``transform.named_sequence`` matcher used by
``transform.foreach_match``: ``transform.match.operation_name``,
``transform.iree.match.contraction`` / ``convolution`` followed by
``transform.iree.match.dims_equal``, or a function-name check. A dimension group is
``None`` (any size), one exact list of sizes, or a set of such lists (``one_of``);
sets are expanded into one matcher sequence per alternative, all tried in order.

Note the op forms at codegen time: on gfx942 every contraction and convolution is
already a ``linalg.generic`` (match it with ``contraction`` / ``convolution``), and
on llvm-cpu convolutions are generics too.

Example::

    ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", m=1024, n=1024, k=1024)

renders (inside the matcher sequence)::

    %batch, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32,
        output_type = f32 : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %batch, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [1024] : !transform.param<i64>
    ...
"""

from __future__ import annotations

import itertools
import math
from typing import Annotated, Any, ClassVar, Literal, Optional, get_args

from pydantic import AfterValidator, BeforeValidator, Field, Strict, model_validator

from ..errors import StrategyError
from .base import (
    MAX_RANK,
    Described,
    Indices,
    OperandIndex,
    OpNames,
    Rank,
    Size,
    Sizes,
    StrategyModel,
    StrictBool,
    SymbolName,
    check_length,
    check_permutation,
    in_range,
    problem,
)
from .element_types import ElementType
from .kinds import LoopShape, MatcherKind
from .mlir_text import canonical_attribute, matcher_module, parse_problem, rename_values

MAX_SEQUENCES = 64
"""The most matcher sequences one rule may expand to (the product of its ``one_of`` sets)."""


def _canonical_dims(value: Any) -> Any:
    """``None``/``"any"`` -> None; ``7`` -> ((7,),); ``[56, 56]`` -> ((56, 56),);
    ``[[128], [256]]`` or ``{"one_of": [[128], [256]]}`` -> ((128,), (256,))."""
    if value is None or value == "any":
        return None
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
        "None (any size), an int, a list of ints, or a set of lists {one_of: [[..], ..]}",
        value,
    )


def _check_dims(value: Optional[tuple[tuple[int, ...], ...]]) -> Any:
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
    Optional[tuple[tuple[Size, ...], ...]],
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


def _check_maps(field: str, maps: tuple[str, ...], counts: tuple[int, ...], what: str) -> None:
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


def _alternatives(dims: Optional[tuple[tuple[int, ...], ...]]) -> list[Optional[tuple[int, ...]]]:
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
        f"at most {MAX_SEQUENCES} matcher sequences per rule: tdsl renders one per combination "
        f"of the {what}",
        Described(f"{factors} = {total} sequences"),
        hint=(
            f"give {field} at most {MAX_SEQUENCES * widest // total} alternatives, or split the rule"
            if MAX_SEQUENCES * widest // total >= 1
            else "split the rule into several rules with fewer alternatives each"
        ),
    )


def _rank(dims: Optional[tuple[tuple[int, ...], ...]]) -> Optional[int]:
    if dims is None:
        return None
    ranks = {len(alt) for alt in dims}
    return ranks.pop() if len(ranks) == 1 else None


class OpNameMatch(MatcherKind):
    """Matches ops by name. Emits ``transform.match.operation_name %op ["linalg.matmul"]``."""

    template: ClassVar[Optional[str]] = "matchers/op_name.mlir.j2"

    kind: Literal["op_name"] = "op_name"
    """The discriminator: a transform.match.operation_name matcher."""
    names: OpNames
    """Operation names accepted (transform.match.operation_name %op [..]), e.g. linalg.matmul."""

    def loop_count(self) -> Optional[int]:
        return {
            "linalg.matmul": 3,
            "linalg.batch_matmul": 4,
            "linalg.mmt4d": 6,
            "linalg.quantized_matmul": 3,
            "linalg.quantized_batch_matmul": 4,
        }.get(self.names[0]) if len(self.names) == 1 else None

    # Named ops with their default indexing maps (a linalg.matmul written with transposed
    # indexing_maps: match it with a contraction matcher and its operand_layout instead).
    _SHAPES: ClassVar[dict[str, LoopShape]] = {
        "linalg.matmul": LoopShape.of(
            ("m", "n", "k"), ((0, 2), (2, 1), (0, 1)), "linalg.matmul's default indexing maps (lhs MxK, rhs KxN)"
        ),
        "linalg.batch_matmul": LoopShape.of(
            ("b", "m", "n", "k"),
            ((0, 1, 3), (0, 3, 2), (0, 1, 2)),
            "linalg.batch_matmul's default indexing maps (lhs BxMxK, rhs BxKxN)",
        ),
        # ONNX QLinearMatMul / MatMulInteger at the graph level: ins(lhs, rhs, lhs zero point,
        # rhs zero point), the lhs, rhs and result indexed as linalg.matmul's / batch_matmul's.
        "linalg.quantized_matmul": LoopShape.of(
            ("m", "n", "k"), ((0, 2), (2, 1), (0, 1)), "linalg.quantized_matmul's indexing maps (lhs MxK, rhs KxN)"
        ),
        "linalg.quantized_batch_matmul": LoopShape.of(
            ("b", "m", "n", "k"),
            ((0, 1, 3), (0, 3, 2), (0, 1, 2)),
            "linalg.quantized_batch_matmul's indexing maps (lhs BxMxK, rhs BxKxN)",
        ),
    }

    def loop_shape(self) -> Optional[LoopShape]:
        shapes = {self._SHAPES.get(n) for n in self.names}
        return shapes.pop() if len(shapes) == 1 else None

    def selects_convolutions(self) -> bool:
        return all(n.startswith(("linalg.conv_", "linalg.depthwise_conv_")) for n in self.names)

    def operand_count(self) -> Optional[int]:
        quantized = ("linalg.quantized_matmul", "linalg.quantized_batch_matmul")
        if all(n in quantized for n in self.names):
            return 5  # lhs, rhs, lhs zero point, rhs zero point, result
        named = ("linalg.matmul", "linalg.batch_matmul", "linalg.mmt4d", "linalg.batch_mmt4d", "linalg.matvec", "linalg.conv_")
        return 3 if all(n.startswith(named) for n in self.names) else None


OperandLayout = Literal["mk_kn", "mk_nk", "km_kn", "km_nk", "k_kn", "k_nk"]


class ContractionMatch(MatcherKind):
    """Matches contractions (named or generic). Emits ``transform.iree.match.contraction``
    plus one ``transform.iree.match.dims_equal`` per constrained group.

    ``operand_layout`` pins the indexing maps: ``mk_kn`` is a plain matmul, ``mk_nk`` a
    matmul with transposed B, and so on; it needs an exact ``batch`` (``[]`` or one dim).
    ``k_kn`` / ``k_nk`` are matrix-vector products as they reach codegen (IREE folds the
    unit M away: loops (n, k), lhs (k), rhs (k, n) or (n, k)); they need ``m = []``.
    ``k_min`` (with ``operand_layout``) requires K >= k_min:
    ``transform.iree.match.dim_bounds`` on the lhs's K dimension; ``size_max`` (with
    ``operand_layout``) requires M, N and K all <= size_max (``dim_bounds`` with ``umax`` on
    the lhs's M and K and the rhs's N dimension).

    A batch-1 ``linalg.batch_matmul`` (what ONNX MatMul of a 3-D activation by a 2-D weight
    becomes at the graph level) is selected by ``batch=[1]``; ``batch={"one_of": [[], [1]]}``
    selects it and the plain matmul of the same m, n, k alike (tests/test_unit_batch.py).

    ``maps`` pins any other indexing maps exactly (the op's three ``indexing_maps`` over its
    loops, e.g. ``["(d0, d1, d2, d3) -> (d0, d1, d3)", ...]``, as amdsharktuner and IREE's
    default tuning specs write them); it excludes ``operand_layout``.

    Integer contractions match with their signless types (``i8`` for u8 and s8 data). It
    never selects ``linalg.quantized_matmul`` (ONNX QLinearMatMul at the graph level: two
    more inputs, its zero points, which IREE's matcher refuses); select that op by name and
    operand types, ``AllOf(OpNameMatch, OperandMatch, ...)``, as ``tdsl ops`` prints it.
    """

    template: ClassVar[Optional[str]] = "matchers/contraction.mlir.j2"

    kind: Literal["contraction"] = "contraction"
    """The discriminator: a transform.iree.match.contraction matcher."""
    lhs_type: ElementType
    """Element type of the lhs (lhs_type of transform.iree.match.contraction)."""
    rhs_type: ElementType
    """Element type of the rhs (rhs_type of transform.iree.match.contraction)."""
    output_type: ElementType
    """Element type of the result (output_type of transform.iree.match.contraction)."""
    operand_layout: Optional[OperandLayout] = None
    """Pins the indexing maps: mk_kn (plain matmul), mk_nk (transposed B), ..., k_kn / k_nk (matvec)."""
    maps: Optional[tuple[AffineMapText, ...]] = None
    """The op's three indexing_maps exactly (lhs, rhs, result), e.g. '(d0, d1, d2) -> (d0, d2)'."""
    loop_order: Optional[str] = None
    """The roles of the op's loops in order (e.g. 'mnk', 'nmk'); the author's statement, not matched."""
    k_min: Optional[Size] = None
    """Requires K >= k_min: transform.iree.match.dim_bounds umin on the lhs's K dim (needs operand_layout)."""
    size_max: Optional[Size] = None
    """Requires M, N, K <= size_max: dim_bounds umax on the lhs's M, K and rhs's N (needs operand_layout)."""
    batch: Dims
    """Batch dim sizes (transform.iree.match.dims_equal %batch): None any, a list, or one_of lists."""
    m: Dims
    """M dim sizes (transform.iree.match.dims_equal %m): None any, a list, or one_of lists."""
    n: Dims
    """N dim sizes (transform.iree.match.dims_equal %n): None any, a list, or one_of lists."""
    k: Dims
    """K dim sizes (transform.iree.match.dims_equal %k): None any, a list, or one_of lists."""

    GROUPS: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k")

    @model_validator(mode="after")
    def _sequences(self) -> "ContractionMatch":
        check_sequence_count([(g, len(_alternatives(getattr(self, g)))) for g in self.GROUPS], "one_of alternatives of batch, m, n and k")
        return self

    def sequence_count(self) -> int:
        return math.prod(len(_alternatives(getattr(self, g))) for g in self.GROUPS)

    @model_validator(mode="after")
    def _maps(self) -> "ContractionMatch":
        if self.maps is not None:
            if self.operand_layout is not None:
                raise problem("maps", "None when operand_layout is set (it fixes the maps)", list(self.maps))
            _check_maps("maps", self.maps, (3,), "lhs, rhs and result")
            for field in ("k_min", "size_max", "loop_order"):
                if getattr(self, field) is not None:
                    raise problem(field, "None with maps (use an operand matcher for bounds)", getattr(self, field))
        return self

    def _roles_from_maps(self) -> Optional[LoopShape]:
        """The loop roles the ``maps`` imply (b: all three, m: lhs and result, n: rhs and
        result, k: lhs and rhs), when each map is a projected permutation."""
        if self.maps is None:
            return None
        read = [map_dims(m) for m in self.maps]
        if any(r is None for r in read):
            return None
        operands = tuple(r[1] for r in read if r is not None)
        count = read[0][0] if read[0] is not None else 0
        roles = []
        for d in range(count):
            use = (d in operands[0], d in operands[1], d in operands[2])
            role = {(True, True, True): "b", (True, False, True): "m", (False, True, True): "n", (True, True, False): "k"}.get(use)
            if role is None:
                return None
            roles.append(role)
        return LoopShape.of(tuple(roles), (operands[0], operands[1], operands[2]), "maps")

    @model_validator(mode="after")
    def _k_min(self) -> "ContractionMatch":
        if self.k_min is not None:
            if self.k_min < 1:
                raise problem("k_min", "a positive size", self.k_min)
            if self.operand_layout is None:
                raise problem("k_min", "an operand_layout, which locates K in the lhs", self.k_min)
        if self.operand_layout is not None and self.operand_layout.startswith("k_"):
            if self.m != ((),):
                raise problem(
                    "m",
                    f"[] (no M loop) with operand_layout {self.operand_layout!r}",
                    "any" if self.m is None else [list(a) for a in self.m],
                )
            for field in ("k_min", "size_max"):
                if getattr(self, field) is not None:
                    raise problem(field, f"None with operand_layout {self.operand_layout!r}", getattr(self, field))
        if self.size_max is not None:
            if self.size_max < 1:
                raise problem("size_max", "a positive size", self.size_max)
            if self.operand_layout is None:
                raise problem("size_max", "an operand_layout, which locates M, N and K in the operands", self.size_max)
        return self

    def bounded_dims(self) -> list[tuple[int, int]]:
        """(operand index, dimension) of M and K in the lhs and N in the rhs (needs ``operand_layout``)."""
        nb = _rank(self.batch) or 0
        layout = self.operand_layout or "mk_kn"
        lhs_m = nb + layout[:2].index("m")
        rhs_n = nb + layout[3:].index("n")
        return [(0, lhs_m), (0, self.lhs_k_dim()), (1, rhs_n)]

    def lhs_k_dim(self) -> int:
        """The lhs dimension that K indexes (needs ``operand_layout``)."""
        nb = _rank(self.batch) or 0
        return nb + (1 if (self.operand_layout or "mk")[:2] == "mk" else 0)

    @model_validator(mode="after")
    def _loop_order(self) -> "ContractionMatch":
        if self.loop_order is not None:
            order = self.loop_order
            if len(order) > MAX_RANK or set(order) - set("bmnk") or not {"m", "n", "k"} <= set(order):
                raise problem(
                    "loop_order",
                    "the roles of the op's loops in order, one of b, m, n, k per loop and each of m, n, k at least once, "
                    "e.g. 'mnk', 'nmk' or 'nmmk'",
                    order,
                )
            if self.operand_layout is not None and order.lstrip("b") != "mnk":
                raise problem("loop_order", "'mnk' (after batch) when operand_layout is set", order)
            for group, letter in (("m", "m"), ("n", "n"), ("k", "k")):
                rank = _rank(getattr(self, group))
                if rank is not None and rank != order.count(letter):
                    raise problem(
                        group,
                        f"{order.count(letter)} dimension(s), one per '{letter}' of loop_order {order!r}",
                        [list(a) for a in getattr(self, group)],
                    )
        return self

    @model_validator(mode="after")
    def _layout_needs_batch(self) -> "ContractionMatch":
        if self.operand_layout is not None:
            rank = _rank(self.batch)
            if rank is None or rank > 1:
                raise problem(
                    "batch",
                    "an exact batch ([] or one dimension) when operand_layout is set",
                    "any" if self.batch is None else [list(a) for a in self.batch],
                )
            for group in ("m", "n", "k"):
                if group == "m" and self.operand_layout.startswith("k_"):
                    continue
                if _rank(getattr(self, group)) not in (None, 1):
                    raise problem(
                        group,
                        "a single dimension when operand_layout is set",
                        [list(a) for a in getattr(self, group)],
                    )
        return self

    def indexing_maps(self) -> Optional[list[list[int]]]:
        """Result dims of the lhs, rhs and output maps ``operand_layout`` fixes, as loop
        indices (b, m, n, k order); see ``maps`` for maps given as they are."""
        if self.operand_layout is None:
            return None
        nb = _rank(self.batch) or 0
        b = list(range(nb))
        if self.operand_layout.startswith("k_"):
            n, k = nb, nb + 1
            return [b + [k], b + ([k, n] if self.operand_layout == "k_kn" else [n, k]), b + [n]]
        m, n, k = nb, nb + 1, nb + 2
        lhs = [m, k] if self.operand_layout[:2] == "mk" else [k, m]
        rhs = [k, n] if self.operand_layout[3:] == "kn" else [n, k]
        return [b + lhs, b + rhs, b + [m, n]]

    def layout_maps(self) -> Optional[tuple[str, ...]]:
        """The indexing maps ``operand_layout`` fixes, printed as ``(d0, d1, d2) -> (d0, d2)``
        (None without an operand_layout)."""
        results = self.indexing_maps()
        if results is None:
            return None
        dims = ", ".join(f"d{d}" for d in range(len(results[2]) + 1))
        return tuple(f"({dims}) -> (" + ", ".join(f"d{d}" for d in r) + ")" for r in results)

    def alternatives(self) -> list[dict[str, Any]]:
        groups = self.GROUPS
        combos = itertools.product(*(_alternatives(getattr(self, g)) for g in groups))
        return [dict(zip(groups, combo)) for combo in combos]

    def loop_roles(self) -> Optional[tuple[str, ...]]:
        """'b'/'m'/'n'/'k' per loop when every group has an exact rank: in ``loop_order`` if
        given, else in the order linalg's named contractions generalize to (batch, m, n, k).

        IREE's matcher cannot check loop order, so ``loop_order`` is the author's statement
        about the payload (e.g. ``nmk`` for an NCHW 1x1 convolution collapsed to a matmul);
        tile lists follow it and tdsl's resource checks rely on it.
        """
        from_maps = self._roles_from_maps()
        if from_maps is not None:
            return from_maps.roles
        ranks = [_rank(getattr(self, g)) for g in ("batch", "m", "n", "k")]
        if any(r is None for r in ranks):
            return None
        if self.loop_order is not None:
            if any(self.loop_order.count(letter) != rank for letter, rank in zip("bmnk", ranks)):
                return None
            return tuple(self.loop_order)
        return tuple(role for role, r in zip("bmnk", ranks) for _ in range(r or 0))

    def loop_shape(self) -> Optional[LoopShape]:
        from_maps = self._roles_from_maps()
        if from_maps is not None:
            return from_maps
        maps = self.indexing_maps()
        if maps is not None:
            nb = _rank(self.batch) or 0
            roles = ("b",) * nb + (("n", "k") if self.operand_layout and self.operand_layout.startswith("k_") else ("m", "n", "k"))
            return LoopShape.of(roles, (tuple(maps[0]), tuple(maps[1]), tuple(maps[2])), f"operand_layout {self.operand_layout!r}")
        loop_roles = self.loop_roles()
        return None if loop_roles is None else LoopShape.of(loop_roles)

    def operand_count(self) -> Optional[int]:
        return 3

    def problem_dims(self, roles: tuple[str, ...]) -> list[Optional[int]]:
        """The size of each loop with these roles (as :meth:`loop_shape` gives them), where
        its group is one exact alternative; None where the matcher leaves it open."""
        groups = {"b": self.batch, "m": self.m, "n": self.n, "k": self.k}
        taken = {role: 0 for role in groups}
        sizes: list[Optional[int]] = []
        for role in roles:
            dims = groups[role]
            j = taken[role]
            taken[role] += 1
            sizes.append(dims[0][j] if dims is not None and len(dims) == 1 and j < len(dims[0]) else None)
        return sizes

    def problem_sizes(self) -> Optional[tuple[int, int, int]]:
        """(M, N, K) products when m, n and k are each one exact alternative."""
        sizes = []
        for group in ("m", "n", "k"):
            dims = getattr(self, group)
            if dims is None or len(dims) != 1:
                return None
            product = 1
            for d in dims[0]:
                product *= d
            sizes.append(product)
        return sizes[0], sizes[1], sizes[2]

    def loop_count(self) -> Optional[int]:
        if self.maps is not None:
            read = map_dims(self.maps[0])
            return read[0] if read is not None else None
        ranks = [_rank(getattr(self, g)) for g in ("batch", "m", "n", "k")]
        return None if any(r is None for r in ranks) else sum(r for r in ranks if r is not None)


def contraction_with_layout(fields: dict[str, Any], maps: tuple[str, ...]) -> Optional[ContractionMatch]:
    """The contraction matcher of ``fields`` (without ``maps``) with the ``operand_layout``
    whose indexing maps are ``maps`` exactly, if one is and validates (a layout needs an exact
    batch of at most one dim, and the ``k_`` ones ``m = []``)."""
    base = {k: v for k, v in fields.items() if k != "maps"}
    for layout in get_args(OperandLayout):
        try:
            candidate: ContractionMatch = ContractionMatch.model_validate(base | {"operand_layout": layout})
        except StrategyError:
            continue
        if candidate.layout_maps() == tuple(maps):
            return candidate
    return None


class ConvolutionMatch(MatcherKind):
    """Matches convolutions (named or generic). Emits ``transform.iree.match.convolution``
    plus ``transform.iree.match.dims_equal`` per constrained group; ``maps`` (the op's three
    ``indexing_maps``, e.g. ``(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)``
    for the input) pins the layout exactly."""

    template: ClassVar[Optional[str]] = "matchers/convolution.mlir.j2"

    kind: Literal["convolution"] = "convolution"
    """The discriminator: a transform.iree.match.convolution matcher."""
    lhs_type: ElementType
    """Element type of the input (lhs_type of transform.iree.match.convolution)."""
    rhs_type: ElementType
    """Element type of the filter (rhs_type of transform.iree.match.convolution)."""
    output_type: ElementType
    """Element type of the result (output_type of transform.iree.match.convolution)."""
    maps: Optional[tuple[AffineMapText, ...]] = None
    """The op's three indexing_maps exactly (input, filter, output), pinning the layout."""
    batch: Dims
    """Batch dim sizes (dims_equal %batch): None any, a list, or one_of lists."""
    output_image: Dims
    """Output image dim sizes (dims_equal %output_image): None any, a list, or one_of lists."""
    output_channel: Dims
    """Output channel dim sizes (dims_equal %output_channel): None any, a list, or one_of lists."""
    filter: Dims
    """Filter loop sizes (dims_equal on the filter group): None any, a list, or one_of lists."""
    input_channel: Dims
    """Input channel dim sizes (dims_equal %input_channel): None any, a list, or one_of lists."""
    depth: Dims
    """Depth (depthwise channel) dim sizes (dims_equal %depth): None any, a list, or one_of lists."""
    strides: Dims
    """Strides (dims_equal %strides): None any, a list, or one_of lists."""
    dilations: Dims
    """Dilations (dims_equal %dilations): None any, a list, or one_of lists."""

    GROUPS: ClassVar[tuple[str, ...]] = (
        "batch",
        "output_image",
        "output_channel",
        "filter",
        "input_channel",
        "depth",
        "strides",
        "dilations",
    )

    @model_validator(mode="after")
    def _sequences(self) -> "ConvolutionMatch":
        check_sequence_count([(g, len(_alternatives(getattr(self, g)))) for g in self.GROUPS], "one_of alternatives of its groups")
        if self.maps is not None:
            _check_maps("maps", self.maps, (3,), "input, filter and output")
        return self

    def sequence_count(self) -> int:
        return math.prod(len(_alternatives(getattr(self, g))) for g in self.GROUPS)

    def operand_count(self) -> Optional[int]:
        return 3

    def selects_convolutions(self) -> bool:
        return True

    def convolution_loops(self, igemm: bool) -> Optional[tuple[int, int]]:
        """Without im2col: one loop per dim of batch, output_image, output_channel, filter,
        input_channel and depth; with it (``use_igemm_convolution``), the filter and input
        channel loops become one reduction loop. An open ``depth`` is 0 or 1 dims (the
        depthwise channel of linalg's convolutions)."""
        groups = ["batch", "output_image", "output_channel"] + ([] if igemm else ["filter", "input_channel"])
        ranks = [_rank(getattr(self, g)) for g in groups]
        if any(r is None for r in ranks):
            return None
        count = sum(r or 0 for r in ranks) + (1 if igemm else 0)
        depth = _rank(self.depth)
        if depth is None:
            return (count, count + 1) if self.depth is None else None
        return count + depth, count + depth

    def alternatives(self) -> list[dict[str, Any]]:
        combos = itertools.product(*(_alternatives(getattr(self, g)) for g in self.GROUPS))
        return [dict(zip(self.GROUPS, combo)) for combo in combos]


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
    batch: Dims
    """Batch dim sizes (dims_equal %batch): None any, a list, or one_of lists."""
    m: Dims
    """Query row dim sizes (dims_equal %m): None any, a list, or one_of lists."""
    n: Dims
    """Value column dim sizes (dims_equal %n): None any, a list, or one_of lists."""
    k1: Dims
    """Head dim sizes (dims_equal %k1): None any, a list, or one_of lists."""
    k2: Dims
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
                raise problem(field, "None with op 'attention' (only online_attention matches it)", getattr(self, field))
        counts = (7, 8) if online else (5, 6)
        what = "query, key, value, scale, [mask,] output, max and sum" if online else "query, key, value, scale, [mask,] output"
        _check_maps("maps", self.maps, counts, what)
        check_sequence_count([(g, len(_alternatives(getattr(self, g)))) for g in self.GROUPS], "one_of alternatives of its groups")
        return self

    def sequence_count(self) -> int:
        return math.prod(len(_alternatives(getattr(self, g))) for g in self.GROUPS)

    def alternatives(self) -> list[dict[str, Any]]:
        combos = itertools.product(*(_alternatives(getattr(self, g)) for g in self.GROUPS))
        return [dict(zip(self.GROUPS, combo)) for combo in combos]

    def loop_count(self) -> Optional[int]:
        read = map_dims(self.maps[0])
        return read[0] if read is not None else None


class NoLoweringConfigMatch(MatcherKind):
    """Requires that the op carries no ``lowering_config`` yet (an earlier rule or spec did
    not configure it). Emits ``transform.iree.match.has_no_lowering_config %op``; IREE's
    default tuning specs start every matcher with it. Combine it in :class:`AllOf`."""

    template: ClassVar[Optional[str]] = "matchers/no_lowering_config.mlir.j2"

    kind: Literal["no_lowering_config"] = "no_lowering_config"
    """The discriminator: emits transform.iree.match.has_no_lowering_config %op."""


class DimConstraint(StrategyModel):
    """Constraints on dimension ``dim`` of an operand: ``multiple_of`` emits
    ``transform.iree.match.dim_is_multiple_of``, ``min`` / ``max`` emit
    ``transform.iree.match.dim_bounds`` (``umin`` / ``umax``)."""

    dim: Annotated[int, Strict(), in_range(0, MAX_RANK - 1, "a dimension index (0 or more)", f"a dimension index below {MAX_RANK}")]
    """The operand dimension constrained (0-based)."""
    multiple_of: Optional[Annotated[int, Strict(), in_range(1, 2**63 - 1, "a positive size", "an MLIR i64")]] = None
    """The dim is a multiple of this: transform.iree.match.dim_is_multiple_of."""
    min: Optional[Size] = None
    """Lower bound on the dim: transform.iree.match.dim_bounds umin."""
    max: Optional[Size] = None
    """Upper bound on the dim: transform.iree.match.dim_bounds umax."""

    @model_validator(mode="after")
    def _check(self) -> "DimConstraint":
        if self.multiple_of is None and self.min is None and self.max is None:
            raise problem("multiple_of", "at least one of multiple_of, min and max", None)
        if self.min is not None and self.max is not None and self.min > self.max:
            raise problem("max", f"at least min ({self.min})", self.max)
        return self


class OperandMatch(MatcherKind):
    """Constraints on one operand (or, with ``result``, one result) of the op:
    ``transform.get_operand %op[operand]`` then ``transform.iree.match.cast_compatible_type``
    with ``type`` (a tensor type whose ``?`` dims match any size) and the ``dims``
    constraints (``dim_is_multiple_of``, ``dim_bounds``). Combine it in :class:`AllOf`
    with a matcher that selects the op, e.g.::

        OperandMatch(operand=0, type="tensor<?x?x64xf16>", dims=[DimConstraint(dim=1, multiple_of=128)])
    """

    template: ClassVar[Optional[str]] = "matchers/operand.mlir.j2"

    kind: Literal["operand"] = "operand"
    """The discriminator: transform.get_operand (or get_result) then type and dim checks."""
    operand: OperandIndex = 0
    """Index of the operand (transform.get_operand %op[operand]), or of the result with result set."""
    result: StrictBool = False
    """Must stay False: IREE 3.13 refuses transform.get_result in a matcher; constrain the init operand instead."""
    type: Optional[TensorTypeText] = None
    """A tensor type the value must be cast-compatible with (match.cast_compatible_type); '?' any size."""
    dims: tuple[DimConstraint, ...] = ()
    """Per-dimension constraints (dim_is_multiple_of, dim_bounds)."""

    @model_validator(mode="after")
    def _check(self) -> "OperandMatch":
        if self.result:
            raise problem(
                "result",
                "False: IREE 3.13 refuses transform.get_result inside a matcher ('expected operations in the match "
                "part to implement MatchOpInterface'); constrain the init operand instead (the last operand, "
                "which has the result's type)",
                True,
            )
        if self.type is None and not self.dims:
            raise problem("type", "a type and/or dims constraints", None)
        check_length("dims", self.dims, what="one per constrained dimension")
        rank = self.rank()
        for i, d in enumerate(self.dims):
            if rank is not None and d.dim >= rank:
                raise problem(f"dims[{i}].dim", f"a dimension of the rank-{rank} type {self.type}: 0 to {rank - 1}", d.dim)
        return self

    def rank(self) -> Optional[int]:
        """The rank of ``type`` (None without one)."""
        if self.type is None:
            return None
        return self.type[len("tensor<") : -1].count("x")


class DagMatch(MatcherKind):
    """Matches the op and its producers against a pattern DAG of payload ops:
    ``transform.iree.match.cast_compatible_dag_from_root %op { <pattern> }``. ``pattern`` is
    the region as MLIR: block arguments for the DAG's inputs and outputs (tensor types whose
    ``?`` dims match any size), then the ops, the root last, e.g.::

        ^bb0(%lhs: tensor<?x?xf16>, %rhs: tensor<?x?xf16>, %out: tensor<?x?xf32>):
          %0 = linalg.matmul ins(%lhs, %rhs : tensor<?x?xf16>, tensor<?x?xf16>)
              outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>

    Tuning specs written by amdsharktuner and older hand-written specs select ops this way
    (a whole ``linalg.generic`` with its body). Its SSA names get the leaf's prefix when it
    renders (the region shares the matcher's name scope). :class:`PackMatch` is the typed
    form for one pack or unpack.
    """

    template: ClassVar[Optional[str]] = "matchers/dag.mlir.j2"

    kind: Literal["dag"] = "dag"
    """The discriminator: a transform.iree.match.cast_compatible_dag_from_root matcher."""
    pattern: str
    """The pattern region as MLIR: ^bb0 with the DAG's inputs and outputs, then its ops, the root last."""

    @model_validator(mode="after")
    def _check(self) -> "DagMatch":
        text = self.pattern.strip("\n")
        if not text.lstrip().startswith("^bb0("):
            raise problem("pattern", "a region that starts with its block '^bb0(%arg: type, ...):'", self.pattern[:60])
        found = parse_problem(matcher_module(dag_leaf(text, "p_", "%op")))
        if found is not None:
            raise problem("pattern", f"a pattern that parses and verifies with IREE 3.13 ({found})", Described("the pattern"))
        return self


def dag_leaf(pattern: str, prefix: str, op: str) -> str:
    """The ``cast_compatible_dag_from_root`` op on ``op`` with ``pattern`` (its SSA values
    renamed with ``prefix``); results ``%<prefix>ins``, ``%<prefix>outs``."""
    body = rename_values(pattern.strip("\n"), prefix)
    return (
        f"    %{prefix}ins, %{prefix}outs = transform.iree.match.cast_compatible_dag_from_root {op} {{\n"
        + body
        + "\n    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)"
    )


class FunctionMatch(MatcherKind):
    """Restricts a rule to ops inside the ``func.func`` named ``function`` (exact symbol).

    At graph level that is the payload function (``@matmul``); at codegen time it is the
    dispatch function IREE generates (``matmul_dispatch_0_matmul_128x192x256_f32``).
    Matcher sequences may only hold match ops, so this is rendered as a scope: the
    rule's ``transform.foreach_match`` runs on
    ``transform.structured.match ops{["func.func", "util.func"]} attributes {sym_name = ".."}``
    (IREE turns payload functions into ``util.func`` before preprocessing).
    Use it inside :class:`AllOf` with a matcher that selects the op.
    """

    template: ClassVar[Optional[str]] = None  # a scope: rendered by the foreach_match, not as match ops

    kind: Literal["function"] = "function"
    """The discriminator: scopes the rule's foreach_match to one function."""
    function: SymbolName
    """sym_name of the func.func / util.func to look in (transform.structured.match attributes)."""


class ConsumerMatch(MatcherKind):
    """Requires the op's first result to have a single user, one of ``names``. Emits
    ``transform.match.structured`` with ``transform.match.structured.result %s[0] single``,
    then ``transform.match.operation_name`` on that user (matcher sequences may only hold
    match ops, so ``get_consumers_of_result`` is not usable here). Use it inside
    :class:`AllOf`, e.g. to select the matmuls whose result is reshaped
    (``tensor.expand_shape``).
    """

    template: ClassVar[Optional[str]] = "matchers/consumer.mlir.j2"

    kind: Literal["consumer"] = "consumer"
    """The discriminator: match.structured.result %s[0] single, then operation_name on its user."""
    names: OpNames
    """Operation names the single user of the op's first result may have, e.g. tensor.expand_shape."""


class ProducerMatch(MatcherKind):
    """Requires operand ``operand`` of the op to be the result of an op named one of
    ``names`` (not a block argument). Emits ``transform.get_operand``,
    ``transform.get_defining_op`` and ``transform.match.operation_name``. Use it inside
    :class:`AllOf`, e.g. to configure an LHS pack only where it is alone in its dispatch
    (its source read from the dispatch's input), not where IREE fused it after a producer
    (an unpack and a GELU), whose loops a pack's tiles do not fit::

        AllOf(matchers=[PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[4, 1]),
                        ProducerMatch(names="iree_tensor_ext.dispatch.tensor.load")])
    """

    template: ClassVar[Optional[str]] = "matchers/producer.mlir.j2"

    kind: Literal["producer"] = "producer"
    """The discriminator: get_operand, get_defining_op, then operation_name on the producer."""
    operand: OperandIndex = 0
    """Index of the operand whose producer is checked (transform.get_operand %op[operand])."""
    names: OpNames
    """Operation names the producer may have, e.g. iree_tensor_ext.dispatch.tensor.load."""


class PackMatch(MatcherKind):
    """Matches a ``linalg.pack`` (or, with ``op="unpack"``, a ``linalg.unpack``) by its
    layout: element type, rank of the unpacked tensor, inner dims and tiles and outer
    permutation (a pack with or without a padding value; sizes are free). Emits
    ``transform.iree.match.cast_compatible_dag_from_root`` with that op as the pattern,
    e.g. for the LHS pack of a 6x16x1 mmt4d::

        PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[6, 1])

    matches ``linalg.pack %a inner_dims_pos = [0, 1] inner_tiles = [6, 1] : tensor<?x?xf32>
    -> tensor<?x?x6x1xf32>`` but not the RHS pack (inner tiles [16, 1]). The op's loops are
    the outer dims of a pack and the result dims of an unpack (``unpacked_rank`` of them).
    """

    template: ClassVar[Optional[str]] = "matchers/pack_op.mlir.j2"

    kind: Literal["pack_op"] = "pack_op"
    """The discriminator: a cast_compatible_dag_from_root matcher on one linalg.pack / linalg.unpack."""
    op: Literal["pack", "unpack"] = "pack"
    """Which op: pack (linalg.pack) or unpack (linalg.unpack)."""
    element_type: ElementType
    """Element type of the packed and unpacked tensors."""
    inner_dims_pos: Indices
    """inner_dims_pos of the op: the unpacked dims that are tiled."""
    inner_tiles: Sizes
    """inner_tiles of the op: one tile size per entry of inner_dims_pos."""
    outer_dims_perm: Optional[Indices] = None
    """outer_dims_perm of the op (None: no permutation)."""
    unpacked_rank: Rank = 2
    """Rank of the unpacked tensor (the op's loop count)."""

    @model_validator(mode="after")
    def _check(self) -> "PackMatch":
        if not self.inner_tiles or len(self.inner_tiles) != len(self.inner_dims_pos):
            raise problem(
                "inner_tiles",
                f"one tile per entry of inner_dims_pos ({len(self.inner_dims_pos)})",
                list(self.inner_tiles),
            )
        for i, tile in enumerate(self.inner_tiles):
            if tile < 1:
                raise problem(f"inner_tiles[{i}]", "a positive tile size", tile)
        rank = self.unpacked_rank
        if len(set(self.inner_dims_pos)) != len(self.inner_dims_pos) or not all(0 <= d < rank for d in self.inner_dims_pos):
            raise problem(
                "inner_dims_pos",
                f"distinct dims of the rank-{rank} unpacked tensor (0..{rank - 1})",
                list(self.inner_dims_pos),
            )
        if self.outer_dims_perm is not None:
            check_permutation("outer_dims_perm", self.outer_dims_perm, rank)
        return self

    def unpacked_type(self) -> str:
        return "tensor<" + "?x" * self.unpacked_rank + f"{self.element_type}>"

    def packed_type(self) -> str:
        tiles = "".join(f"{t}x" for t in self.inner_tiles)
        return "tensor<" + "?x" * self.unpacked_rank + tiles + f"{self.element_type}>"

    def operand_types(self) -> tuple[str, str]:
        """(source type, result type) of the op."""
        if self.op == "pack":
            return self.unpacked_type(), self.packed_type()
        return self.packed_type(), self.unpacked_type()

    def alternatives(self) -> list[dict[str, Any]]:
        if self.op == "unpack":
            return [{"padding": False}]
        return [{"padding": True}, {"padding": False}]

    def loop_count(self) -> Optional[int]:
        return self.unpacked_rank


__all__ = [
    "AffineMapText",
    "AttentionMatch",
    "ConsumerMatch",
    "ContractionMatch",
    "ConvolutionMatch",
    "DagMatch",
    "DimConstraint",
    "Dims",
    "ElementType",
    "FunctionMatch",
    "NoLoweringConfigMatch",
    "OpNameMatch",
    "OperandMatch",
    "PackMatch",
    "ProducerMatch",
    "TensorTypeText",
]
