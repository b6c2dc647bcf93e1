"""Graph-level data layout: the preprocessing spec (``--iree-preprocessing-transform-spec-filename``).

A :class:`DataLayout` rewrites each matched op, in this order:

1. ``generalize`` -> ``transform.structured.generalize`` (named op to ``linalg.generic``);
2. ``interchange`` -> ``transform.structured.interchange iterator_interchange = [..]``
   (needs a ``linalg.generic``: set ``generalize`` for named ops);
   ``propagate_reshapes`` -> ``transform.apply_patterns.iree.bubble_expand`` on the
   enclosing function: a ``tensor.expand_shape`` of the op's result folds into the op,
   which then produces the expanded shape (a consumer that reads it through a permuted
   map, e.g. BERT's head split, can then join the op's dispatch);
   ``consumer_interchange`` -> ``transform.structured.interchange`` on each
   ``linalg.generic`` consumer of the op's result that has that many loops (others are
   left alone), so that a consumer that reads the result through a permutation reads it
   through the identity. Both run in the entry sequence after the rule's
   ``foreach_match``, on the ops the rule marked (run inside the match walk, the pattern
   rewrite deleted ops the walk visited next and crashed iree-compile);
   ``fold_unit_dims`` (needs ``generalize``) -> ``transform.apply_patterns.linalg.
   fold_unit_extent_dims_via_reshapes`` on the enclosing function, deferred like those two:
   the op loses its unit loops behind ``tensor.collapse_shape`` / ``expand_shape`` (a
   batch-1 ``linalg.batch_matmul``, as ONNX MatMul of a 3-D activation gives it, becomes a
   2-D matmul generic), and the steps below run on the folded op. The patterns fold the unit
   loops of every ``linalg.generic`` of that function (IREE folds them later anyway), so a
   later rule sees those generics folded. The rule's matcher must fix the sizes of every
   loop (batch 1, m, n and k other than 1), so that the folded op's loops are known;
3. ``pack`` -> ``transform.structured.pack_greedily`` (:class:`PackGreedily`) or
   ``transform.structured.pack packed_sizes = [..]`` (:class:`Pack`);
4. ``pack_transposes`` -> ``transform.structured.pack_transpose`` on the pack of an
   operand (``lhs``/``rhs``) or on the unpack of the ``result``;
5. ``specialize`` -> ``transform.structured.specialize`` (e.g. the packed generic
   becomes ``linalg.mmt4d`` when the RHS is packed transposed);
6. ``lower_packs`` -> ``transform.structured.lower_pack`` / ``lower_unpack``;
   ``lower_unpack`` -> ``transform.structured.lower_unpack`` on the result's unpack alone:
   where the result is packed on its innermost dim only (e.g. ``matmul_packed_sizes =
   [0, 16, 0]``: RHS panels of 16 columns, LHS and result unpacked), that is a
   ``tensor.collapse_shape`` IREE folds, so the packed op writes the result in place (no
   unpack dispatch), while the operands' packs stay packs (a pack of a constant runs at
   compile time).

``fuse_head_split`` acts on no op but the contraction of one head-split chain, for a rule
whose matcher selects a transpose (``linalg.transpose``, as exporters write it): the chain
is ``linalg.matmul`` or a batch-1 ``linalg.batch_matmul`` (ONNX MatMul of a 3-D activation)
-> an elementwise ``linalg.generic`` that reads its result as first input (the bias add) ->
``tensor.expand_shape`` -> the matched transpose, each op the single user of the one before
(contraction and epilogue checked). The action runs ``transform.foreach_match
restrict_root`` on the matched op with one matcher per contraction form (backward from the
transpose: ``get_operand`` / ``get_defining_op``, ``match.operation_name``,
``match.structured``) and generalizes the contraction it yields
(``transform.structured.generalize``); IREE 3.13 then folds the reshape into it and puts the
epilogue and the transpose in its dispatch. Nothing else in the function is rewritten (no
pattern runs on the function); a matched op that reads no such chain is left as it is and
gets no marker (the contraction carries the markers).

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
from pydantic_core import PydanticCustomError

from .base import (
    Described,
    Indices,
    Int64,
    Size,
    Sizes,
    StrategyModel,
    StrictBool,
    SymbolName,
    check_non_negative,
    check_permutation,
    problem,
)
from .kinds import Backend, Injection, LoopShape, MatcherKind, StrategyKind
from .matchers import AttentionMatch, ContractionMatch, ConvolutionMatch

OPERANDS = ("lhs", "rhs", "result")
# The fields fuse_head_split excludes, with their unset value as a message spells it.
_NOT_WITH_HEAD_SPLIT = (
    ("generalize", "False"),
    ("interchange", "None"),
    ("propagate_reshapes", "False"),
    ("consumer_interchange", "None"),
    ("pack", "None"),
    ("pack_transposes", "no pack_transposes"),
    ("specialize", "False"),
    ("lower_packs", "False"),
    ("lower_unpack", "False"),
    ("fold_unit_dims", "False"),
)
# The fields fold_unit_dims excludes (they act on the unfolded loops or the op's consumers).
_NOT_WITH_FOLD = (("interchange", "None"), ("propagate_reshapes", "False"), ("consumer_interchange", "None"))
# The loop roles each operand of a contraction is indexed by.
_OPERAND_ROLES = ("bmk", "bkn", "bmn")
# linalg.mmt4d / batch_mmt4d: the roles of each operand's outer and inner dims.
_MMT4D = (("mk", "mk"), ("nk", "nk"), ("mn", "mn"))


def _dims_text(outer: list[str], inner: list[str]) -> str:
    """``[N1, K1, N0, K0]``: a packed operand's outer then inner dims by role."""
    names = ["B" if r == "b" else f"{r.upper()}1" for r in outer] + [f"{r.upper()}0" for r in inner]
    return "[" + ", ".join(names) + "]"


class PackGreedily(StrategyModel):
    """``transform.structured.pack_greedily``: packs the (m, n, k) dims of any contraction-like op.

    ``matmul_packed_sizes[i] = 0`` leaves dim i unpacked; a non-zero
    ``matmul_padded_sizes_next_multiple_of[i]`` pads dim i instead (at most one of the
    two per dim). ``matmul_inner_dims_order`` permutes the inner tiles of (m, n, k).
    """

    kind: Literal["pack_greedily"] = "pack_greedily"
    """The discriminator: emits transform.structured.pack_greedily."""
    matmul_packed_sizes: tuple[Size, Size, Size]
    """Inner tile of the (m, n, k) dims (matmul_packed_sizes); 0 leaves a dim unpacked."""
    matmul_padded_sizes_next_multiple_of: Optional[tuple[Size, Size, Size]] = None
    """Per (m, n, k) dim: pad to the next multiple instead of packing (matmul_padded_sizes_next_multiple_of)."""
    matmul_inner_dims_order: tuple[Int64, Int64, Int64] = (0, 1, 2)
    """Order of the inner tiles of (m, n, k) (matmul_inner_dims_order), a permutation of [0, 1, 2]."""

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

    def packed_roles(self) -> str:
        """The packed dims of (m, n, k), in the order of their inner tiles: ``"mnk"`` for
        the default ``matmul_inner_dims_order``, ``"nm"`` when only m and n are packed
        with order [1, 0, 2]."""
        padded = self.matmul_padded_sizes_next_multiple_of or (0, 0, 0)
        return "".join("mnk"[i] for i in self.matmul_inner_dims_order if self.matmul_packed_sizes[i] or padded[i])


class Pack(StrategyModel):
    """``transform.structured.pack packed_sizes = [..]``: one size per loop of the op, 0 = not packed."""

    kind: Literal["pack"] = "pack"
    """The discriminator: emits transform.structured.pack packed_sizes = [..]."""
    packed_sizes: Sizes
    """One inner tile size per loop of the op (packed_sizes); 0 leaves a loop unpacked."""

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
    """Which pack (lhs, rhs) or unpack (result) transform.structured.pack_transpose permutes."""
    outer_perm: Optional[Indices] = None
    """Permutation of the packed operand's outer dims (outer_perm)."""
    inner_perm: Optional[Indices] = None
    """Permutation of the packed operand's inner tile dims (inner_perm)."""

    @model_validator(mode="after")
    def _check(self) -> "PackTranspose":
        if self.outer_perm is None and self.inner_perm is None:
            raise problem("outer_perm", "an outer_perm and/or an inner_perm", None)
        if self.outer_perm is not None:
            check_permutation("outer_perm", self.outer_perm)
        if self.inner_perm is not None:
            check_permutation("inner_perm", self.inner_perm)
        return self

    @property
    def operand_index(self) -> int:
        return {"lhs": 0, "rhs": 1, "result": 2}[self.operand]

    def spelled(self) -> str:
        """``{operand: rhs, outer_perm: [1, 0]}``: how a message shows it."""
        parts = [f"operand: {self.operand}"]
        if self.outer_perm is not None:
            parts.append(f"outer_perm: {list(self.outer_perm)}")
        if self.inner_perm is not None:
            parts.append(f"inner_perm: {list(self.inner_perm)}")
        return "{" + ", ".join(parts) + "}"


def _matmul_operands(roles: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The loops of each operand in linalg.(batch_)matmul's layout (b m k, b k n, b m n)."""
    of = [tuple(loop for role in order for loop, r in enumerate(roles) if r == role) for order in ("bmk", "bkn", "bmn")]
    return of[0], of[1], of[2]


def _mmt4d_packed(roles: tuple[str, ...], tiles: list[list[int]]) -> bool:
    """Specialize makes linalg.(batch_)mmt4d of the packed op: one m, n, k loop (at most one
    batch), each packed (``tiles``: each operand's packed loops); else it stays a generic."""
    if sorted(r for r in roles if r != "b") != ["k", "m", "n"] or roles.count("b") > 1:
        return False
    return sorted(roles[loop] for loop in tiles[0] + tiles[1] + tiles[2]) == sorted("mkmnkn")


class DataLayout(StrategyKind):
    """A graph-level layout strategy; see the module docstring for the emitted ops."""

    injection: ClassVar[Injection] = Injection.PREPROCESSING
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU, Backend.ROCM})
    template: ClassVar[str] = "strategies/data_layout.mlir.j2"

    kind: Literal["data_layout"] = "data_layout"
    """The discriminator: a graph-level layout strategy, rendered into the preprocessing spec."""
    name: SymbolName
    """The strategy's name: its action sequence symbol, locations and the tdsl.layout marker."""
    generalize: StrictBool = False
    """Emit transform.structured.generalize first (a named op becomes a linalg.generic)."""
    interchange: Optional[Indices] = None
    """transform.structured.interchange iterator_interchange: a permutation of the op's loops."""
    propagate_reshapes: StrictBool = False
    """Fold a tensor.expand_shape of the result into the op (transform.apply_patterns.iree.bubble_expand on the function)."""
    consumer_interchange: Optional[Indices] = None
    """Interchange each linalg.generic consumer of the result that has this many loops (others are left alone)."""
    pack: Optional[PackKind] = None
    """How to pack the op: pack_greedily or pack."""
    pack_transposes: tuple[PackTranspose, ...] = ()
    """transform.structured.pack_transpose of the lhs/rhs packs or the result unpack, in order."""
    specialize: StrictBool = False
    """transform.structured.specialize of the packed generic (e.g. to linalg.mmt4d)."""
    lower_packs: StrictBool = False
    """transform.structured.lower_pack / lower_unpack on the packs and the unpack."""
    lower_unpack: StrictBool = False
    """transform.structured.lower_unpack on the result's unpack alone (the packs stay packs)."""
    fuse_head_split: StrictBool = False
    """The matched transpose reads a head split (contraction -> epilogue -> expand_shape): generalize that contraction."""
    fold_unit_dims: StrictBool = False
    """Fold the generalized op's unit loops (a batch of 1) before packing: transform.apply_patterns.linalg.fold_unit_extent_dims_via_reshapes on its function."""

    @model_validator(mode="after")
    def _check(self) -> "DataLayout":
        if self.fuse_head_split:
            self._refuse_with(
                "fuse_head_split",
                _NOT_WITH_HEAD_SPLIT,
                "the matched op is the transpose; the strategy rewrites only the contraction it reads",
            )
            return self
        self._check_steps_before_pack()
        self._check_pack_steps()
        if not (self.generalize or self.interchange or self.pack or self.consumer_interchange):
            raise problem(
                "pack", "at least one of generalize, interchange, consumer_interchange, pack or fuse_head_split", None
            )
        if isinstance(self.pack, PackGreedily):
            packed = self.pack.packed_roles()
            for i, t in enumerate(self.pack_transposes):
                tiles = [r for r in packed if r in _OPERAND_ROLES[t.operand_index]]
                self._check_transpose(i, t, None, tiles)
        return self

    def _check_steps_before_pack(self) -> None:
        """The interchanges, propagate_reshapes and fold_unit_dims: well formed, and not with
        what they cannot go with."""
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
        if self.fold_unit_dims:
            if not self.generalize:
                raise problem(
                    "generalize",
                    "True when fold_unit_dims is set (unit loops fold only out of a linalg.generic)",
                    False,
                )
            self._refuse_with(
                "fold_unit_dims",
                _NOT_WITH_FOLD,
                "the folded op has other loops than the matched one; use a separate rule",
            )
        for field in ("propagate_reshapes", "consumer_interchange"):
            if getattr(self, field) and self.pack is not None:
                raise problem(
                    field,
                    "no 'pack' in the same strategy (after packing, the op's consumer is the "
                    "unpack); use a separate rule",
                    getattr(self, field),
                )

    def _check_pack_steps(self) -> None:
        """pack_transposes, specialize, lower_packs and lower_unpack: each with a pack to act
        on, transposes at most once per operand, lowerings only where tdsl can tell what they
        lower."""
        if self.pack is None:
            for field in ("pack_transposes", "specialize", "lower_packs", "lower_unpack"):
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
        if self.lower_unpack:
            if self.lower_packs:
                raise problem("lower_unpack", "False when lower_packs is set (lower_packs lowers the unpack too)", True)
            if isinstance(self.pack, Pack) and not all(self.pack.packed_sizes):
                raise problem(
                    "lower_unpack",
                    "False unless every loop is packed (with a partial 'pack' tdsl cannot tell whether the "
                    "result gets an unpack); use pack_greedily",
                    True,
                )
            if 2 not in self.packed_operands():
                raise problem("lower_unpack", "False when the result is not packed (m and n packed sizes 0)", True)
        if self.specialize and self.lower_packs:
            raise problem(
                "lower_packs",
                "False when specialize is set (lowering the packs undoes the packed form)",
                True,
            )

    def _refuse_with(self, flag: str, fields: tuple[tuple[str, str], ...], why: str) -> None:
        """Raises on the first of ``fields`` (name, its unset value as a message spells it) set
        along with ``flag``."""
        for field, unset in fields:
            if getattr(self, field):
                raise problem(field, f"{unset} when {flag} is set ({why})", getattr(self, field))

    def _check_transpose(
        self, i: int, t: PackTranspose, rank: Optional[int], tiles: list[str], strategy: str = ""
    ) -> None:
        """``pack_transposes[i]`` fits a packed operand of ``rank`` outer dims (None: not
        known) whose inner tiles are the packed dims ``tiles``."""
        if not tiles:
            raise problem(
                f"pack_transposes[{i}].operand",
                "an operand that the pack step packs ("
                + (", ".join(OPERANDS[j] for j in self.packed_operands()) or "none")
                + f"); {self._pack_text()} packs no dim of the {t.operand}",
                t.operand,
                strategy=strategy,
            )
        if rank is not None and t.outer_perm is not None and len(t.outer_perm) != rank:
            raise problem(
                f"pack_transposes[{i}].outer_perm",
                f"a permutation of the {rank} outer dims of the packed {t.operand}: {list(range(rank))}",
                list(t.outer_perm),
                strategy=strategy,
            )
        if t.inner_perm is not None and len(t.inner_perm) != len(tiles):
            names = ", ".join(f"{r}0" for r in tiles)
            raise problem(
                f"pack_transposes[{i}].inner_perm",
                f"a permutation of the {len(tiles)} inner tiles of the packed {t.operand} ({names}): {list(range(len(tiles)))}",
                list(t.inner_perm),
                strategy=strategy,
            )

    def _pack_text(self) -> str:
        if isinstance(self.pack, PackGreedily):
            return f"matmul_packed_sizes {list(self.pack.matmul_packed_sizes)}"
        if isinstance(self.pack, Pack):
            return f"packed_sizes {list(self.pack.packed_sizes)}"
        return "no pack"

    def check_match(self, match: MatcherKind) -> None:
        """Where ``match`` fixes the contraction's loops: each pack transpose fits the rank
        and inner tiles of its packed operand, and ``specialize`` gets linalg.mmt4d's layout
        (the packed generic is specialized to linalg.mmt4d whatever its operand layout, and
        a wrong layout makes an invalid op). ``fuse_head_split`` needs a matcher of the
        transpose, not of a contraction, convolution or attention op."""
        leaves = tuple(getattr(match, "matchers", None) or (match,))  # an all_of's leaves
        if self.fuse_head_split and any(
            isinstance(m, (ContractionMatch, ConvolutionMatch, AttentionMatch)) for m in leaves
        ):
            raise problem(
                "fuse_head_split",
                "a rule whose matcher selects the transpose of the head split (e.g. a dag matcher of a "
                "linalg.transpose), not a contraction: the strategy finds the contraction from the transpose",
                True,
                strategy=self.name,
            )
        if self.specialize and match.selects_convolutions():
            raise problem(
                "specialize",
                "False for a convolution: a packed convolution is no named op, and IREE 3.13 fails "
                "('transform.structured.specialize failed to apply', then crashes reporting it)",
                True,
                strategy=self.name,
            )
        shape = match.loop_shape()
        if self.fold_unit_dims:
            shape = self._folded_shape(leaves, shape)
        if self.pack is None:
            return
        if shape is None:
            if self.specialize and self._packs_three_loops():
                raise self._unknown_layout()
            return
        loops = list(range(len(shape.roles)))
        if self.interchange is not None:
            if len(self.interchange) != len(loops):
                return  # the loop-count check reports it
            loops = [loops[p] for p in self.interchange]
        packed = self._packed_loops(shape, loops)
        if packed is None:
            return
        uses = [
            set(shape.operands[j])
            if shape.operands is not None
            else {loop for loop in loops if shape.roles[loop] in _OPERAND_ROLES[j]}
            for j in range(3)
        ]
        tiles = [[loop for loop in packed if loop in uses[j]] for j in range(3)]
        for i, t in enumerate(self.pack_transposes):
            j = t.operand_index
            self._check_transpose(i, t, shape.ranks[j], [shape.roles[loop] for loop in tiles[j]], self.name)
        if self.specialize and _mmt4d_packed(shape.roles, tiles):
            # Without operand_layout the matcher's op is taken in linalg.(batch_)matmul's layout.
            self._check_mmt4d(shape, shape.operands or _matmul_operands(shape.roles), tiles)

    def _unknown_layout(self) -> PydanticCustomError:
        return problem(
            "specialize",
            "a matcher that fixes the loops (a contraction matcher with batch, m, n and k, and operand_layout "
            "or maps, or op_name linalg.matmul / linalg.batch_matmul) when specialize may get a "
            "packed m, n and k: IREE 3.13 makes linalg.mmt4d of the packed op whatever its operands' layout, and "
            "another layout gives an invalid op ('linalg.mmt4d' op inferred input/output operand #1 ...), so "
            "pack_transposes must be checked against the layout",
            True,
            hint="set operand_layout (e.g. 'mk_kn') and batch on the matcher, or leave specialize out",
            strategy=self.name,
        )

    def _packs_three_loops(self) -> bool:
        """The pack step may pack an m, an n and a k loop (what specialize makes mmt4d of)."""
        if isinstance(self.pack, PackGreedily):
            return len(self.pack.packed_roles()) == 3
        return isinstance(self.pack, Pack) and sum(map(bool, self.pack.packed_sizes)) >= 3

    def _folded_shape(self, leaves: tuple[MatcherKind, ...], shape: Optional[LoopShape]) -> LoopShape:
        """The loops of the matched op once ``fold_unit_dims`` dropped its unit batch: the
        matcher must be a contraction matcher that fixes every loop's size, with a batch of 1
        and m, n and k loops of other sizes."""
        contraction = next((m for m in leaves if isinstance(m, ContractionMatch)), None)
        roles = shape.roles if shape is not None and contraction is not None else ()
        sizes = contraction.problem_dims(roles) if contraction is not None and roles else []
        batch = [size for size, role in zip(sizes, roles) if role == "b"]
        others = [size for size, role in zip(sizes, roles) if role != "b"]
        if shape is None or not sizes or None in sizes or not batch or any(b != 1 for b in batch) or 1 in others:
            found = "open sizes" if not sizes or None in sizes else f"loop sizes {sizes} (roles {''.join(roles)})"
            raise problem(
                "fold_unit_dims",
                "a rule whose contraction matcher fixes every loop size, with a batch of 1 and m, n, k "
                "other than 1 (e.g. ContractionMatch(batch=[1], m=[64], n=[256], k=[256], operand_layout='mk_kn')), "
                "so that the folded op's loops are known",
                Described(found),
                strategy=self.name,
            )
        kept = [loop for loop, role in enumerate(shape.roles) if role != "b"]
        renumber = {loop: i for i, loop in enumerate(kept)}
        operands = None
        if shape.operands is not None:
            folded = [tuple(renumber[loop] for loop in dims if loop in renumber) for dims in shape.operands]
            operands = (folded[0], folded[1], folded[2])
        return LoopShape.of(tuple(shape.roles[loop] for loop in kept), operands, shape.source)

    def _packed_loops(self, shape: LoopShape, loops: list[int]) -> Optional[list[int]]:
        """The loops the pack step packs, in the order of their inner tiles (None: unknown)."""
        if isinstance(self.pack, PackGreedily):
            innermost = {}
            for loop in loops:  # in loop order: the last loop of each role wins
                innermost[shape.roles[loop]] = loop
            if any(role not in innermost for role in "mnk"):
                missing = [role for role in "mnk" if role not in innermost]
                raise problem(
                    "pack",
                    "a contraction with m, n and k loops: pack_greedily packs the innermost of each",
                    Described(f"matched ops without {' or '.join(missing)} loops (roles {''.join(shape.roles)})"),
                    strategy=self.name,
                )
            return [innermost[role] for role in self.pack.packed_roles()]
        if isinstance(self.pack, Pack):
            if len(self.pack.packed_sizes) != len(loops):
                return None  # the loop-count check reports it
            return [loops[pos] for pos, size in enumerate(self.pack.packed_sizes) if size]
        return None

    def _check_mmt4d(self, shape: LoopShape, operands: tuple[tuple[int, ...], ...], tiles: list[list[int]]) -> None:
        roles = shape.roles
        given = {t.operand_index: t for t in self.pack_transposes}
        wrong: list[str] = []
        needed: list[PackTranspose] = []
        for j in range(3):
            outer = [roles[loop] for loop in operands[j]]
            inner = [roles[loop] for loop in tiles[j]]
            want_outer = ["b"] * roles.count("b") + list(_MMT4D[j][0])
            want_inner = list(_MMT4D[j][1])
            if outer != want_outer or inner != want_inner:
                needed.append(
                    PackTranspose(
                        operand=OPERANDS[j],
                        outer_perm=None if outer == want_outer else tuple(outer.index(r) for r in want_outer),
                        inner_perm=None if inner == want_inner else tuple(inner.index(r) for r in want_inner),
                    )
                )
            t = given.get(j)
            final_outer = [outer[p] for p in t.outer_perm] if t is not None and t.outer_perm is not None else outer
            final_inner = [inner[p] for p in t.inner_perm] if t is not None and t.inner_perm is not None else inner
            if final_outer != want_outer or final_inner != want_inner:
                wrong.append(f"{OPERANDS[j]} as {_dims_text(final_outer, final_inner)}")
        if not wrong:
            return
        want = "; ".join(
            f"{OPERANDS[j]} {_dims_text(['b'] * roles.count('b') + list(_MMT4D[j][0]), list(_MMT4D[j][1]))}"
            for j in range(3)
        )
        layout = shape.source or "linalg.matmul's layout (the matcher has no operand_layout)"
        raise problem(
            "pack_transposes",
            f"the transposes that give linalg.{'batch_' if 'b' in roles else ''}mmt4d's layout for specialize "
            f"({want}); with {layout} these pack the {', the '.join(wrong)}",
            Described("[" + ", ".join(t.spelled() for t in self.pack_transposes) + "]"),
            hint="use pack_transposes: [" + ", ".join(t.spelled() for t in needed) + "]",
            strategy=self.name,
        )

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
