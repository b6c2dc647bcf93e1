"""2-D convolutions into a zero-filled tensor, their initial value added after, rewritten in
linalg IR.

``iree-import-onnx`` gives an ONNX ``Conv`` with a bias as ``linalg.conv_2d_nchw_fchw`` whose
initial value (``outs``) is the bias broadcast over the image. IREE's im2col rewrite keeps
that initial value on the matmul it makes, and a graph-level packing of that matmul
unpacks its result into it: IREE 3.13 cannot code generate an unpack into a tensor that is
not a fill ("write affecting operations on global resources are restricted to workgroup
distributed contexts"). :func:`convs_into_zero` rewrites each such conv into the same conv
into a ``linalg.fill`` of zero and an elementwise ``linalg.generic`` that adds the initial
value to its result; IREE fuses that add into the unpack (or the matmul) after it.

Requires linalg IR with static shapes (what ``iree-compile --compile-to=input`` writes);
convs that already start from a fill, other ops and dynamic shapes are left as they are.
"""

from __future__ import annotations

from typing import Any

from . import _ir
from .op_rewrite import int_list, rewrite_ops

CONVS_2D = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf")
"""The ops :func:`convs_into_zero` rewrites (the named forms IREE's im2col takes)."""

_ADDS = {"f": "arith.addf", "i": "arith.addi"}


def _add_op(element_type: Any) -> str | None:
    """The arith op adding two ``element_type`` values (None: neither float nor integer)."""
    ir = _ir()
    if isinstance(element_type, ir.FloatType):
        return _ADDS["f"]
    return _ADDS["i"] if isinstance(element_type, ir.IntegerType) else None


def _starts_from_something(op: Any) -> bool:
    """Whether ``op``'s initial value is computed (not a ``linalg.fill``) and of a type it can add."""
    ir = _ir()
    init = op.operands[2]
    owner = init.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "linalg.fill":
        return False
    return _add_op(ir.RankedTensorType(init.type).element_type) is not None


def _elementwise_add(lhs: Any, rhs: Any) -> Any:
    """``lhs + rhs`` (same static tensor type) as a ``linalg.generic`` into a new ``tensor.empty``."""
    ir = _ir()
    from iree.compiler.dialects import linalg, tensor

    t = ir.RankedTensorType(lhs.type)
    empty = tensor.EmptyOp(t.shape, t.element_type).result
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    generic = linalg.GenericOp(
        [t], [lhs, rhs], [empty], ir.ArrayAttr.get([identity] * 3), ir.ArrayAttr.get([parallel] * t.rank)
    )
    block = generic.regions[0].blocks.append(t.element_type, t.element_type, t.element_type)
    with ir.InsertionPoint(block):
        name = _add_op(t.element_type)
        summed = ir.Operation.create(name, results=[t.element_type], operands=list(block.arguments)[:2]).result
        linalg.YieldOp([summed])
    return generic.results[0]


def _rewrite(op: Any) -> None:
    """Replaces ``op`` by the same conv into a zero fill plus an add of its initial value."""
    ir = _ir()
    from iree.compiler.dialects import arith, linalg, tensor

    image, kernel, init = op.operands
    t = ir.RankedTensorType(init.type)
    build = linalg.conv_2d_nchw_fchw if op.name == CONVS_2D[0] else linalg.conv_2d_nhwc_hwcf
    with ir.InsertionPoint(op), op.location:
        zero_attr = (
            ir.FloatAttr.get(t.element_type, 0.0)
            if isinstance(t.element_type, ir.FloatType)
            else ir.IntegerAttr.get(t.element_type, 0)
        )
        zero = arith.ConstantOp(t.element_type, zero_attr).result
        filled = linalg.fill(zero, outs=[tensor.EmptyOp(t.shape, t.element_type).result])
        conv = build(
            image,
            kernel,
            outs=[filled],
            strides=int_list(op.attributes["strides"]),
            dilations=int_list(op.attributes["dilations"]),
        )
        result = _elementwise_add(conv, init)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def convs_into_zero(text: str) -> tuple[str, int]:
    """``text`` (a linalg module) with every static-shaped 2-D conv (:data:`CONVS_2D`) whose
    initial value is not a fill computed into a zero fill, that value added after (module
    docstring), printed without locations, and how many were rewritten. ``text`` itself is
    returned unchanged when none was."""
    return rewrite_ops(text, CONVS_2D, _rewrite, select=_starts_from_something)
