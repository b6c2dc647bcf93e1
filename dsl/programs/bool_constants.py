"""Boolean constants stored as u8 and cast to bool where the graph reads them, exactly.

IREE 3.13's data tiling (``--iree-opt-data-tiling``) fails to compile a program where a
boolean tensor is an operand of an elementwise op fused after an encoded contraction, as
GPT-2's causal mask is (``Where(mask, 0, min)`` added to ``Q @ K^T``): the encoding
reaches the i1 tensor, and the dispatch that encodes it fails (``'iree_codegen.load_from_buffer'
op buffer and tensor shapes must be compatible and element types must match``; i1 is stored
as i8 everywhere else, not through an encoding). Measured on llvm-cpu (AVX2):

==========================================  =============================================
the i1 operand of the masked contraction     IREE 3.13 with data tiling
==========================================  =============================================
an initializer or ``Constant``              fails; stored as u8 and cast here: compiles
computed in the graph from non-bool data    compiles (the cast fuses into the consumer)
  (``Cast`` of an int64 mask, ``Less``)     once the constants it meets are rewritten
a bool graph input                          fails; a ``Cast`` round trip through u8
                                            fails too (left to auto()'s fallback)
==========================================  =============================================

:func:`store_bool_constants_as_u8` rewrites every boolean initializer and ``Constant`` of
the main graph with more than one element (a scalar is inlined into its dispatch) into the
same bytes typed u8 and a ``Cast`` to bool under the original name: ONNX stores bool and u8
alike (one byte or one ``int32_data`` entry an element), so the values are unchanged. The
encoding then reaches the u8 constant, and the cast runs inside the consumer's dispatch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx


def _retype_as_u8(tensor: "onnx.TensorProto") -> bool:
    """Types ``tensor`` as u8 in place (same bytes) where it is a boolean tensor of more than
    one element; False (unchanged) otherwise."""
    from onnx import TensorProto

    if tensor.data_type != TensorProto.BOOL or math.prod(tensor.dims) <= 1:
        return False
    tensor.data_type = TensorProto.UINT8
    return True


def store_bool_constants_as_u8(model: "onnx.ModelProto", fresh: Callable[[str], str]) -> list[str]:
    """Rewrites ``model``'s main graph (in place): each boolean initializer or ``Constant``
    of more than one element becomes a u8 constant under a name from ``fresh`` and a
    ``Cast`` to bool that keeps the original name; returns the original names."""
    from onnx import TensorProto, helper

    def cast(u8_name: str, name: str) -> "onnx.NodeProto":
        return helper.make_node("Cast", [u8_name], [name], name=fresh(f"{name}_tdsl_bool"), to=TensorProto.BOOL)

    graph = model.graph
    rewritten: list[str] = []
    casts = []
    declared = {value.name: value for value in graph.input}
    for tensor in graph.initializer:
        name = tensor.name
        if not _retype_as_u8(tensor):
            continue
        tensor.name = fresh(f"{name}_tdsl_u8")
        if name in declared:  # an initializer also listed as an input (IR version < 4)
            declared[name].name = tensor.name
            declared[name].type.tensor_type.elem_type = TensorProto.UINT8
        casts.append(cast(tensor.name, name))
        rewritten.append(name)
    nodes = [*casts]
    for node in graph.node:
        nodes.append(node)
        if node.op_type != "Constant" or node.domain not in ("", "ai.onnx"):
            continue
        values = [a for a in node.attribute if a.name == "value"]
        if values and _retype_as_u8(values[0].t):
            name = node.output[0]
            node.output[0] = fresh(f"{name}_tdsl_u8")
            nodes.append(cast(node.output[0], name))
            rewritten.append(name)
    if rewritten:
        del graph.node[:]
        graph.node.extend(nodes)
    return rewritten
