"""Rewriting every op of one name in a linalg module, in process with the MLIR bindings:
the walk, the static-shape filter, the verifier and the printing that the payload rewrites
(:mod:`.depthwise`, :mod:`.conv1d`) share."""

from __future__ import annotations

from typing import Any, Callable

from . import _ir, context
from .attributes import convert


def int_list(attr: Any) -> list[int]:
    """A dense integer attribute (a conv's ``strides`` / ``dilations``, a pad's
    ``static_low``) as a list, through the one attribute converter."""
    value = convert(attr)
    ints = [v for v in value if isinstance(v, int)] if isinstance(value, tuple) else []
    assert isinstance(value, tuple) and len(ints) == len(value), f"a dense integer attribute, received {attr}"
    return ints


def rewrite_ops(
    text: str,
    op_name: str | tuple[str, ...],
    rewrite: Callable[[Any], None],
    select: Callable[[Any], bool] | None = None,
) -> tuple[str, int]:
    """``text`` with ``rewrite`` applied to every op named ``op_name`` (or one of those names)
    whose operands all have static shapes and that ``select`` accepts (found first, then
    rewritten in order), verified and printed without locations, and how many were
    rewritten; ``text`` itself when none was."""
    names = (op_name,) if isinstance(op_name, str) else op_name
    ir = _ir()
    with context():
        module = ir.Module.parse(text)
        found: list[Any] = []

        def visit(op: Any) -> Any:
            if (
                op.name in names
                and all(ir.RankedTensorType(v.type).has_static_shape for v in op.operands)
                and (select is None or select(op))
            ):
                found.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        if not found:
            return text, 0
        for op in found:
            rewrite(op)
        module.operation.verify()
        return str(module.operation.get_asm(enable_debug_info=False)), len(found)
