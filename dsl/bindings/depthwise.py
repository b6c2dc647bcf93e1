"""Depthwise convolutions computed channels-last, rewritten in linalg IR.

``iree-import-onnx`` gives an ONNX ``Conv`` with one channel per group (MobileNet's and
ConvNeXt's depthwise convs) as ``linalg.depthwise_conv_2d_nchw_chw``, which IREE 3.13's
channels-last rewrite leaves (it refuses convolutions with depth dims) and its CPU backend
lowers as a generic loop nest that reads the image across channels: 1.2 GFLOP/s on a
56x56x144 3x3 depthwise conv (AMD EPYC, AVX2, 1 thread). :func:`depthwise_convs_channels_last`
rewrites each such op into ``linalg.transpose`` ops to NHWC (input, initial value) and HWC
(filter), the same convolution as a channels-last ``linalg.generic`` (its body moved over,
so every element type computes as before), and a transpose of the result back to NCHW.
IREE then propagates the transposes into the neighbouring channels-last convolutions
(where they cancel), folds the filter's into the constant, and lowers the generic on its
convolution path, vectorized over the channels. The generic, not the named
``linalg.depthwise_conv_2d_nhwc_hwc``: IREE's im2col rewrite
(``--iree-global-opt-use-im2col-for-convs``) takes the named op and turns it into a
batch matvec over a copied image, slower still.

Requires linalg IR with static shapes (what ``iree-compile --compile-to=input`` writes);
other ops, dynamic shapes and 1-D depthwise convs are left as they are.
"""

from __future__ import annotations

from typing import Any

from . import _ir
from .op_rewrite import int_list, rewrite_ops

DEPTHWISE_NCHW = "linalg.depthwise_conv_2d_nchw_chw"
"""The op :func:`depthwise_convs_channels_last` rewrites."""

_TO_NHWC = [0, 2, 3, 1]
_TO_HWC = [1, 2, 0]
_TO_NCHW = [0, 3, 1, 2]


def _transposed(value: Any, permutation: list[int]) -> Any:
    """``linalg.transpose`` of ``value`` into a new ``tensor.empty`` (at the insertion point)."""
    ir = _ir()
    from iree.compiler.dialects import linalg, tensor

    t = ir.RankedTensorType(value.type)
    empty = tensor.EmptyOp([t.shape[p] for p in permutation], t.element_type).result
    transposed = linalg.transpose(value, outs=[empty], permutation=permutation)
    return transposed if isinstance(transposed, ir.Value) else transposed.results[0]


def _moved_body(old: Any, new_region: Any) -> Any:
    """The ops of ``old``'s block moved into a new block of ``new_region`` (same argument
    types), the block's arguments replaced; returns the new block."""
    ir = _ir()
    block = new_region.blocks.append(*[a.type for a in old.arguments])
    at_end = ir.InsertionPoint(block)
    for body_op in list(old.operations):
        at_end.insert(body_op.detach_from_parent())
    for before, after in zip(old.arguments, block.arguments):
        before.replace_all_uses_with(after)
    return block


def _image_nhwc(image: Any) -> tuple[Any, Any]:
    """``image`` (NCHW) as NHWC, and the op to erase once the conv is gone. An image padded
    by a ``tensor.pad`` used only here is transposed before the pad (then padded NHWC):
    IREE propagates a transpose between the pad and the conv into the conv's input map,
    which reads the image across channels again, where its producer could not take it."""
    ir = _ir()
    from iree.compiler.dialects import tensor

    pad = image.owner if isinstance(image.owner, ir.OpView) else None
    if pad is None or pad.operation.name != "tensor.pad" or len(list(image.uses)) != 1 or list(pad.operands[1:]):
        return _transposed(image, _TO_NHWC), None
    low, high = (int_list(pad.attributes[k]) for k in ("static_low", "static_high"))
    source = _transposed(pad.operands[0], _TO_NHWC)
    t = ir.RankedTensorType(image.type)
    padded_type = ir.RankedTensorType.get([t.shape[p] for p in _TO_NHWC], t.element_type)
    padded = tensor.PadOp(padded_type, source, [], [], [low[p] for p in _TO_NHWC], [high[p] for p in _TO_NHWC])
    _moved_body(pad.regions[0].blocks[0], padded.regions[0])
    return padded.results[0], pad


def _channels_last_maps(strides: list[int], dilations: list[int]) -> Any:
    """Indexing maps of the NHWC depthwise conv over loops (n, oh, ow, c, kh, kw)."""
    ir = _ir()
    n, oh, ow, c, kh, kw = (ir.AffineDimExpr.get(i) for i in range(6))
    rows = oh * strides[0] + kh * dilations[0]
    cols = ow * strides[1] + kw * dilations[1]
    maps = [
        ir.AffineMap.get(6, 0, [n, rows, cols, c]),
        ir.AffineMap.get(6, 0, [kh, kw, c]),
        ir.AffineMap.get(6, 0, [n, oh, ow, c]),
    ]
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _iterators() -> Any:
    ir = _ir()
    kinds = ["parallel"] * 4 + ["reduction"] * 2
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def _rewrite(op: Any) -> None:
    """Replaces the NCHW depthwise conv ``op`` by its channels-last form between transposes."""
    ir = _ir()
    from iree.compiler.dialects import linalg

    image, kernel, init = op.operands
    strides, dilations = int_list(op.attributes["strides"]), int_list(op.attributes["dilations"])
    with ir.InsertionPoint(op), op.location:
        image_nhwc, old_pad = _image_nhwc(image)
        kernel_hwc = _transposed(kernel, _TO_HWC)
        init_nhwc = _transposed(init, _TO_NHWC)
        generic = linalg.GenericOp(
            [init_nhwc.type],
            [image_nhwc, kernel_hwc],
            [init_nhwc],
            _channels_last_maps(strides, dilations),
            _iterators(),
        )
        _moved_body(op.regions[0].blocks[0], generic.regions[0])
        result = _transposed(generic.results[0], _TO_NCHW)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    if old_pad is not None:
        old_pad.operation.erase()


def depthwise_convs_channels_last(text: str) -> tuple[str, int]:
    """``text`` (a linalg module) with every static-shaped ``linalg.depthwise_conv_2d_nchw_chw``
    computed channels-last (module docstring), printed without locations, and how many
    were rewritten. ``text`` itself is returned unchanged when none was."""
    return rewrite_ops(text, DEPTHWISE_NCHW, _rewrite)
