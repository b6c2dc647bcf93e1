"""Codegen-library actions that rewrite the matched op and leave its configuration to IREE:
``transform.structured.generalize`` of the matched op, then nothing but tdsl's markers on
the generic (and ``transform.print``, dropped with a note), read as a :class:`KernelRewrite`
(:func:`read_kernel_rewrite`)."""

from __future__ import annotations

from typing import Callable, Optional

from ..errors import StrategyError
from ..model.kernel_rewrite import KernelRewrite
from .actions import Marks, read_marker
from .ir import Sequence
from .problems import Unsupported

GENERALIZE = "transform.structured.generalize"


def read_kernel_rewrite(
    action: Sequence, name: str, note: Callable[[Optional[int], str], None]
) -> Optional[tuple[KernelRewrite, Marks]]:
    """The :class:`KernelRewrite` of ``action`` when its first op generalizes the matched op
    (None otherwise: another kind of action). An op after it other than tdsl's markers on
    the generic raises :class:`Unsupported` naming it."""
    ops = [op for op in action.op.body.ops if op.name not in ("transform.yield", "transform.print")]
    if not action.args or not ops or ops[0].name != GENERALIZE or ops[0].operands[:1] != (action.args[0],):
        return None
    generic = ops[0].results[0]
    marks = Marks()
    params: dict[int, object] = {}
    for op in ops[1:]:
        if op.name == "transform.param.constant":
            params[op.results[0]] = op.attr("value")
            continue
        label = op.attr("name") if op.name == "transform.annotate" else None
        value = params.get(op.operands[1]) if len(op.operands) > 1 else None
        if not (
            isinstance(label, str)
            and op.operands[0] == generic
            and read_marker(label, value if isinstance(value, (str, int)) else None, marks)
        ):
            raise Unsupported(op.name, op.line, "an action that only generalizes the matched op (tdsl's KernelRewrite)")
    for op in action.op.body.ops:
        if op.name == "transform.print":
            note(op.line, "transform.print (debug output of the transform interpreter) is not kept")
    try:
        return KernelRewrite(name=marks.name or name, generalize=True), marks
    except StrategyError as err:
        raise Unsupported(GENERALIZE, ops[0].line, f"a rewrite KernelRewrite accepts ({err})") from None
