"""Reading a matcher sequence into tdsl matcher leaves.

:func:`read_matcher` walks the ops of a ``transform.named_sequence`` used as a
``foreach_match`` matcher: each op that checks the candidate op becomes (part of) a leaf
(``operation_name`` -> :class:`OpNameMatch`, ``iree.match.contraction`` / ``convolution`` /
``attention`` / ``online_attention`` with their ``dims_equal`` -> the typed matchers,
``get_operand`` with ``cast_compatible_type`` / ``dim_is_multiple_of`` / ``dim_bounds`` ->
:class:`OperandMatch`, ``has_no_lowering_config``, ``cast_compatible_dag_from_root`` ->
:class:`PackMatch` or :class:`DagMatch`, tdsl's consumer check -> :class:`ConsumerMatch`,
``get_operand`` + ``get_defining_op`` + ``operation_name`` -> :class:`ProducerMatch`);
``transform.include`` of another matcher is inlined; ``transform.param.constant`` values
(a tuning spec's configs) are collected for the action. object other op raises
:class:`~tdsl.importer.problems.Unsupported` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from ..bindings import Attr, MapA, TypeA, Unit
from ..model.kinds import MatcherKind
from ..model.matchers import ConsumerMatch, ContractionMatch, NoLoweringConfigMatch, OpNameMatch
from .dag_patterns import read_dag
from .ir import Module, Op, Sequence
from .matcher_parts import (
    ATTENTION_GROUPS,
    CONTRACTION_GROUPS,
    CONVOLUTION_GROUPS,
    OperandChecks,
    PendingMatch,
    finish,
    fold_bounds,
    is_bound_of,
)
from .problems import Unsupported


@dataclass
class Leaf:
    """One matcher leaf read from a sequence: the model, the location path of its ops (a
    tdsl render's ``loc("set.rules[i].match.matchers[j]")``), and the line of its first op."""

    matcher: MatcherKind
    path: Optional[str]
    line: Optional[int]


@dataclass
class ReadMatcher:
    """A matcher sequence read: its leaves in order, the values it yields (the candidate
    op first) and the parameter constants it defines (value id -> attribute)."""

    leaves: list[Leaf]
    yields: tuple[int, ...]
    params: dict[int, Attr]
    notes: list[tuple[Optional[int], str]] = field(default_factory=list)


def _type(op: Op, name: str) -> str:
    value = op.attr(name)
    if not isinstance(value, TypeA):
        raise Unsupported(op.name, op.line, f"expected the element type {name}")
    return value.text


def _maps(op: Op) -> Optional[tuple[str, ...]]:
    value = op.attr("indexing_maps")
    if value is None:
        return None
    if not isinstance(value, tuple) or not all(isinstance(m, MapA) for m in value):
        raise Unsupported(op.name, op.line, "expected indexing_maps as affine maps")
    return tuple(m.text for m in value if isinstance(m, MapA))


def _loc_leaf(op: Op) -> Optional[str]:
    """The leaf part of a tdsl render's location: ``s.rules[0].match.matchers[1]`` of
    ``s.rules[0].match.matchers[1].m`` (the path up to ``match`` or ``matchers[j]``)."""
    if op.loc is None or ".match" not in op.loc:
        return None
    head, _, tail = op.loc.partition(".match")
    path = head + ".match"
    if tail.startswith(".matchers["):
        end = tail.index("]") + 1
        path += tail[:end]
    return path


def _loc_field(op: Op, leaf_path: Optional[str]) -> Optional[str]:
    """The field after the leaf path in a tdsl location (``k_min``), if any."""
    if op.loc is None or leaf_path is None or not op.loc.startswith(leaf_path + "."):
        return None
    return op.loc[len(leaf_path) + 1 :]


class _MatcherReader:
    def __init__(self, module: Module, sequence: Sequence):
        self.module = module
        self.sequence = sequence
        self.candidate = sequence.args[0] if sequence.args else -1
        self.pending: list[Union[PendingMatch, OperandChecks, Leaf]] = []  # in order of first op
        self.groups: dict[int, tuple[PendingMatch, str]] = {}
        self.operands: dict[int, OperandChecks] = {}
        self.producers: dict[int, OperandChecks] = {}
        self.params: dict[int, Attr] = {}
        self.notes: list[tuple[Optional[int], str]] = []
        self.yields: tuple[int, ...] = ()
        self.aliases: dict[int, int] = {}

    def _is_candidate(self, value: int) -> bool:
        return self.aliases.get(value, value) == self.candidate

    def _need_candidate(self, op: Op, position: int = 0) -> None:
        if not op.operands or not self._is_candidate(op.operands[position]):
            raise Unsupported(
                op.name, op.line, "a check on another op than the candidate (tdsl matchers check the matched op)"
            )

    def read(self, ops: list[Op], top: bool = True) -> None:
        for op in ops:
            self.op(op, top)

    def op(self, op: Op, top: bool) -> None:
        """Reads one op of the sequence (``top``: of the sequence itself, not an included one)."""
        if op.name == "transform.yield":
            if top:
                self.yields = tuple(self.aliases.get(v, v) for v in op.operands)
            return
        read = _OP_READERS.get(op.name)
        if read is None:
            raise Unsupported(op.name, op.line, "tdsl has no matcher for this op")
        read(self, op)

    def _operation_name(self, op: Op) -> None:
        names = op.attr("op_names")
        if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
            raise Unsupported(op.name, op.line, "expected op_names")
        producer = self.producers.get(op.operands[0]) if op.operands else None
        if producer is not None:
            if producer.producer_names is not None:
                raise Unsupported(op.name, op.line, "a second operation_name on the same producer")
            producer.producer_names = tuple(str(n) for n in names)
            return
        self._need_candidate(op)
        self.pending.append(self._leaf(OpNameMatch(names=tuple(str(n) for n in names)), op))

    def _defining_op(self, op: Op) -> None:
        operand = self._operand(op)
        if operand.producer is not None or operand.result:
            raise Unsupported(op.name, op.line, "one producer check on one operand of the candidate (ProducerMatch)")
        operand.producer = op.results[0]
        self.producers[op.results[0]] = operand

    def _no_lowering_config(self, op: Op) -> None:
        self._need_candidate(op)
        self.pending.append(self._leaf(NoLoweringConfigMatch(), op))

    def _contraction(self, op: Op) -> None:
        self._need_candidate(op)
        fields: dict[str, object] = {
            "lhs_type": _type(op, "lhs_type"),
            "rhs_type": _type(op, "rhs_type"),
            "output_type": _type(op, "output_type"),
        }
        self._groups(op, "contraction", fields, CONTRACTION_GROUPS)

    def _convolution(self, op: Op) -> None:
        self._need_candidate(op)
        fields: dict[str, object] = {
            "lhs_type": _type(op, "lhs_type"),
            "rhs_type": _type(op, "rhs_type"),
            "output_type": _type(op, "output_type"),
        }
        self._groups(op, "convolution", fields, CONVOLUTION_GROUPS)

    def _attention(self, op: Op) -> None:
        self._need_candidate(op)
        online = op.name.endswith("online_attention")
        types = ("query_type", "key_type", "value_type", "scale_type", "output_type", "max_type", "sum_type")
        attention: dict[str, object] = {"op": "online_attention" if online else "attention"}
        for t in types:
            if op.attr(t) is not None:
                attention[t] = _type(op, t)
        self._groups(op, "attention", attention, ATTENTION_GROUPS)

    def _dims_equal(self, op: Op) -> None:
        found = self.groups.get(op.operands[0])
        if found is None:
            raise Unsupported(
                op.name,
                op.line,
                "dims_equal on a parameter that is no dimension group of a contraction, convolution or attention match",
            )
        pending, group = found
        values = op.attr("expected_values")
        if not isinstance(values, tuple) or not all(isinstance(v, int) for v in values):
            raise Unsupported(op.name, op.line, "expected a list of sizes")
        if group in pending.dims:
            raise Unsupported(op.name, op.line, f"a second dims_equal on the {group} group (tdsl keeps one per group)")
        pending.dims[group] = tuple(int(v) for v in values if isinstance(v, int))

    def _get_operand(self, op: Op) -> None:
        self._need_candidate(op)
        positions = op.attr("raw_position_list")
        if (
            op.attr("is_inverted") is not None
            or op.attr("is_all") is not None
            or not isinstance(positions, tuple)
            or len(positions) != 1
        ):
            raise Unsupported(op.name, op.line, "one operand position (tdsl's operand matcher checks one operand)")
        index = positions[0]
        assert isinstance(index, int)
        operand = OperandChecks(index, op.name.endswith("result"), _loc_leaf(op), op.line)
        self.operands[op.results[0]] = operand
        self.pending.append(operand)

    def _cast_compatible_type(self, op: Op) -> None:
        operand = self._operand(op)
        target = op.attr("target_type")
        if not isinstance(target, TypeA) or not target.text.startswith("tensor<"):
            raise Unsupported(op.name, op.line, "a ranked tensor type (tdsl's operand matcher)")
        if operand.type is not None:
            raise Unsupported(op.name, op.line, "a second type on the same operand")
        operand.type = target.text

    def _dim_is_multiple_of(self, op: Op) -> None:
        operand = self._operand(op)
        dim, size = op.attr("dim"), op.attr("size")
        assert isinstance(dim, int) and isinstance(size, int)
        operand.dims.setdefault(dim, {})
        if "multiple_of" in operand.dims[dim]:
            raise Unsupported(op.name, op.line, f"a second multiple_of on dim {dim}")
        operand.dims[dim]["multiple_of"] = size
        operand.checks.append(("multiple_of", dim, size, None))

    def _dim_bounds(self, op: Op) -> None:
        operand = self._operand(op)
        dim = op.attr("dim")
        lower, upper = op.attr("lower_bound"), op.attr("upper_bound")
        assert isinstance(dim, int)
        entry = operand.dims.setdefault(dim, {})
        if "min" in entry or "max" in entry:
            raise Unsupported(op.name, op.line, f"a second dim_bounds on dim {dim}")
        if isinstance(lower, int):
            entry["min"] = lower
        if isinstance(upper, int):
            entry["max"] = upper
        operand.checks.append(
            ("bounds", dim, lower if isinstance(lower, int) else None, upper if isinstance(upper, int) else None)
        )

    def _dag(self, op: Op) -> None:
        self._need_candidate(op)
        self.pending.append(self._leaf(read_dag(op), op))

    def _structured(self, op: Op) -> None:
        self._need_candidate(op)
        self.pending.append(self._consumer(op))

    def _param_constant(self, op: Op) -> None:
        value = op.attr("value")
        assert value is not None
        self.params[op.results[0]] = value

    def _leaf(self, matcher: MatcherKind, op: Op) -> Leaf:
        return Leaf(matcher, _loc_leaf(op), op.line)

    def _operand(self, op: Op) -> OperandChecks:
        found = self.operands.get(op.operands[0])
        if found is None:
            raise Unsupported(
                op.name, op.line, "a check on a value that is no operand of the candidate (transform.get_operand)"
            )
        return found

    def _groups(self, op: Op, kind: str, fields: dict[str, object], groups: tuple[str, ...]) -> None:
        maps = _maps(op)
        if maps is not None:
            fields["maps"] = maps
        pending = PendingMatch(kind, fields, {}, _loc_leaf(op), op.line)
        for value, group in zip(op.results, groups):
            self.groups[value] = (pending, group)
        self.pending.append(pending)

    def _consumer(self, op: Op) -> Leaf:
        """tdsl's consumer check: ``match.structured`` yielding ``result[0] single``, then
        ``operation_name`` on what it yields (the next op)."""
        block = op.body
        ok = (
            len(block.ops) == 2
            and block.ops[0].name == "transform.match.structured.result"
            and block.ops[0].attr("position") == 0
            and isinstance(block.ops[0].attr("single"), Unit)
            and block.ops[1].name == "transform.match.structured.yield"
        )
        if not ok:
            raise Unsupported(
                op.name, op.line, "tdsl's structured match holds only the single user of result 0 (ConsumerMatch)"
            )
        self.consumer_of = op.results[0]
        return Leaf(ConsumerMatch(names=("placeholder.op",)), _loc_leaf(op), op.line)

    def _include(self, op: Op) -> None:
        target = op.attr("target")
        name = getattr(target, "name", None)
        callee = self.module.sequence(name) if isinstance(name, str) else None
        if callee is None:
            raise Unsupported(op.name, op.line, f"an included matcher defined in the spec (@{name})")
        if len(op.operands) != 1 or not self._is_candidate(op.operands[0]):
            raise Unsupported(op.name, op.line, "an include that passes only the candidate op")
        inner = _MatcherReader(self.module, callee)
        inner.read(callee.op.body.ops)
        if inner.yields and inner.yields[0] == inner.candidate and op.results:
            self.aliases[op.results[0]] = self.candidate
        for extra, value in zip(op.results[1:], inner.yields[1:]):
            if value in inner.params:
                self.params[extra] = inner.params[value]
        self.pending.extend(inner.pending)
        self.groups.update(inner.groups)
        self.operands.update(inner.operands)
        self.notes.append((op.line, f"the included matcher @{name} is inlined"))


_OP_READERS: dict[str, Callable[[_MatcherReader, Op], None]] = {
    "transform.match.operation_name": _MatcherReader._operation_name,
    "transform.get_defining_op": _MatcherReader._defining_op,
    "transform.iree.match.has_no_lowering_config": _MatcherReader._no_lowering_config,
    "transform.iree.match.contraction": _MatcherReader._contraction,
    "transform.iree.match.convolution": _MatcherReader._convolution,
    "transform.iree.match.attention": _MatcherReader._attention,
    "transform.iree.match.online_attention": _MatcherReader._attention,
    "transform.iree.match.dims_equal": _MatcherReader._dims_equal,
    "transform.get_operand": _MatcherReader._get_operand,
    "transform.get_result": _MatcherReader._get_operand,
    "transform.iree.match.cast_compatible_type": _MatcherReader._cast_compatible_type,
    "transform.iree.match.dim_is_multiple_of": _MatcherReader._dim_is_multiple_of,
    "transform.iree.match.dim_bounds": _MatcherReader._dim_bounds,
    "transform.iree.match.cast_compatible_dag_from_root": _MatcherReader._dag,
    "transform.match.structured": _MatcherReader._structured,
    "transform.param.constant": _MatcherReader._param_constant,
    "transform.include": _MatcherReader._include,
}
"""The reader of each op a matcher sequence may hold (transform.yield aside)."""


TYPED_OPS = frozenset(_OP_READERS) | {"transform.yield"}
"""The ops the typed matcher reader knows."""


def _chunks(debug_text: str) -> list[tuple[Optional[str], str]]:
    """The top-level ops of a printed (with debug info) named sequence: (leaf path of the
    op's location, the op's lines)."""
    lines = debug_text.split("\n")[1:-1]
    chunks: list[list[str]] = []
    for line in lines:
        if line.startswith("  ") and not line.startswith(("   ", "  }", "  ^")):
            chunks.append([line])
        elif chunks:
            chunks[-1].append(line)
    out = []
    for chunk in chunks:
        if chunk[0].startswith("  transform.yield"):
            continue
        text = "\n".join(chunk)
        last = text.rfind('loc("')
        loc = text[last + 5 : text.find('"', last + 5)] if last >= 0 else None
        out.append((_leaf_of(loc), text))
    return out


def _leaf_of(loc: Optional[str]) -> Optional[str]:
    if loc is None or ".match" not in loc:
        return None
    head, _, tail = loc.partition(".match")
    path = head + ".match"
    if tail.startswith(".matchers["):
        path += tail[: tail.index("]") + 1]
    return path


def _raw_leaf(chunks: list[str], path: str) -> Leaf:
    """A :class:`RawMatch` rebuilt from the ops tdsl inlined for it (as the printer spells
    them: the candidate op is ``%arg0``)."""
    from ..model.mlir_text import strip_locations
    from ..model.raw import RawMatch

    body = "\n".join(strip_locations(c) for c in chunks)
    text = (
        "transform.named_sequence @raw(%arg0: !transform.any_op {transform.readonly}) -> !transform.any_op {\n"
        + "\n".join(line[2:] if line.startswith("  ") else line for line in body.split("\n"))
        + "\n  transform.yield %arg0 : !transform.any_op\n}"
    )
    return Leaf(RawMatch(sequence=text), path, None)


def _raw_paths(module: Module, sequence: Sequence) -> set[str]:
    """In a tdsl render: the leaf paths whose ops the typed reader cannot read (raw leaves)."""
    groups: dict[str, list[Op]] = {}
    for op in sequence.op.body.ops:
        path = _loc_leaf(op)
        if path is not None and op.name != "transform.yield":
            groups.setdefault(path, []).append(op)
    raw = set()
    for path, ops in groups.items():
        trial = _MatcherReader(module, sequence)
        trial.consumer_of = -1
        try:
            for i, op in enumerate(ops):
                if (
                    op.name == "transform.match.operation_name"
                    and i
                    and ops[i - 1].name == "transform.match.structured"
                ):
                    continue
                trial.op(op, False)
        except Unsupported:
            raw.add(path)
    return raw


def read_matcher(module: Module, sequence: Sequence, own: bool = False) -> ReadMatcher:
    """The leaves of the matcher ``sequence``; raises :class:`Unsupported` for an op tdsl
    cannot express. In a tdsl render (``own``), a leaf with an op the typed reader does not
    know was a :class:`RawMatch`: it is rebuilt from its (located) ops."""
    if len(sequence.args) != 1 or sequence.arg_types[0] != "!transform.any_op":
        raise Unsupported(
            "transform.named_sequence", sequence.line, f"a matcher @{sequence.name} with one !transform.any_op argument"
        )
    ops, raw_leaves = _split_raw_leaves(module, sequence, own)
    reader = _MatcherReader(module, sequence)
    reader.consumer_of = -1
    _read_ops(reader, ops, sequence)
    leaves = _assemble([*reader.pending, *raw_leaves])
    return ReadMatcher(leaves, reader.yields, reader.params, reader.notes)


def _split_raw_leaves(module: Module, sequence: Sequence, own: bool) -> tuple[list[Op], list[Leaf]]:
    """The ops the typed reader reads, and (in a tdsl render) the raw leaves rebuilt from
    the others."""
    ops = sequence.op.body.ops
    raw_paths = _raw_paths(module, sequence) if own else set()
    if not raw_paths:
        return ops, []
    groups: dict[str, list[str]] = {}
    for path, text in _chunks(sequence.op.debug_text):
        if path in raw_paths:
            groups.setdefault(path, []).append(text)
    raw_leaves = [_raw_leaf(texts, path) for path, texts in groups.items()]
    return [op for op in ops if op.name == "transform.yield" or _loc_leaf(op) not in raw_paths], raw_leaves


def _read_ops(reader: _MatcherReader, ops: list[Op], sequence: Sequence) -> None:
    """Reads ``ops`` in order: tdsl's consumer check takes the ``operation_name`` after it
    as the consumer's names. The sequence must yield the candidate op first."""
    i = 0
    while i < len(ops):
        op = ops[i]
        reader.op(op, True)
        if op.name == "transform.match.structured":
            nxt = ops[i + 1] if i + 1 < len(ops) else None
            if nxt is None or nxt.name != "transform.match.operation_name" or nxt.operands[0] != op.results[0]:
                raise Unsupported(
                    op.name, op.line, "the consumer check followed by transform.match.operation_name on the user"
                )
            names = nxt.attr("op_names")
            assert isinstance(names, tuple)
            last = reader.pending[-1]
            assert isinstance(last, Leaf)
            last.matcher = ConsumerMatch(names=tuple(str(n) for n in names))
            i += 2
            continue
        i += 1
    if not reader.yields or reader.yields[0] != reader.candidate:
        line = ops[-1].line if ops else sequence.line
        raise Unsupported("transform.yield", line, f"a matcher @{sequence.name} that yields the op it matched first")


def _assemble(items: list[Union[PendingMatch, OperandChecks, Leaf]]) -> list[Leaf]:
    """The leaves of the parts read, in order; a contraction takes the ``dim_bounds``
    checks after it that are its ``k_min`` / ``size_max``."""
    leaves: list[Leaf] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if isinstance(item, Leaf):
            leaves.append(item)
            continue
        leaf = Leaf(finish(item), item.path, item.line)
        if isinstance(item, PendingMatch) and item.kind == "contraction":
            assert isinstance(leaf.matcher, ContractionMatch)
            bounds: list[OperandChecks] = []
            while i + len(bounds) < len(items):
                candidate = items[i + len(bounds)]
                if not isinstance(candidate, OperandChecks) or not is_bound_of(item, candidate):
                    break
                bounds.append(candidate)
            folded, used = fold_bounds(leaf.matcher, bounds)
            if used:
                leaf.matcher = folded
                i += used
        leaves.append(leaf)
    return leaves
