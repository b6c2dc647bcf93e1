"""The plan of a :class:`~tdsl.model.call_replacement.CallReplacement`: the payload symbols
as printed, the pattern match on the matched op (located at ``<name>.pattern``) and the
handles the call uses. Emits no text."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.call_replacement import CallReplacement
from ..model.matchers import dag_leaf
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
        symbols=strategy.printed_symbols(),
        dag=dag,
        ins="%c_inputs",
        outs="%c_outputs",
        imports=names,
        callee=names.index(strategy.function),
    )
