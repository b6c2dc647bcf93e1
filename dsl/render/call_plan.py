"""The plan of a :class:`~tdsl.model.call_replacement.CallReplacement`: the payload symbols
as printed, the pattern match on the matched op (located at ``<name>.pattern``) and the
handles the call uses. Emits no text."""

from __future__ import annotations

from dataclasses import dataclass

from .. import bindings
from ..model.call_replacement import CallReplacement, payload_module
from ..model.matchers import dag_leaf
from ..model.mlir_text import indented, relocated
from ..targets import Target
from .matcher_plan import located_leaf
from .plan import ActionPlan


@dataclass(frozen=True)
class CallPlan(ActionPlan):
    """``symbols``: the payload ops, printed and indented for the script's module; ``dag``:
    the ``cast_compatible_dag_from_root`` on ``%op`` yielding ``ins`` and ``outs``;
    ``imports``: the symbol names imported, in order (``%symbol<i>``); ``callee``: the
    index of the called function among them."""

    symbols: str
    dag: str
    ins: str
    outs: str
    imports: tuple[str, ...]
    callee: int


def plan_call_replacement(strategy: CallReplacement, symbol: str, target: Target) -> CallPlan:
    """The plan of ``strategy``'s action (its pattern's values prefixed ``c_``; the printer
    names the match's results ``%inputs`` and ``%outputs``)."""
    path = f"{strategy.name}.pattern"
    text = located_leaf(dag_leaf(strategy.pattern, "p_", "%op"), "c_", path)
    head, _, closing = text.rpartition("\n")
    dag = f'{head}\n      transform.yield loc("{path}")\n{closing}'
    names = tuple(strategy.symbol_names())
    return CallPlan(
        symbols=_symbols(strategy),
        dag=dag,
        ins="%c_inputs",
        outs="%c_outputs",
        imports=names,
        callee=names.index(strategy.function),
    )


def _symbols(strategy: CallReplacement) -> str:
    """The payload ops as the MLIR printer writes them, each op located at
    ``<name>.symbols[i]``, indented for the script's module."""
    module = bindings.parse(payload_module(strategy.symbols))
    with bindings.context():
        texts = [str(child.operation.get_asm(enable_debug_info=True)) for child in module.body.operations]
    return "\n".join(indented(relocated(t, f"{strategy.name}.symbols[{i}]"), 2) for i, t in enumerate(texts))
