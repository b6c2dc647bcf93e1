"""Reading a pair that replaces a DAG with a call to a function the spec defines (IREE's
``samples/custom_dispatch`` plugin specs) as a :class:`CallReplacement`, and the entry's
cleanup after it (``apply_dce``, the ``inline`` pass), which the kind renders itself.

The matcher is one ``cast_compatible_dag_from_root`` on the candidate op yielding its
inputs and outputs; the action takes them and runs ``get_defining_op`` of the outputs,
``get_nearest_symbol_table``, ``import_symbol .. if undefined`` of the spec's payload ops
and ``cast_and_call`` of one of them after the root with
``cast_shape_dynamic_dims``. Any other op is refused by name and line."""

from __future__ import annotations

from typing import Optional

from ..errors import StrategyError
from ..model.call_replacement import CallReplacement
from ..model.kinds import StrategyKind
from ..model.matchers import DagMatch
from .dag_patterns import read_dag
from .ir import Module, Op, Sequence
from .matchers import Leaf
from .problems import Unsupported

IMPORT = "transform.util.import_symbol"
CALL = "transform.util.cast_and_call"
CAST = "transform.type_conversion.tensor.cast_shape_dynamic_dims"


def replaces_with_call(action: Sequence) -> bool:
    """Whether ``action`` imports symbols of the spec (the call-replacement form)."""
    return any(op.name == IMPORT for op in action.op.body.ops)


def read_call_replacement(module: Module, matcher: Sequence, action: Sequence, name: str) -> tuple[Leaf, StrategyKind]:
    """The :class:`DagMatch` leaf and the :class:`CallReplacement` of the pair; raises
    :class:`Unsupported` at the first op outside the form."""
    dag = _matcher_dag(matcher)
    if len(action.args) != 2:
        raise Unsupported(
            "transform.named_sequence", action.line, "an action taking the DAG's inputs and outputs (two values)"
        )
    ins, outs = action.args
    ops = action.op.body.ops
    root = _expect(ops, 0, "transform.get_defining_op", (outs,), "the op defining the DAG's outputs").results[0]
    pattern = _pattern(dag)
    return Leaf(pattern, None, matcher.line), _read_call(module, action, ops[1:], root, (ins, outs), pattern, name)


def read_rendered_call(module: Module, action: Sequence, name: str) -> StrategyKind:
    """The :class:`CallReplacement` of tdsl's render of one: the action matches the pattern
    again on its op (``%c_inputs``, ``%c_outputs``), then imports and calls."""
    ops = action.op.body.ops
    first = _expect(ops, 0, "transform.iree.match.cast_compatible_dag_from_root", action.args[:1], "the pattern")
    pattern = _pattern(first)
    return _read_call(module, action, ops[1:], action.args[0], first.results, pattern, name)


def _pattern(dag: Op) -> DagMatch:
    pattern = read_dag(dag)
    if not isinstance(pattern, DagMatch):
        raise Unsupported(dag.name, dag.line, "a DAG pattern of more than one pack op to replace with a call")
    return pattern


def _read_call(
    module: Module,
    action: Sequence,
    ops: list[Op],
    root: int,
    values: tuple[int, ...],
    pattern: DagMatch,
    name: str,
) -> StrategyKind:
    """``ops`` from ``get_nearest_symbol_table`` of ``root`` to the final yield: the imports
    and the ``cast_and_call`` of one of them on ``values`` (the DAG's inputs and outputs)."""
    table = _expect(ops, 0, "transform.util.get_nearest_symbol_table", (root,), "its symbol table").results[0]
    imports: dict[int, str] = {}
    position = 1
    while position < len(ops) and ops[position].name == IMPORT:
        op = ops[position]
        symbol = getattr(op.attr("symbol"), "name", None)
        if op.operands != (table,) or op.attr("if_undefined") is None or not isinstance(symbol, str):
            raise Unsupported(op.name, op.line, "an import_symbol of a spec symbol into that table, if undefined")
        imports[op.results[0]] = symbol
        position += 1
    call = _expect(ops, position, CALL, None, "a cast_and_call of an imported function after the DAG's root")
    function = imports.get(call.operands[-1]) if len(call.operands) == 4 else None
    if function is None or call.operands[:3] != (root, *values) or call.attr("insert_after") is None:
        raise Unsupported(
            call.name, call.line, "a cast_and_call of an imported function on the DAG's values, after its root"
        )
    conversions = [o.name for block in call.regions[0] for o in block.ops] if call.regions else []
    if conversions != [CAST]:
        raise Unsupported(call.name, call.line, f"{CAST} as its only type conversion (received {conversions})")
    if len(ops) != position + 2 or ops[-1].name != "transform.yield":
        extra = ops[position + 1]
        raise Unsupported(extra.name, extra.line, "no op after the cast_and_call (tdsl's CallReplacement ends there)")
    symbols = _symbols(module, list(imports.values()), action)
    try:
        return CallReplacement(name=name, pattern=pattern.pattern, function=function, symbols=symbols)
    except StrategyError as err:
        raise Unsupported(call.name, call.line, f"a call replacement tdsl can render ({err})") from None


def _matcher_dag(matcher: Sequence) -> Op:
    ops = matcher.op.body.ops
    first = ops[0] if ops else None
    if (
        first is None
        or first.name != "transform.iree.match.cast_compatible_dag_from_root"
        or first.operands != matcher.args[:1]
        or len(ops) != 2
        or ops[1].operands != first.results
    ):
        where = first if first is not None and len(ops) != 2 else ops[-1] if ops else matcher.op
        raise Unsupported(
            where.name, where.line, "a matcher that only yields a cast_compatible_dag_from_root's inputs and outputs"
        )
    return first


def _expect(ops: list[Op], index: int, name: str, operands: Optional[tuple[int, ...]], what: str) -> Op:
    """``ops[index]``, which must be ``name`` on ``operands`` (with a result)."""
    op = ops[index] if index < len(ops) else None
    if op is None or op.name != name or (operands is not None and op.operands != operands) or not op.results:
        at = op if op is not None else ops[-1]
        raise Unsupported(at.name, at.line, f"{name} ({what}) at this point of a call replacement")
    return op


def _symbols(module: Module, names: list[str], action: Sequence) -> tuple[str, ...]:
    """The spec's payload ops named ``names``, as MLIR, in spec order."""
    found = {str(op.attr("sym_name")): op for op in module.others if isinstance(op.attr("sym_name"), str)}
    missing = [n for n in names if n not in found]
    if missing:
        raise Unsupported(IMPORT, action.line, f"the payload op @{missing[0]} in the spec")
    return tuple(op.text for op in module.others if op.attr("sym_name") in names)


def cleanup_ops(ops: list[Op], roots: set[int]) -> tuple[list[Op], list[Op]]:
    """The entry ops after its runs split into the cleanup a CallReplacement renders
    (``apply_dce`` and the ``inline`` pass on the payload root) and the rest."""
    cleanup, rest = [], []
    for op in ops:
        inline = op.name == "transform.apply_registered_pass" and op.attr("pass_name") == "inline"
        if (op.name == "transform.apply_dce" or inline) and op.operands and op.operands[0] in roots:
            cleanup.append(op)
        else:
            rest.append(op)
    return cleanup, rest
