"""The buffers each dispatch function binds: the types of its
``hal.interface.binding.subspan`` ops (its operands and results as IREE binds them), read
with the bindings from the IR of a configured executable."""

from __future__ import annotations

import re
from typing import Any

from . import TensorType, _ir, _value, context
from .linalg import _shaped

SUBSPAN = "hal.interface.binding.subspan"

_DISPATCH_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([A-Za-z][A-Za-z0-9]*)>")


def _bound(t: Any) -> TensorType | None:
    """A subspan's type as a tensor type: a memref's shape and element, or those of the
    tensor inside a ``dispatch.tensor``; a dynamic dimension is -1; None where neither."""
    shaped = _shaped(t)
    if shaped is not None:
        return shaped
    found = _DISPATCH_TENSOR.search(str(t))
    if found is None:
        return None
    dims = [d for d in found.group(1).split("x") if d]
    return TensorType(tuple(-1 if d == "?" else int(d) for d in dims), found.group(2))


def bound_types(text: str) -> dict[str, tuple[TensorType | None, ...]]:
    """{dispatch function: the types of its subspans, in order} of the module in ``text``;
    a subspan whose type is neither a memref nor a dispatch tensor is None."""
    ir = _ir()
    found: dict[str, list[TensorType | None]] = {}
    with context():
        module = ir.Module.parse(text)

        def visit(op: Any, function: str | None) -> None:
            if op.name == "func.func" and "sym_name" in op.attributes:
                symbol = _value(op.attributes["sym_name"])
                function = symbol if isinstance(symbol, str) else function
            if op.name == SUBSPAN and function is not None:
                found.setdefault(function, []).append(_bound(op.results[0].type))
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        visit(child.operation, function)

        visit(module.operation, None)
    return {name: tuple(types) for name, types in found.items()}
