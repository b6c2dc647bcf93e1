"""Graph-level data layout: the preprocessing spec (``--iree-preprocessing-transform-spec-filename``).

A :class:`DataLayout` rewrites each matched op, in this order:

1. ``generalize`` -> ``transform.structured.generalize`` (named op to ``linalg.generic``);
2. ``interchange`` -> ``transform.structured.interchange iterator_interchange = [..]``
   (needs a ``linalg.generic``: set ``generalize`` for named ops);
   ``propagate_reshapes`` -> ``transform.apply_patterns.iree.bubble_expand`` on the
   enclosing function: a ``tensor.expand_shape`` of the op's result folds into the op,
   which then produces the expanded shape (a consumer that reads it through a permuted
   map, e.g. BERT's head split, can then join the op's dispatch);
   ``consumer_interchange`` -> ``transform.structured.interchange`` on every consumer of
   the op's result (each must be a ``linalg.generic`` with that many loops), so that a
   consumer that reads the result through a permutation reads it through the identity;
3. ``pack`` -> ``transform.structured.pack_greedily`` (:class:`PackGreedily`) or
   ``transform.structured.pack packed_sizes = [..]`` (:class:`Pack`);
4. ``pack_transposes`` -> ``transform.structured.pack_transpose`` on the pack of an
   operand (``lhs``/``rhs``) or on the unpack of the ``result``;
5. ``specialize`` -> ``transform.structured.specialize`` (e.g. the packed generic
   becomes ``linalg.mmt4d`` when the RHS is packed transposed);
6. ``lower_packs`` -> ``transform.structured.lower_pack`` / ``lower_unpack``.

Example::

    DataLayout(name="mm_pack", pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]),
               pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
               specialize=True)

renders (inside the action sequence)::

    %packed = transform.structured.pack_greedily %op matmul_packed_sizes = [8, 32, 1]
        matmul_inner_dims_order = [0, 1, 2] : (!transform.any_op) -> !transform.op<"linalg.generic">
    %rhs_pack = transform.get_producer_of_operand %packed[1] : ...
    ... = transform.structured.pack_transpose %rhs_pack with_compute_op(%packed) outer_perm = [1, 0] ...
    %special = transform.structured.specialize %t1 : ...
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Optional, Union

from pydantic import Field, model_validator

from .base import StrategyModel, SymbolName, check_non_negative, check_permutation, problem
from .kinds import Backend, Injection, StrategyKind


class PackGreedily(StrategyModel):
    """``transform.structured.pack_greedily``: packs the (m, n, k) dims of any contraction-like op.

    ``matmul_packed_sizes[i] = 0`` leaves dim i unpacked; a non-zero
    ``matmul_padded_sizes_next_multiple_of[i]`` pads dim i instead (at most one of the
    two per dim). ``matmul_inner_dims_order`` permutes the inner tiles of (m, n, k).
    """

    kind: Literal["pack_greedily"] = "pack_greedily"
    matmul_packed_sizes: tuple[int, int, int]
    matmul_padded_sizes_next_multiple_of: Optional[tuple[int, int, int]] = None
    matmul_inner_dims_order: tuple[int, int, int] = (0, 1, 2)

    @model_validator(mode="after")
    def _check(self) -> "PackGreedily":
        check_non_negative("matmul_packed_sizes", self.matmul_packed_sizes)
        check_permutation("matmul_inner_dims_order", self.matmul_inner_dims_order, 3)
        padded = self.matmul_padded_sizes_next_multiple_of
        if padded is not None:
            check_non_negative("matmul_padded_sizes_next_multiple_of", padded)
            for i, (size, multiple) in enumerate(zip(self.matmul_packed_sizes, padded)):
                if size and multiple:
                    raise problem(
                        f"matmul_padded_sizes_next_multiple_of[{i}]",
                        f"0 because matmul_packed_sizes[{i}] = {size} already packs this dim "
                        "(at most one of packed size / padded multiple per dim)",
                        multiple,
                    )
        if not any(self.matmul_packed_sizes) and not (padded and any(padded)):
            raise problem(
                "matmul_packed_sizes",
                "at least one non-zero packed size (or a padded multiple)",
                list(self.matmul_packed_sizes),
            )
        return self


class Pack(StrategyModel):
    """``transform.structured.pack packed_sizes = [..]``: one size per loop of the op, 0 = not packed."""

    kind: Literal["pack"] = "pack"
    packed_sizes: tuple[int, ...]

    @model_validator(mode="after")
    def _check(self) -> "Pack":
        check_non_negative("packed_sizes", self.packed_sizes)
        if not any(self.packed_sizes):
            raise problem("packed_sizes", "at least one non-zero packed size", list(self.packed_sizes))
        return self


PackKind = Annotated[Union[PackGreedily, Pack], Field(discriminator="kind")]


class PackTranspose(StrategyModel):
    """``transform.structured.pack_transpose``: permutes the outer and/or inner dims of the
    pack feeding ``operand`` (``lhs``/``rhs``) or of the unpack of the ``result``."""

    operand: Literal["lhs", "rhs", "result"]
    outer_perm: Optional[tuple[int, ...]] = None
    inner_perm: Optional[tuple[int, ...]] = None

    @model_validator(mode="after")
    def _check(self) -> "PackTranspose":
        if self.outer_perm is None and self.inner_perm is None:
            raise problem("outer_perm", "an outer_perm and/or an inner_perm", None)
        if self.outer_perm is not None:
            check_permutation("outer_perm", self.outer_perm)
        if self.inner_perm is not None:
            check_permutation("inner_perm", self.inner_perm)
        if self.operand == "result" and self.outer_perm is not None:
            raise problem(
                "outer_perm",
                "no outer_perm for the result (the unpack takes only inner_perm)",
                list(self.outer_perm),
            )
        return self

    @property
    def operand_index(self) -> int:
        return {"lhs": 0, "rhs": 1, "result": 2}[self.operand]


class DataLayout(StrategyKind):
    """A graph-level layout strategy; see the module docstring for the emitted ops."""

    injection: ClassVar[Injection] = Injection.PREPROCESSING
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU, Backend.ROCM})
    template: ClassVar[str] = "strategies/data_layout.mlir.j2"

    kind: Literal["data_layout"] = "data_layout"
    name: SymbolName
    generalize: bool = False
    interchange: Optional[tuple[int, ...]] = None
    propagate_reshapes: bool = False
    consumer_interchange: Optional[tuple[int, ...]] = None
    pack: Optional[PackKind] = None
    pack_transposes: tuple[PackTranspose, ...] = ()
    specialize: bool = False
    lower_packs: bool = False

    @model_validator(mode="after")
    def _check(self) -> "DataLayout":
        if self.interchange is not None:
            check_permutation("interchange", self.interchange)
        if self.consumer_interchange is not None:
            check_permutation("consumer_interchange", self.consumer_interchange)
        if self.propagate_reshapes and not self.generalize:
            raise problem(
                "generalize",
                "True when propagate_reshapes is set (reshapes fold only into a linalg.generic)",
                False,
            )
        for field in ("propagate_reshapes", "consumer_interchange"):
            if getattr(self, field) and self.pack is not None:
                raise problem(
                    field,
                    "no 'pack' in the same strategy (after packing, the op's consumer is the "
                    "unpack); use a separate rule",
                    getattr(self, field),
                )
        if self.pack is None:
            for field in ("pack_transposes", "specialize", "lower_packs"):
                if getattr(self, field):
                    raise problem(field, "a 'pack' to act on (it is None)", getattr(self, field))
        operands = [t.operand for t in self.pack_transposes]
        for i, operand in enumerate(operands):
            if operands.index(operand) != i:
                raise problem(
                    f"pack_transposes[{i}].operand",
                    "each operand transposed at most once (merge the permutations)",
                    operand,
                )
        if isinstance(self.pack, Pack) and self.lower_packs and not all(self.pack.packed_sizes):
            raise problem(
                "lower_packs",
                "False unless every loop is packed (with a partial 'pack' tdsl cannot tell "
                "which operands get packs); use pack_greedily",
                True,
            )
        if self.specialize and self.lower_packs:
            raise problem(
                "lower_packs",
                "False when specialize is set (lowering the packs undoes the packed form)",
                True,
            )
        if not (self.generalize or self.interchange or self.pack or self.consumer_interchange):
            raise problem("pack", "at least one of generalize, interchange, consumer_interchange or pack", None)
        return self

    def packed_operands(self) -> list[int]:
        """Operand indices (0 lhs, 1 rhs, 2 result) that the pack step packs."""
        if isinstance(self.pack, PackGreedily):
            sizes = self.pack.matmul_packed_sizes
            padded = self.pack.matmul_padded_sizes_next_multiple_of or (0, 0, 0)
            m, n, k = (bool(a or b) for a, b in zip(sizes, padded))
            return [i for i, used in enumerate((m or k, k or n, m or n)) if used]
        return [0, 1, 2]

    def loops(self) -> Optional[tuple[str, int]]:
        """(field, loop count) when this strategy fixes the op's loop count."""
        if self.interchange is not None:
            return "interchange", len(self.interchange)
        if isinstance(self.pack, Pack):
            return "pack.packed_sizes", len(self.pack.packed_sizes)
        return None
