"""The raw-MLIR escape hatches: what ``tdsl import --allow-raw`` keeps of a spec that tdsl's
typed kinds cannot express, verified and rendered back verbatim.

* :class:`RawConfig` (a tuning-spec strategy): annotates the matched op with attributes
  given as MLIR text, e.g. a ``compilation_info`` whose lowering config has entries tdsl
  does not model. Each value is parsed and stored as the MLIR printer spells it.
* :class:`RawTuningAction`, :class:`RawPreprocessingAction`, :class:`RawCodegenAction`:
  an action ``transform.named_sequence`` kept as it is (plus the ``helpers`` sequences it
  refers to), for the tuning spec, the preprocessing spec or the codegen library. It is
  renamed to the rule's action symbol (helpers to ``<symbol>_<helper>``) and every op is
  located at the strategy's name; nothing else changes.
* :class:`RawMatch` (a matcher leaf): a matcher ``transform.named_sequence`` whose ops
  are inlined in the rule's matcher sequence (its SSA values prefixed with the leaf's
  prefix, its argument is the candidate op, its final ``transform.yield`` dropped).

Every raw kind sets ``raw = True``; the compile report says such a rule is raw MLIR.
Their templates print what :meth:`RawAction.rendered` / :meth:`RawMatch.inlined` return.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Optional

from pydantic import AfterValidator, Strict, model_validator

from .. import bindings
from .base import Described, StrategyModel, SymbolName, problem
from .kinds import Backend, Injection, MatcherKind, StrategyKind
from .mlir_text import (
    canonical_attribute,
    in_module,
    indented,
    parse_problem,
    relocated,
    rename_symbols,
    rename_values,
    sequence_name,
    symbols,
)

_BOTH = frozenset({Backend.LLVM_CPU, Backend.ROCM})


def _attribute(value: str) -> str:
    printed = canonical_attribute(value)
    if printed is None:
        raise problem("", "an MLIR attribute that parses with IREE 3.13", value)
    return printed


AttributeText = Annotated[str, Strict(), AfterValidator(_attribute)]
"""An MLIR attribute as text, stored as the MLIR printer spells it."""


class RawAnnotation(StrategyModel):
    """``transform.annotate %op "<name>" = <value>`` (``value`` None: a unit annotation)."""

    name: str
    """The attribute name of transform.annotate %op "<name>"."""
    value: Optional[AttributeText] = None
    """The attribute value as MLIR text (None: a unit annotation)."""

    @model_validator(mode="after")
    def _check(self) -> "RawAnnotation":
        if not self.name or not self.name.isprintable() or '"' in self.name or "\\" in self.name:
            raise problem("name", "an attribute name without quotes or backslashes", self.name)
        return self


class RawConfig(StrategyKind):
    """Annotates each matched op with ``annotations`` (MLIR attributes as text), in order,
    and marks it like every tuning-spec action (tdsl.applied, tdsl.rule)."""

    injection: ClassVar[Injection] = Injection.TUNING_SPEC
    backends: ClassVar[frozenset[Backend]] = _BOTH
    template: ClassVar[str] = "strategies/raw_config.mlir.j2"
    raw: ClassVar[bool] = True

    kind: Literal["raw_config"] = "raw_config"
    """The discriminator: raw transform.annotate ops in the tuning spec."""
    name: SymbolName
    """The strategy's name: its action sequence symbol and the location of the annotate ops."""
    annotations: tuple[RawAnnotation, ...]
    """The transform.annotate ops applied to each matched op, in order."""

    @model_validator(mode="after")
    def _check(self) -> "RawConfig":
        if not self.annotations:
            raise problem("annotations", "at least one annotation", [])
        return self


def _check_sequences(sequence: str, helpers: tuple[str, ...], what: str) -> tuple[Any, Any]:
    """Raises unless ``helpers`` and ``sequence`` (named sequences) parse and verify
    together; returns the parsed module (keep it alive) and the ``sequence`` op."""
    found = parse_problem(in_module("\n".join((*helpers, sequence))))
    if found is not None:
        raise problem(
            "sequence", f"{what} that parses and verifies with IREE 3.13 ({found})", Described("the sequence")
        )
    module = bindings.parse(in_module("\n".join((*helpers, sequence))))
    ops = [op.operation for op in module.body.operations]
    if len(ops) != len(helpers) + 1 or ops[-1].name != "transform.named_sequence":
        received = "no op (empty or only comments)" if len(ops) == len(helpers) else f"{len(ops) - len(helpers)} ops"
        raise problem("sequence", f"one transform.named_sequence ({what})", Described(received))
    last = ops[-1]
    if not len(last.regions[0].blocks):
        raise problem("sequence", f"a transform.named_sequence with a body ({what})", Described("a declaration"))
    return module, last


class RawAction(StrategyKind):
    """Base of the raw actions: ``sequence`` is one ``transform.named_sequence`` whose only
    argument is the matched op (``!transform.any_op``, readonly or consumed) and which
    returns nothing; ``helpers`` are the named sequences it refers to."""

    raw: ClassVar[bool] = True

    name: SymbolName
    """The strategy's name: the location of every op (the sequence is renamed to the rule's symbol)."""
    sequence: str
    """The action transform.named_sequence as MLIR: one !transform.any_op argument, no results."""
    helpers: tuple[str, ...] = ()
    """Named sequences the action refers to, renamed to <symbol>_<helper>."""

    @model_validator(mode="after")
    def _check_sequence(self) -> "RawAction":
        with bindings.context():
            _module, op = _check_sequences(self.sequence, self.helpers, "an action")
            signature = str(op.attributes["function_type"])
        if signature.replace(" ", "") != "(!transform.any_op)->()":
            raise problem(
                "sequence",
                "an action with one !transform.any_op argument and no results (the matched op)",
                Described(signature),
            )
        return self

    def _names(self) -> list[str]:
        """The symbols of ``helpers`` then of ``sequence``."""
        module = bindings.parse(in_module("\n".join((*self.helpers, self.sequence))))
        with bindings.context():
            return [sequence_name(op.operation) for op in module.body.operations]

    def _printed(self, symbol: str) -> list[str]:
        """Every sequence (helpers, then the action) printed with debug info, renamed: the
        action to ``symbol``, each helper to ``<symbol>_<helper>``."""
        names = self._names()
        mapping = {name: f"{symbol}_{name}" for name in names[:-1]}
        mapping[names[-1]] = symbol
        module = bindings.parse(in_module("\n".join((*self.helpers, self.sequence))))
        with bindings.context():
            texts = [str(op.operation.get_asm(enable_debug_info=True)) for op in module.body.operations]
        # The printer writes a bare yield as "transform.yield " (before its location).
        texts = [t.replace("transform.yield  loc(", "transform.yield loc(") for t in texts]
        return [
            indented(relocated(rename_symbols(t, mapping), self.name), 2).replace(
                "transform.yield  loc(", "transform.yield loc("
            )
            for t in texts
        ]

    def rendered(self, symbol: str) -> str:
        """The action sequence, named ``@<symbol>``, every op located at the strategy."""
        return self._printed(symbol)[-1]

    def rendered_helpers(self, symbol: str) -> str:
        """The helper sequences, named ``@<symbol>_<helper>`` (empty without helpers)."""
        return "\n".join(self._printed(symbol)[:-1])

    def referenced(self) -> list[str]:
        """Symbols the action refers to (its helpers' names among them)."""
        return symbols(self.sequence)


class RawTuningAction(RawAction):
    """A raw action in the codegen tuning spec (``--iree-codegen-tuning-spec-path``)."""

    injection: ClassVar[Injection] = Injection.TUNING_SPEC
    backends: ClassVar[frozenset[Backend]] = _BOTH
    template: ClassVar[str] = "strategies/raw_action.mlir.j2"

    kind: Literal["raw_tuning_action"] = "raw_tuning_action"
    """The discriminator: a raw action sequence in the tuning spec."""


class RawPreprocessingAction(RawAction):
    """A raw action in the preprocessing spec (``--iree-preprocessing-transform-spec-filename``)."""

    injection: ClassVar[Injection] = Injection.PREPROCESSING
    backends: ClassVar[frozenset[Backend]] = _BOTH
    template: ClassVar[str] = "strategies/raw_action.mlir.j2"

    kind: Literal["raw_preprocessing_action"] = "raw_preprocessing_action"
    """The discriminator: a raw action sequence in the preprocessing spec."""


class RawCodegenAction(RawAction):
    """A raw action in the codegen library (``--iree-codegen-transform-dialect-library``)."""

    injection: ClassVar[Injection] = Injection.CODEGEN_LIBRARY
    backends: ClassVar[frozenset[Backend]] = _BOTH
    template: ClassVar[str] = "strategies/raw_action.mlir.j2"

    kind: Literal["raw_codegen_action"] = "raw_codegen_action"
    """The discriminator: a raw action sequence in the codegen library."""


class RawMatch(MatcherKind):
    """A matcher kept as MLIR: ``sequence`` is a matcher ``transform.named_sequence`` whose
    first argument is the candidate op (readonly) and whose ``transform.yield`` yields it
    first (it may yield parameters after it; they are unused). Its ops are inlined in the
    rule's matcher sequence."""

    template: ClassVar[Optional[str]] = "matchers/raw.mlir.j2"
    raw: ClassVar[bool] = True

    kind: Literal["raw"] = "raw"
    """The discriminator: a raw matcher sequence inlined in the rule's matcher."""
    sequence: str
    """The matcher transform.named_sequence as MLIR: its argument is the op, its yield yields it first."""

    @model_validator(mode="after")
    def _check(self) -> "RawMatch":
        with bindings.context():
            _module, op = _check_sequences(self.sequence, (), "a matcher")
            block = op.regions[0].blocks[0]
            body = [o.operation for o in block.operations]
            arguments = list(block.arguments)
            if len(arguments) != 1 or str(arguments[0].type) != "!transform.any_op":
                raise problem(
                    "sequence",
                    "a matcher with one !transform.any_op argument (the candidate op)",
                    Described(str(op.attributes["function_type"])),
                )
            last = body[-1]
            if last.name != "transform.yield" or not len(last.operands) or last.operands[0] != arguments[0]:
                raise problem(
                    "sequence", "a matcher whose transform.yield yields its argument first", Described("another value")
                )
            if any(name in ("transform.include",) for name in (o.name for o in body)):
                raise problem(
                    "sequence",
                    "a matcher without transform.include (inline the included matcher)",
                    Described("an include"),
                )
        return self

    def inlined(self, prefix: str, path: str) -> str:
        """The matcher's ops on ``%op`` (values prefixed with ``prefix``, located at ``path``),
        indented as a leaf; the final yield left out."""
        module = bindings.parse(in_module(self.sequence))
        with bindings.context():
            op = next(iter(module.body.operations)).operation
            printed = str(op.get_asm(enable_debug_info=True))
        lines = printed.split("\n")
        body = lines[1:-1]
        while body and not body[-1].strip().startswith("transform.yield"):
            body.pop()
        body = body[:-1]
        text = "\n".join(line[2:] if line.startswith("  ") else line for line in body)
        return indented(rename_values(relocated(text, path), prefix, {"arg0": "op"}), 4)
