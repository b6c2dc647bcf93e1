"""1-D convolutions computed as 2-D convolutions of unit height, rewritten in linalg IR.

``iree-import-onnx`` gives a 1-D ONNX ``Conv`` (Whisper's and wav2vec's front ends) as
``linalg.conv_1d_ncw_fcw``. IREE 3.13's im2col rewrite takes 2-D convolutions only, so a
1-D conv stays on IREE's direct convolution path: 7.4 GFLOP/s on Whisper's 384 -> 384,
k3, stride-2 conv (AMD EPYC, AVX2, 1 thread, channels-last), where the same product as a
data-tiled matmul runs at 25-30. :func:`conv1d_as_conv2d` rewrites each such op into
``tensor.expand_shape`` ops that give image, filter and initial value a unit height, the
same convolution as ``linalg.conv_2d_nchw_fchw`` (stride and dilation 1 along the height),
and a ``tensor.collapse_shape`` of the result: IREE's channels-last and im2col rewrites then
take it like any 2-D convolution.

Requires linalg IR with static shapes (what ``iree-compile --compile-to=input`` writes);
other ops and dynamic shapes are left as they are.
"""

from __future__ import annotations

from typing import Any

from . import _ir
from .op_rewrite import int_list, rewrite_ops

CONV_1D_NCW = "linalg.conv_1d_ncw_fcw"
"""The op :func:`conv1d_as_conv2d` rewrites."""

_UNIT_HEIGHT = [[0], [1], [2, 3]]
"""Reassociation of (N, C, W) / (F, C, K) with a unit dim inserted before the last."""


def _reassociation() -> Any:
    ir = _ir()
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in group]) for group in _UNIT_HEIGHT])


def _with_unit_height(value: Any) -> Any:
    """``value`` (rank 3) expanded to rank 4 with a unit dim before its last."""
    ir = _ir()
    from iree.compiler.dialects import tensor

    t = ir.RankedTensorType(value.type)
    shape = [t.shape[0], t.shape[1], 1, t.shape[2]]
    expanded = ir.RankedTensorType.get(shape, t.element_type)
    return tensor.ExpandShapeOp(expanded, value, _reassociation(), [], shape).result


def _rewrite(op: Any) -> None:
    """Replaces the 1-D conv ``op`` by its unit-height 2-D form between reshapes."""
    ir = _ir()
    from iree.compiler.dialects import linalg, tensor

    image, kernel, init = op.operands
    strides, dilations = int_list(op.attributes["strides"]), int_list(op.attributes["dilations"])
    with ir.InsertionPoint(op), op.location:
        conv = linalg.conv_2d_nchw_fchw(
            _with_unit_height(image),
            _with_unit_height(kernel),
            outs=[_with_unit_height(init)],
            strides=[1, strides[0]],
            dilations=[1, dilations[0]],
        )
        result = tensor.CollapseShapeOp(op.results[0].type, conv, _reassociation()).result
    op.results[0].replace_all_uses_with(result)
    op.erase()


def conv1d_as_conv2d(text: str) -> tuple[str, int]:
    """``text`` (a linalg module) with every static-shaped ``linalg.conv_1d_ncw_fcw`` computed
    as a unit-height 2-D conv (module docstring), printed without locations, and how many
    were rewritten. ``text`` itself is returned unchanged when none was."""
    return rewrite_ops(text, CONV_1D_NCW, _rewrite)
