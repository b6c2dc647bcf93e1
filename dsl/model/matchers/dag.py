"""Matchers on a pattern DAG of payload ops (``cast_compatible_dag_from_root``): a
written pattern, or the typed form for one pack or unpack."""

from __future__ import annotations

from typing import ClassVar, Literal, Optional

from pydantic import model_validator

from ..base import Described, Indices, Rank, Sizes, check_permutation, problem
from ..element_types import ElementType
from ..kinds import MatcherKind
from ..mlir_text import matcher_module, parse_problem, rename_values


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
            raise problem(
                "pattern", f"a pattern that parses and verifies with IREE 3.13 ({found})", Described("the pattern")
            )
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
        if len(set(self.inner_dims_pos)) != len(self.inner_dims_pos) or not all(
            0 <= d < rank for d in self.inner_dims_pos
        ):
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

    def alternatives(self) -> list[dict[str, object]]:
        if self.op == "unpack":
            return [{"padding": False}]
        return [{"padding": True}, {"padding": False}]

    def loop_count(self) -> Optional[int]:
        return self.unpacked_rank
