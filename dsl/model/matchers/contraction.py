"""The contraction matcher (``transform.iree.match.contraction``) and its operand layouts."""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, Literal, Optional, get_args

from pydantic import model_validator

from ...errors import StrategyError
from ..base import MAX_RANK, Size, problem
from ..element_types import ElementType
from ..kinds import LoopShape, MatcherKind
from .dims import (
    DYNAMIC,
    AffineMapText,
    Dims,
    check_maps,
    check_sequence_count,
    dim_alternatives,
    group_rank,
    map_dims,
    static,
)

OperandLayout = Literal["mk_kn", "mk_nk", "km_kn", "km_nk", "k_kn", "k_nk"]


def maps_loop_shape(maps: Optional[tuple[str, ...]]) -> Optional[LoopShape]:
    """The loop roles a contraction's three indexing ``maps`` imply (b: all three, m: lhs
    and result, n: rhs and result, k: lhs and rhs), when each map is a projected permutation."""
    if maps is None:
        return None
    read = [map_dims(m) for m in maps]
    if any(r is None for r in read):
        return None
    operands = tuple(r[1] for r in read if r is not None)
    count = read[0][0] if read[0] is not None else 0
    roles = []
    for d in range(count):
        use = (d in operands[0], d in operands[1], d in operands[2])
        role = {
            (True, True, True): "b",
            (True, False, True): "m",
            (False, True, True): "n",
            (True, True, False): "k",
        }.get(use)
        if role is None:
            return None
        roles.append(role)
    return LoopShape.of(tuple(roles), (operands[0], operands[1], operands[2]), "maps")


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
    selects it and the plain matmul of the same m, n, k alike (tests/strategies/test_unit_batch.py).

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
    batch: Dims = None
    """Batch dim sizes (transform.iree.match.dims_equal %batch): None any, a list, or one_of lists."""
    m: Dims = None
    """M dim sizes (transform.iree.match.dims_equal %m): None any, a list, or one_of lists."""
    n: Dims = None
    """N dim sizes (transform.iree.match.dims_equal %n): None any, a list, or one_of lists."""
    k: Dims = None
    """K dim sizes (transform.iree.match.dims_equal %k): None any, a list, or one_of lists."""

    GROUPS: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k")

    @model_validator(mode="after")
    def _sequences(self) -> "ContractionMatch":
        check_sequence_count(
            [(g, len(dim_alternatives(getattr(self, g)))) for g in self.GROUPS],
            "one_of alternatives of batch, m, n and k",
        )
        return self

    def sequence_count(self) -> int:
        return math.prod(len(dim_alternatives(getattr(self, g))) for g in self.GROUPS)

    @model_validator(mode="after")
    def _maps(self) -> "ContractionMatch":
        if self.maps is not None:
            if self.operand_layout is not None:
                raise problem("maps", "None when operand_layout is set (it fixes the maps)", list(self.maps))
            check_maps("maps", self.maps, (3,), "lhs, rhs and result")
            for field in ("k_min", "size_max", "loop_order"):
                if getattr(self, field) is not None:
                    raise problem(field, "None with maps (use an operand matcher for bounds)", getattr(self, field))
        return self

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
        nb = group_rank(self.batch) or 0
        layout = self.operand_layout or "mk_kn"
        lhs_m = nb + layout[:2].index("m")
        rhs_n = nb + layout[3:].index("n")
        return [(0, lhs_m), (0, self.lhs_k_dim()), (1, rhs_n)]

    def lhs_k_dim(self) -> int:
        """The lhs dimension that K indexes (needs ``operand_layout``)."""
        nb = group_rank(self.batch) or 0
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
                rank = group_rank(getattr(self, group))
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
            rank = group_rank(self.batch)
            if rank is None or rank > 1:
                raise problem(
                    "batch",
                    "an exact batch ([] or one dimension) when operand_layout is set",
                    "any" if self.batch is None else [list(a) for a in self.batch],
                )
            for group in ("m", "n", "k"):
                if group == "m" and self.operand_layout.startswith("k_"):
                    continue
                if group_rank(getattr(self, group)) not in (None, 1):
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
        nb = group_rank(self.batch) or 0
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

    def alternatives(self) -> list[dict[str, object]]:
        groups = self.GROUPS
        combos = itertools.product(*(dim_alternatives(getattr(self, g)) for g in groups))
        return [dict(zip(groups, combo)) for combo in combos]

    def loop_roles(self) -> Optional[tuple[str, ...]]:
        """'b'/'m'/'n'/'k' per loop when every group has an exact rank: in ``loop_order`` if
        given, else in the order linalg's named contractions generalize to (batch, m, n, k).

        IREE's matcher cannot check loop order, so ``loop_order`` is the author's statement
        about the payload (e.g. ``nmk`` for an NCHW 1x1 convolution collapsed to a matmul);
        tile lists follow it and tdsl's resource checks rely on it.
        """
        from_maps = maps_loop_shape(self.maps)
        if from_maps is not None:
            return from_maps.roles
        ranks = [group_rank(getattr(self, g)) for g in ("batch", "m", "n", "k")]
        if any(r is None for r in ranks):
            return None
        if self.loop_order is not None:
            if any(self.loop_order.count(letter) != rank for letter, rank in zip("bmnk", ranks)):
                return None
            return tuple(self.loop_order)
        return tuple(role for role, r in zip("bmnk", ranks) for _ in range(r or 0))

    def loop_shape(self) -> Optional[LoopShape]:
        from_maps = maps_loop_shape(self.maps)
        if from_maps is not None:
            return from_maps
        maps = self.indexing_maps()
        if maps is not None:
            nb = group_rank(self.batch) or 0
            roles = ("b",) * nb + (
                ("n", "k") if self.operand_layout and self.operand_layout.startswith("k_") else ("m", "n", "k")
            )
            return LoopShape.of(
                roles, (tuple(maps[0]), tuple(maps[1]), tuple(maps[2])), f"operand_layout {self.operand_layout!r}"
            )
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
            sizes.append(static(dims[0][j]) if dims is not None and len(dims) == 1 and j < len(dims[0]) else None)
        return sizes

    def problem_sizes(self) -> Optional[tuple[int, int, int]]:
        """(M, N, K) products when m, n and k are each one exact alternative of static sizes."""
        sizes = []
        for group in ("m", "n", "k"):
            dims = getattr(self, group)
            if dims is None or len(dims) != 1 or DYNAMIC in dims[0]:
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
        ranks = [group_rank(getattr(self, g)) for g in ("batch", "m", "n", "k")]
        return None if any(r is None for r in ranks) else sum(r for r in ranks if r is not None)


def contraction_with_layout(fields: dict[str, object], maps: tuple[str, ...]) -> Optional[ContractionMatch]:
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
