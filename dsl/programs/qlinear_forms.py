"""The ``QLinearMatMul`` forms IREE 3.13 computes wrong or cannot compile, rewritten exactly.

Measured with iree-base-compiler 3.13.0 (llvm-cpu, IREE's default pipeline) against
onnxruntime and an exact integer reference, u8 and i8:

=====================================================  ===============================
form                                                   IREE 3.13 as imported
=====================================================  ===============================
2-D x 2-D, per-tensor or per-column (B)                right
N-D x 2-D, per-tensor activation                       fails (``torch.aten.bmm``);
                                                       :mod:`~tdsl.programs.onnx_import`
                                                       flattens it to 2-D (right)
3-D x 3-D, per-tensor B                                wrong numbers (off by up to 90)
3-D x 3-D, per-column B (``[N]`` or ``[B, 1, N]``)     right
2-D x 3-D, 4-D x 3-D, 4-D x 4-D                        fails to compile
broadcast batch (``[1, M, K] x [B, K, N]`` and back)   fails to compile
per-row activation (``a_scale`` / ``a_zero_point``     fails to compile (onnxruntime
of ``M`` elements), any rank                           refuses it too)
=====================================================  ===============================

:func:`integer_form` names the forms rewritten: every one but a 2-D x 2-D product with a
per-tensor activation. :func:`integer_qlinear_matmul` rewrites one into what QLinearMatMul
is defined as: the integer product of the zero-point-shifted operands (``MatMulInteger``;
an i32 ``MatMul`` of shifted operands where the activation's zero point is per-row, which
IREE's ``MatMulInteger`` import cannot take), ``Cast`` to float32, ``Mul`` by
``a_scale * b_scale`` and ``QuantizeLinear`` by ``y_scale`` / ``y_zero_point`` (rounding
half to even, saturating). The integer product is exact; the requantization may round a
value on a rounding boundary the other way, within the one quantization step
:func:`~tdsl.programs.quantization.output_steps` allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx

_FLOAT = 1  # TensorProto.FLOAT
_INT32 = 6  # TensorProto.INT32


def _shape(types: dict[str, Any], name: str) -> list[int] | None:
    """The shape of ``name`` with -1 for a dynamic dimension; None where its rank is unknown."""
    tensor_type = types.get(name)
    if tensor_type is None or not tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim]


def _elements(types: dict[str, Any], name: str) -> int | None:
    shape = _shape(types, name)
    return None if shape is None or any(d < 0 for d in shape) else int(np.prod(shape))


def _per_row(types: dict[str, Any], node: "onnx.NodeProto") -> bool:
    """Whether the activation's scale or zero point has more than one element (per-row)."""
    return any((_elements(types, node.input[i]) or 1) > 1 for i in (1, 2))


def integer_form(node: "onnx.NodeProto", types: dict[str, Any]) -> str | None:
    """The form of QLinearMatMul ``node`` that IREE 3.13 gets wrong (e.g. ``3-D x 3-D``,
    ``2-D x 2-D per-row``); None for the 2-D x 2-D product with a per-tensor activation it
    gets right, and where an operand's rank is unknown or below 2."""
    a, b = _shape(types, node.input[0]), _shape(types, node.input[3])
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return None
    per_row = _per_row(types, node)
    if len(a) == len(b) == 2 and not per_row:
        return None
    return f"{len(a)}-D x {len(b)}-D" + (" per-row" if per_row else "")


def integer_qlinear_matmul(
    model: "onnx.ModelProto", node: "onnx.NodeProto", types: dict[str, Any], fresh: Callable[[str], str]
) -> list["onnx.NodeProto"]:
    """The nodes that compute QLinearMatMul ``node`` as an integer product and a
    requantization (see the module); the shapes they reshape with are added to ``model``'s
    initializers. The result keeps ``node``'s output name."""
    from onnx import helper, numpy_helper

    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = node.input
    base = node.name or node.output[0]
    nodes: list[Any] = []

    def add(op: str, inputs: list[str], tag: str, **attributes: Any) -> str:
        out = fresh(f"{base}_tdsl_{tag}")
        nodes.append(helper.make_node(op, inputs, [out], **attributes))
        return out

    def shape_constant(values: list[int], tag: str) -> str:
        name = fresh(f"{base}_tdsl_{tag}_shape")
        model.graph.initializer.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def scalar(name: str, tag: str, of: str) -> str:  # ``of``'s one-element value as a rank-0 tensor
        return name if _shape(types, of) == [] else add("Reshape", [name, shape_constant([], tag)], f"{tag}_scalar")

    def rows_or_scalar(name: str, tag: str, of: str) -> str:  # per-row: [M, 1], broadcast over columns
        if (_elements(types, of) or 1) > 1:
            return add("Reshape", [name, shape_constant([-1, 1], tag)], f"{tag}_rows")
        return scalar(name, tag, of)

    def as_float(name: str, tag: str) -> str:
        known = types.get(name)
        return name if known is not None and known.elem_type == _FLOAT else add("Cast", [name], tag, to=_FLOAT)

    def as_i32(name: str, tag: str) -> str:
        return add("Cast", [name], tag, to=_INT32)

    if _per_row(types, node):
        a_zero_i32 = rows_or_scalar(as_i32(a_zero, "a_zp_i32"), "a_zp", a_zero)
        shifted_a = add("Sub", [as_i32(a, "a_i32"), a_zero_i32], "a_shifted")
        shifted_b = add("Sub", [as_i32(b, "b_i32"), as_i32(b_zero, "b_zp_i32")], "b_shifted")
        product = add("MatMul", [shifted_a, shifted_b], "product")
    else:
        b_zero_point = scalar(b_zero, "b_zp", b_zero) if _elements(types, b_zero) == 1 else b_zero
        product = add("MatMulInteger", [a, b, scalar(a_zero, "a_zp", a_zero), b_zero_point], "product")
    a_scale_f32 = rows_or_scalar(as_float(a_scale, "a_scale_f32"), "a_scale", a_scale)
    scale = add("Mul", [a_scale_f32, as_float(b_scale, "b_scale_f32")], "scale")
    real = add("Mul", [add("Cast", [product], "product_f32", to=_FLOAT), scale], "real")
    y_scale_f32 = scalar(as_float(y_scale, "y_scale_f32"), "y_scale", y_scale)
    y_zero_point = scalar(y_zero, "y_zp", y_zero)
    nodes.append(
        helper.make_node("QuantizeLinear", [real, y_scale_f32, y_zero_point], [node.output[0]], name=node.name)
    )
    return nodes
