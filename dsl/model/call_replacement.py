"""Replacing a matched DAG with a call: a :class:`CallReplacement` runs in the preprocessing
spec and swaps what it matches for a call to a payload function the set carries (IREE's
``samples/custom_dispatch`` form: an external kernel behind a ``flow.dispatch``).

The action matches ``pattern`` again from the matched op
(``transform.iree.match.cast_compatible_dag_from_root``: the DAG's block arguments are the
call's operands, the root's result the value it replaces), imports ``symbols`` (payload
ops as MLIR: the ``util.func`` named ``function`` and what it refers to, e.g. a
``stream.executable``) into the payload module where it is undefined, and emits
``transform.util.cast_and_call @function`` after the root, operand types cast with
``transform.type_conversion.tensor.cast_shape_dynamic_dims``. ``cast_and_call`` only rewires
uses, so the entry then runs ``transform.apply_dce`` and the ``inline`` pass on the payload
root once. The symbols are rendered at the top of the script, as the original spec holds them.

Example (the matcher is a :class:`~tdsl.model.matchers.DagMatch` with the same pattern)::

    CallReplacement(name="mlp", pattern=PATTERN, function="call_mlp", symbols=(EXECUTABLE, CALL_MLP))
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import ValidationError, model_validator

from .. import bindings
from ..errors import StrategyError
from .base import Described, SymbolName, problem
from .kinds import Backend, Injection, StrategyKind
from .matchers import DagMatch
from .mlir_text import parse_problem

_BLOCK = re.compile(r"\^bb0\(([^)]*)\)")


def pattern_arguments(pattern: str) -> int:
    """The number of block arguments of a DAG pattern (``^bb0(%a: t, ...)``)."""
    found = _BLOCK.search(pattern)
    if found is None or not found.group(1).strip():
        return 0
    return found.group(1).count("%")


def payload_module(symbols: tuple[str, ...]) -> str:
    """``symbols`` (top-level payload ops) wrapped in a module."""
    return "module {\n" + "\n".join(symbols) + "\n}\n"


class CallReplacement(StrategyKind):
    """Replaces the matched DAG with a call to a payload function the set carries; see the
    module docstring."""

    injection: ClassVar[Injection] = Injection.PREPROCESSING
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU, Backend.ROCM})
    template: ClassVar[str] = "strategies/call_replacement.mlir.j2"

    kind: Literal["call_replacement"] = "call_replacement"
    """The discriminator: a cast_and_call of a payload function in the preprocessing spec."""
    name: SymbolName
    """The strategy's name: its action symbol and the location of its ops."""
    pattern: str
    """The DAG replaced, as DagMatch.pattern: its block arguments are the call's operands."""
    function: SymbolName
    """The util.func called instead of the DAG (one of symbols)."""
    symbols: tuple[str, ...]
    """The payload ops imported where undefined, as MLIR: the function and what it refers to."""

    @model_validator(mode="after")
    def _check(self) -> "CallReplacement":
        try:
            DagMatch(pattern=self.pattern)
        except (StrategyError, ValidationError) as err:
            raise problem("pattern", "a DAG pattern as DagMatch takes it", Described(str(err))) from None
        if not self.symbols:
            raise problem("symbols", "at least the util.func named by function", [])
        found = parse_problem(payload_module(self.symbols))
        if found is not None:
            raise problem(
                "symbols", f"payload ops that parse and verify with IREE 3.13 ({found})", Described("the symbols")
            )
        names = self.symbol_names()
        if len(names) != len(self.symbols) or len(set(names)) != len(names):
            raise problem("symbols", "one top-level op with a distinct sym_name each", Described(f"{names}"))
        ops = dict(zip(names, self._ops()))
        callee = ops.get(self.function)
        if callee is None or callee[0] != "util.func":
            raise problem("function", f"the name of a util.func among symbols ({', '.join(names)})", self.function)
        expected = pattern_arguments(self.pattern)
        if callee[1] != expected:
            raise problem(
                "function",
                f"a util.func taking the pattern's {expected} block arguments",
                Described(f"@{self.function} taking {callee[1]}"),
            )
        return self

    def _ops(self) -> list[tuple[str, int]]:
        """(op name, argument count of its first region's block) of each symbol."""
        module = bindings.parse(payload_module(self.symbols))
        out = []
        with bindings.context():
            for child in module.body.operations:
                op: Any = child.operation
                blocks = list(op.regions[0].blocks) if len(op.regions) else []
                out.append((op.name, len(blocks[0].arguments) if blocks else 0))
        return out

    def defined_symbols(self) -> tuple[str, ...]:
        return tuple(self.symbol_names())

    def symbol_names(self) -> list[str]:
        """The sym_name of each op of ``symbols``, in order."""
        module = bindings.parse(payload_module(self.symbols))
        with bindings.context():
            return [
                str(child.operation.attributes["sym_name"]).strip('"')
                for child in module.body.operations
                if "sym_name" in child.operation.attributes
            ]
