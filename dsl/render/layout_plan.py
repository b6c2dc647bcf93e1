"""The plan of a :class:`~tdsl.model.layout.DataLayout` action: its steps in order, each with
the handles (names and types) it consumes and produces.

The matched op starts as ``%op`` (``!transform.any_op``); generalize / interchange /
specialize produce ``%generic`` / ``%interchanged`` / ``%specialized``, the pack
produces ``%packed0`` (a ``linalg.generic`` handle) and the i-th pack transpose
``%packed<i+1>``. :class:`LayoutPlan.result` is the handle the markers go on. Each step
names the macro of ``strategies/data_layout.mlir.j2`` that renders it; the transform ops
a field renders to are spelled by their declarations (:mod:`.transform_ops`). Emits no
text.

``propagate_reshapes`` and ``consumer_interchange`` rewrite ops besides the matched one (the
reshape after it, its consumers). Inside the ``transform.foreach_match`` walk that can erase
the op the walk visits next (IREE 3.13 then crashes, now and then, in the walk), so they
are :class:`Deferred`: the entry runs them after the rule's run, on the ops the action
marked with the rule's index, named ``%<symbol>_ops`` (the action's symbol keeps them
apart from other rules' handles in the entry).

``fold_unit_dims`` is deferred too (:class:`FunctionPatterns`: the unit-extent patterns run on
the whole enclosing function): the action only generalizes and marks the op; the entry then
folds the unit loops of the marked ops and runs the pack steps on each of them (a
``transform.foreach`` over ``ops`` that includes ``@<symbol>_packed``, a sequence with the
usual handle names that packs and marks its one op: :class:`PerOp`). The handles follow the
ops through the rewrite (the interpreter tracks a generic replaced by its folded copy).

``fuse_head_split`` plans a :class:`HeadSplit` instead of steps: matcher sequences
``@<symbol>_<form>`` (one per contraction form) that walk back from the matched transpose
to the contraction, and ``@<symbol>_fuse``, which generalizes it and marks it; the action
runs them with ``transform.foreach_match restrict_root`` on the matched op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

from ..model.layout import DataLayout, Pack, PackGreedily, PackTranspose
from ..targets import Target
from .plan import ActionPlan, Handle, Step, op_type
from .transform_ops import (
    GENERALIZE,
    INTERCHANGE,
    LOWER_PACK,
    LOWER_UNPACK,
    PACK,
    PACK_GREEDILY,
    PACK_TRANSPOSE,
    SPECIALIZE,
    SpelledOp,
)

GENERIC = op_type("linalg.generic")
PACK_TYPE = op_type("linalg.pack")
UNPACK = op_type("linalg.unpack")
PARAM = "!transform.any_param"
VALUE = "!transform.any_value"
I64 = "!transform.param<i64>"


@dataclass(frozen=True)
class OpStep(Step):
    """``result = <op> operand <attributes>``: a declared transform op (``op``, spelled by
    :mod:`.transform_ops`) on one handle; ``field`` is the DataLayout field it renders (its
    location): generalize, interchange, the pack, specialize."""

    macro: ClassVar[str] = "transform_op"
    op: SpelledOp
    operand: Handle
    result: Handle
    field: str


@dataclass(frozen=True)
class FunctionPatterns(Step):
    """Deferred: ``scope = transform.get_parent_op ops <{deduplicate, isolated_from_above}>``
    and the pattern set ``patterns`` on those functions; ``ops`` follows the rewritten ops.
    ``propagate_reshapes`` (``iree.bubble_expand``: a ``tensor.expand_shape`` of a marked
    op's result folds into it) and ``fold_unit_dims``
    (``linalg.fold_unit_extent_dims_via_reshapes``: each marked generic loses its unit loops
    behind ``tensor.collapse_shape`` / ``expand_shape``); ``field`` names the DataLayout
    field in the locations."""

    macro: ClassVar[str] = "function_patterns"
    ops: Handle
    scope: Handle
    field: str
    patterns: str


@dataclass(frozen=True)
class ConsumerInterchange(Step):
    """Deferred: ``consumers`` = the users of each marked op's first result (a
    ``transform.foreach`` over ``ops`` with block argument ``op``, yielding ``users``),
    ``unique`` = them without duplicates (``transform.merge_handles deduplicate``),
    ``generics = transform.select "linalg.generic" in unique``, then, in a
    ``transform.sequence generics failures(suppress)`` (block argument ``fitting``),
    ``result = transform.structured.interchange fitting`` (``interchange``, spelled).

    Only ``linalg.generic`` consumers with as many loops as the permutation are
    interchanged; any other consumer (the function's ``return``, a ``tensor.expand_shape``,
    a named op, a generic with another loop count) is left alone. A failing interchange
    would fail the rule, and IREE 3.13 crashes printing that diagnostic (its "when applied
    to this matching payload" note points at an op the rule erased)."""

    macro: ClassVar[str] = "consumer_interchange"
    ops: Handle
    op: Handle
    users: Handle
    consumers: Handle
    unique: Handle
    generics: Handle
    fitting: Handle
    result: Handle
    interchange: SpelledOp


@dataclass(frozen=True)
class PerOp:
    """Steps run on each of the deferred ops alone: the sequence ``@symbol`` (its operand
    ``%op``) runs ``steps`` and marks ``result``; the entry includes it once per op
    (``transform.foreach ops``, block argument ``op``)."""

    symbol: str
    op: Handle
    steps: tuple[Step, ...]
    result: Handle


@dataclass(frozen=True)
class Deferred:
    """What a DataLayout does after its run (see the module docstring): ``ops`` = the ops
    its action marked (``transform.structured.match`` of the rule-index marker), then
    ``steps``, then either ``per_op`` on each op (which marks it) or the markers again on
    ``ops`` (a rewrite drops them) through the params ``marker`` and ``rule``."""

    ops: Handle
    steps: tuple[Step, ...]
    marker: Handle
    rule: Handle
    per_op: Optional[PerOp] = None


@dataclass(frozen=True)
class TransposeResult(Step):
    """``unpack = transform.get_consumers_of_result compute[0]``, then
    ``results = transform.structured.pack_transpose unpack with_compute_op(compute)`` (``op``,
    spelled with its permutation)."""

    macro: ClassVar[str] = "transpose_result"
    index: int
    compute: Handle
    unpack: Handle
    results: tuple[Handle, ...]
    op: SpelledOp


@dataclass(frozen=True)
class TransposeOperand(Step):
    """``pack = transform.get_producer_of_operand compute[operand]``, then
    ``results = transform.structured.pack_transpose pack with_compute_op(compute)`` (``op``,
    spelled with its permutations)."""

    macro: ClassVar[str] = "transpose_operand"
    index: int
    compute: Handle
    operand: int
    pack: Handle
    results: tuple[Handle, ...]
    op: SpelledOp


@dataclass(frozen=True)
class LowerPack(Step):
    """``pack = transform.get_producer_of_operand compute[operand]``, then
    ``results = transform.structured.lower_pack pack`` (``op``)."""

    macro: ClassVar[str] = "lower_pack"
    op: SpelledOp
    compute: Handle
    operand: int
    pack: Handle
    results: tuple[Handle, ...]


@dataclass(frozen=True)
class LowerUnpack(Step):
    """``unpack = transform.get_consumers_of_result compute[0]``, then
    ``results = transform.structured.lower_unpack unpack`` (``op``)."""

    macro: ClassVar[str] = "lower_unpack"
    op: SpelledOp
    compute: Handle
    unpack: Handle
    results: tuple[Handle, ...]
    field: str = "lower_packs"
    """The DataLayout field it renders (its location): lower_packs or lower_unpack."""


@dataclass(frozen=True)
class ChainForm:
    """One contraction form of a head-split chain: the matcher sequence ``@symbol`` accepts a
    contraction named ``name``; with ``unit_batch`` its first loop (the batch) must have size 1."""

    symbol: str
    name: str
    unit_batch: bool


@dataclass(frozen=True)
class HeadSplit:
    """``fuse_head_split``: each matcher sequence of ``forms`` takes the matched transpose
    ``op`` and walks back: ``expand_in`` = its operand 0, ``expand`` = the op defining it (a
    ``tensor.expand_shape``); ``epilogue_in`` / ``epilogue`` the same from the expand (a
    ``linalg.generic`` with only parallel loops, checked in ``transform.match.structured``
    with block argument ``structured``, whose result has a single user: ``user`` inside,
    ``epilogue_user`` outside); ``contraction_in`` / ``contraction`` from the epilogue's
    first input (the form's op, its result's single user ``contraction_user``; for a
    unit-batch form its loop 0 size, ``size`` inside and ``batch`` outside, equals the
    constant ``one``); it yields ``contraction``. The action ``@fuse`` takes
    ``contraction``, generalizes it into ``generic`` (``generalize``, spelled) and marks
    ``generic``; the rule's action runs the forms with ``foreach_match restrict_root`` on
    ``op`` into ``fused``."""

    forms: tuple[ChainForm, ...]
    fuse: str
    op: Handle
    expand_in: Handle
    expand: Handle
    epilogue_in: Handle
    epilogue: Handle
    structured: Handle
    user: Handle
    epilogue_user: Handle
    contraction_in: Handle
    contraction: Handle
    contraction_user: Handle
    size: Handle
    batch: Handle
    one: Handle
    generic: Handle
    fused: Handle
    generalize: SpelledOp


@dataclass(frozen=True)
class LayoutPlan(ActionPlan):
    """The steps of a DataLayout action in order; ``result`` is the rewritten op's handle;
    ``deferred`` what runs after the rule's run, if anything; ``head_split`` replaces the
    steps when the strategy sets ``fuse_head_split`` (then ``steps`` is empty)."""

    steps: tuple[Step, ...]
    result: Handle
    deferred: Optional[Deferred] = None
    head_split: Optional[HeadSplit] = None

    def has_deferred(self) -> bool:
        return self.deferred is not None


def _pack_step(pack: PackGreedily | Pack, operand: Handle, result: Handle) -> Step:
    op = PACK_GREEDILY if isinstance(pack, PackGreedily) else PACK
    return OpStep(op.spell(dict(pack)), operand, result, "pack")


def _transposed(i: int) -> tuple[Handle, ...]:
    """The transformed op (``%packed<i+1>``) and the new pack of the i-th pack transpose."""
    return (Handle(f"%packed{i + 1}", GENERIC), Handle(f"%pack{i}_t", PACK_TYPE))


def _transpose_result(i: int, t: PackTranspose, compute: Handle) -> Step:
    assert t.inner_perm is not None, "PackTranspose of the result requires inner_perm"
    results = (*_transposed(i), Handle(f"%unpack{i}_t", UNPACK))
    return TransposeResult(i, compute, Handle(f"%unpack{i}", UNPACK), results, PACK_TRANSPOSE.spell(dict(t)))


def _transpose_operand(i: int, t: PackTranspose, compute: Handle) -> Step:
    results = (*_transposed(i), Handle(f"%unpack{i}_t"))
    pack = Handle(f"%pack{i}", PACK_TYPE)
    return TransposeOperand(i, compute, t.operand_index, pack, results, PACK_TRANSPOSE.spell(dict(t)))


_TRANSPOSE: dict[str, Callable[[int, PackTranspose, Handle], Step]] = {
    "lhs": _transpose_operand,
    "rhs": _transpose_operand,
    "result": _transpose_result,
}
"""PackTranspose.operand -> its planner: the pack of an operand or the unpack of the result."""


def _lower_pack(operand: int, compute: Handle) -> Step:
    results = (
        Handle(f"%pad{operand}", op_type("tensor.pad")),
        Handle(f"%expand{operand}", op_type("tensor.expand_shape")),
        Handle(f"%transpose{operand}", op_type("linalg.transpose")),
    )
    return LowerPack(LOWER_PACK.spell({}), compute, operand, Handle(f"%lower_pack{operand}", PACK_TYPE), results)


def _lower_unpack(operand: int, compute: Handle, field: str = "lower_packs") -> Step:
    results = (
        Handle("%unpack_empty", op_type("tensor.empty")),
        Handle("%unpack_transpose", op_type("linalg.transpose")),
        Handle("%unpack_collapse", op_type("tensor.collapse_shape")),
        Handle("%unpack_slice", op_type("tensor.extract_slice")),
        Handle("%unpack_copy", op_type("linalg.copy")),
    )
    return LowerUnpack(LOWER_UNPACK.spell({}), compute, Handle("%lower_unpack", UNPACK), results, field)


_LOWER: tuple[Callable[[int, Handle], Step], ...] = (_lower_pack, _lower_pack, _lower_unpack)
"""Operand index (lhs, rhs, result) -> its planner: operands have packs, the result an unpack."""


HEAD_SPLIT_FORMS = (("matmul", "linalg.matmul", False), ("batch_matmul", "linalg.batch_matmul", True))
"""The contraction forms of a head-split chain: (symbol suffix, op name, batch of 1)."""


def _head_split(symbol: str) -> HeadSplit:
    forms = tuple(ChainForm(f"{symbol}_{suffix}", name, unit) for suffix, name, unit in HEAD_SPLIT_FORMS)
    return HeadSplit(
        forms,
        f"{symbol}_fuse",
        Handle("%op"),
        Handle("%expand_in", VALUE),
        Handle("%expand"),
        Handle("%epilogue_in", VALUE),
        Handle("%epilogue"),
        Handle("%s"),
        Handle("%user"),
        Handle("%epilogue_user"),
        Handle("%contraction_in", VALUE),
        Handle("%contraction"),
        Handle("%contraction_user"),
        Handle("%size", I64),
        Handle("%batch", I64),
        Handle("%one", I64),
        Handle("%generic"),
        Handle("%fused"),
        GENERALIZE.spell({}),
    )


def plan_layout(strategy: DataLayout, symbol: str, target: Target) -> LayoutPlan:
    """The steps of ``strategy``'s action; see the module docstring for the handle names."""
    s = strategy
    current = Handle("%op")
    if s.fuse_head_split:
        chain = _head_split(symbol)
        return LayoutPlan((), chain.generic, head_split=chain)
    steps: list[Step] = []
    if s.generalize:
        result = Handle("%generic")
        steps.append(OpStep(GENERALIZE.spell({}), current, result, "generalize"))
        current = result
    if s.interchange is not None:
        result = Handle("%interchanged")
        steps.append(OpStep(INTERCHANGE.spell(dict(s)), current, result, "interchange"))
        current = result
    deferred: list[Step] = []
    ops = Handle(f"%{symbol}_ops")
    if s.propagate_reshapes:
        deferred.append(FunctionPatterns(ops, Handle(f"%{symbol}_scope"), "propagate_reshapes", "iree.bubble_expand"))
    if s.consumer_interchange is not None:
        deferred.append(
            ConsumerInterchange(
                ops,
                Handle(f"%{symbol}_op"),
                Handle(f"%{symbol}_users"),
                Handle(f"%{symbol}_consumers"),
                Handle(f"%{symbol}_unique"),
                Handle(f"%{symbol}_generics", GENERIC),
                Handle(f"%{symbol}_fitting", GENERIC),
                Handle(f"%{symbol}_interchanged", GENERIC),
                INTERCHANGE.spell({"interchange": s.consumer_interchange}),
            )
        )
    per_op = None
    if s.fold_unit_dims:
        deferred.append(
            FunctionPatterns(
                ops, Handle(f"%{symbol}_scope"), "fold_unit_dims", "linalg.fold_unit_extent_dims_via_reshapes"
            )
        )
        if s.pack is not None:
            packing, packed = _pack_steps(s, Handle("%op"))
            per_op = PerOp(f"{symbol}_packed", Handle(f"%{symbol}_op"), tuple(packing), packed)
    elif s.pack is not None:
        packing, current = _pack_steps(s, current)
        steps += packing
    if not deferred:
        return LayoutPlan(tuple(steps), current)
    later = Deferred(ops, tuple(deferred), Handle(f"%{symbol}_marker", PARAM), Handle(f"%{symbol}_rule", PARAM), per_op)
    return LayoutPlan(tuple(steps), current, later)


def _pack_steps(s: DataLayout, current: Handle) -> tuple[list[Step], Handle]:
    """The pack, its transposes, lowering and specialization from ``current``; the handle of
    the op they leave."""
    assert s.pack is not None
    result = Handle("%packed0", GENERIC)
    steps = [_pack_step(s.pack, current, result)]
    current = result
    for i, transpose in enumerate(s.pack_transposes):
        steps.append(_TRANSPOSE[transpose.operand](i, transpose, current))
        current = _transposed(i)[0]
    if s.lower_packs:
        for operand in s.packed_operands():
            steps.append(_LOWER[operand](operand, current))
    elif s.lower_unpack:
        steps.append(_lower_unpack(2, current, field="lower_unpack"))
    if s.specialize:
        result = Handle("%specialized")
        steps.append(OpStep(SPECIALIZE.spell({}), current, result, "specialize"))
        current = result
    return steps, current
