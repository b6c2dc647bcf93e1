"""The plan of a :class:`~tdsl.spec.layout.DataLayout` action: its steps in order, each with
the handles (names and types) it consumes and produces.

The matched op starts as ``%op`` (``!transform.any_op``); generalize / interchange /
specialize produce ``%generic`` / ``%interchanged`` / ``%specialized``, the pack
produces ``%packed0`` (a ``linalg.generic`` handle) and the i-th pack transpose
``%packed<i+1>``. :class:`LayoutPlan.result` is the handle the markers go on. Each step
names the macro of ``strategies/data_layout.mlir.j2`` that renders it. Emits no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

from ..spec.layout import DataLayout, Pack, PackGreedily, PackTranspose
from ..targets import Target
from .plan import ActionPlan, Handle, Step, op_type

GENERIC = op_type("linalg.generic")
PACK = op_type("linalg.pack")
UNPACK = op_type("linalg.unpack")


@dataclass(frozen=True)
class Generalize(Step):
    """``result = transform.structured.generalize operand``."""

    macro: ClassVar[str] = "generalize"
    operand: Handle
    result: Handle


@dataclass(frozen=True)
class Interchange(Step):
    """``result = transform.structured.interchange operand iterator_interchange = permutation``."""

    macro: ClassVar[str] = "interchange"
    operand: Handle
    result: Handle
    permutation: tuple[int, ...]


@dataclass(frozen=True)
class PropagateReshapes(Step):
    """``scope = transform.get_parent_op operand <{isolated_from_above}>`` and the
    ``bubble_expand`` patterns on it."""

    macro: ClassVar[str] = "propagate_reshapes"
    operand: Handle
    scope: Handle


@dataclass(frozen=True)
class ConsumerInterchange(Step):
    """``consumers = transform.get_consumers_of_result operand[0]``, then
    ``result = transform.structured.interchange consumers``."""

    macro: ClassVar[str] = "consumer_interchange"
    operand: Handle
    consumers: Handle
    result: Handle
    permutation: tuple[int, ...]


@dataclass(frozen=True)
class PackGreedilyStep(Step):
    """``result = transform.structured.pack_greedily operand matmul_packed_sizes = ...``."""

    macro: ClassVar[str] = "pack_greedily"
    operand: Handle
    result: Handle
    packed_sizes: tuple[int, ...]
    padded_multiples: Optional[tuple[int, ...]]
    inner_dims_order: tuple[int, ...]


@dataclass(frozen=True)
class PackStep(Step):
    """``result = transform.structured.pack operand packed_sizes = ...``."""

    macro: ClassVar[str] = "pack"
    operand: Handle
    result: Handle
    packed_sizes: tuple[int, ...]


@dataclass(frozen=True)
class TransposeResult(Step):
    """``unpack = transform.get_consumers_of_result compute[0]``, then
    ``results = transform.structured.pack_transpose unpack with_compute_op(compute)``."""

    macro: ClassVar[str] = "transpose_result"
    index: int
    compute: Handle
    unpack: Handle
    results: tuple[Handle, ...]
    inner_perm: tuple[int, ...]


@dataclass(frozen=True)
class TransposeOperand(Step):
    """``pack = transform.get_producer_of_operand compute[operand]``, then
    ``results = transform.structured.pack_transpose pack with_compute_op(compute)``."""

    macro: ClassVar[str] = "transpose_operand"
    index: int
    compute: Handle
    operand: int
    pack: Handle
    results: tuple[Handle, ...]
    outer_perm: Optional[tuple[int, ...]]
    inner_perm: Optional[tuple[int, ...]]


@dataclass(frozen=True)
class LowerPack(Step):
    """``pack = transform.get_producer_of_operand compute[operand]``, then
    ``results = transform.structured.lower_pack pack``."""

    macro: ClassVar[str] = "lower_pack"
    compute: Handle
    operand: int
    pack: Handle
    results: tuple[Handle, ...]


@dataclass(frozen=True)
class LowerUnpack(Step):
    """``unpack = transform.get_consumers_of_result compute[0]``, then
    ``results = transform.structured.lower_unpack unpack``."""

    macro: ClassVar[str] = "lower_unpack"
    compute: Handle
    unpack: Handle
    results: tuple[Handle, ...]


@dataclass(frozen=True)
class Specialize(Step):
    """``result = transform.structured.specialize operand``."""

    macro: ClassVar[str] = "specialize"
    operand: Handle
    result: Handle


@dataclass(frozen=True)
class LayoutPlan(ActionPlan):
    """The steps of a DataLayout action in order; ``result`` is the rewritten op's handle."""

    steps: tuple[Step, ...]
    result: Handle


def _pack_step(pack: PackGreedily | Pack, operand: Handle, result: Handle) -> Step:
    if isinstance(pack, PackGreedily):
        return PackGreedilyStep(
            operand,
            result,
            pack.matmul_packed_sizes,
            pack.matmul_padded_sizes_next_multiple_of,
            pack.matmul_inner_dims_order,
        )
    return PackStep(operand, result, pack.packed_sizes)


def _transposed(i: int) -> tuple[Handle, ...]:
    """The transformed op (``%packed<i+1>``) and the new pack of the i-th pack transpose."""
    return (Handle(f"%packed{i + 1}", GENERIC), Handle(f"%pack{i}_t", PACK))


def _transpose_result(i: int, t: PackTranspose, compute: Handle) -> Step:
    assert t.inner_perm is not None, "PackTranspose of the result requires inner_perm"
    results = (*_transposed(i), Handle(f"%unpack{i}_t", UNPACK))
    return TransposeResult(i, compute, Handle(f"%unpack{i}", UNPACK), results, t.inner_perm)


def _transpose_operand(i: int, t: PackTranspose, compute: Handle) -> Step:
    results = (*_transposed(i), Handle(f"%unpack{i}_t"))
    pack = Handle(f"%pack{i}", PACK)
    return TransposeOperand(i, compute, t.operand_index, pack, results, t.outer_perm, t.inner_perm)


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
    return LowerPack(compute, operand, Handle(f"%lower_pack{operand}", PACK), results)


def _lower_unpack(operand: int, compute: Handle) -> Step:
    results = (
        Handle("%unpack_empty", op_type("tensor.empty")),
        Handle("%unpack_transpose", op_type("linalg.transpose")),
        Handle("%unpack_collapse", op_type("tensor.collapse_shape")),
        Handle("%unpack_slice", op_type("tensor.extract_slice")),
        Handle("%unpack_copy", op_type("linalg.copy")),
    )
    return LowerUnpack(compute, Handle("%lower_unpack", UNPACK), results)


_LOWER: tuple[Callable[[int, Handle], Step], ...] = (_lower_pack, _lower_pack, _lower_unpack)
"""Operand index (lhs, rhs, result) -> its planner: operands have packs, the result an unpack."""


def plan_layout(strategy: DataLayout, symbol: str, target: Target) -> LayoutPlan:
    """The steps of ``strategy``'s action; see the module docstring for the handle names."""
    s = strategy
    current = Handle("%op")
    steps: list[Step] = []
    if s.generalize:
        result = Handle("%generic")
        steps.append(Generalize(current, result))
        current = result
    if s.interchange is not None:
        result = Handle("%interchanged")
        steps.append(Interchange(current, result, s.interchange))
        current = result
    if s.propagate_reshapes:
        steps.append(PropagateReshapes(current, Handle("%scope")))
    if s.consumer_interchange is not None:
        consumers = Handle("%consumers")
        steps.append(ConsumerInterchange(current, consumers, Handle("%consumers_interchanged"), s.consumer_interchange))
    if s.pack is not None:
        result = Handle("%packed0", GENERIC)
        steps.append(_pack_step(s.pack, current, result))
        current = result
        for i, transpose in enumerate(s.pack_transposes):
            steps.append(_TRANSPOSE[transpose.operand](i, transpose, current))
            current = _transposed(i)[0]
        if s.lower_packs:
            for operand in s.packed_operands():
                steps.append(_LOWER[operand](operand, current))
        if s.specialize:
            result = Handle("%specialized")
            steps.append(Specialize(current, result))
            current = result
    return LayoutPlan(tuple(steps), current)
