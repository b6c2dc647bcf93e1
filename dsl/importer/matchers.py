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
(a tuning spec's configs) are collected for the action. Any other op raises
:class:`~tdsl.importer.problems.Unsupported` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from ..errors import StrategyError
from ..model.kinds import MatcherKind
from ..model.matchers import (
    AttentionMatch,
    ConsumerMatch,
    ProducerMatch,
    ContractionMatch,
    ConvolutionMatch,
    DagMatch,
    DimConstraint,
    NoLoweringConfigMatch,
    OperandMatch,
    OpNameMatch,
    PackMatch,
    contraction_with_layout,
)
from ..bindings import Attr, MapA, TypeA, Unit
from .ir import Module, Op, Sequence
from .problems import Unsupported

CONTRACTION_GROUPS = ("batch", "m", "n", "k")
CONVOLUTION_GROUPS = ("batch", "output_image", "output_channel", "filter", "input_channel", "depth", "strides", "dilations")
ATTENTION_GROUPS = ("batch", "m", "n", "k1", "k2")


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


@dataclass
class _Pending:
    """A leaf being assembled: its kind, fields, group handles and location."""

    kind: str
    fields: dict[str, Any]
    groups: dict[int, str]
    path: Optional[str]
    line: Optional[int]
    dims: dict[str, Optional[tuple[int, ...]]] = field(default_factory=dict)


@dataclass
class _Operand:
    index: int
    result: bool
    path: Optional[str]
    line: Optional[int]
    type: Optional[str] = None
    dims: dict[int, dict[str, int]] = field(default_factory=dict)
    checks: list[tuple[str, int, Optional[int], Optional[int]]] = field(default_factory=list)
    producer: Optional[int] = None
    """The handle of the operand's defining op (transform.get_defining_op), if taken."""
    producer_names: Optional[tuple[str, ...]] = None
    """The names operation_name requires of that producer (a ProducerMatch)."""


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
        self.pending: list[Any] = []  # _Pending, _Operand, Leaf, in order of first op
        self.groups: dict[int, tuple[_Pending, str]] = {}
        self.operands: dict[int, _Operand] = {}
        self.producers: dict[int, _Operand] = {}
        self.params: dict[int, Attr] = {}
        self.notes: list[tuple[Optional[int], str]] = []
        self.yields: tuple[int, ...] = ()
        self.aliases: dict[int, int] = {}

    def _is_candidate(self, value: int) -> bool:
        return self.aliases.get(value, value) == self.candidate

    def _need_candidate(self, op: Op, position: int = 0) -> None:
        if not op.operands or not self._is_candidate(op.operands[position]):
            raise Unsupported(op.name, op.line, "a check on another op than the candidate (tdsl matchers check the matched op)")

    def read(self, ops: list[Op], top: bool = True) -> None:
        for op in ops:
            self.op(op, top)

    def op(self, op: Op, top: bool) -> None:
        name = op.name
        if name == "transform.match.operation_name":
            names = op.attr("op_names")
            if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
                raise Unsupported(name, op.line, "expected op_names")
            producer = self.producers.get(op.operands[0]) if op.operands else None
            if producer is not None:
                if producer.producer_names is not None:
                    raise Unsupported(name, op.line, "a second operation_name on the same producer")
                producer.producer_names = tuple(str(n) for n in names)
                return
            self._need_candidate(op)
            self.pending.append(self._leaf(OpNameMatch(names=tuple(str(n) for n in names)), op))
        elif name == "transform.get_defining_op":
            operand = self._operand(op)
            if operand.producer is not None or operand.result:
                raise Unsupported(name, op.line, "one producer check on one operand of the candidate (ProducerMatch)")
            operand.producer = op.results[0]
            self.producers[op.results[0]] = operand
        elif name == "transform.iree.match.has_no_lowering_config":
            self._need_candidate(op)
            self.pending.append(self._leaf(NoLoweringConfigMatch(), op))
        elif name == "transform.iree.match.contraction":
            self._need_candidate(op)
            fields = {"lhs_type": _type(op, "lhs_type"), "rhs_type": _type(op, "rhs_type"), "output_type": _type(op, "output_type")}
            self._groups(op, "contraction", fields, CONTRACTION_GROUPS)
        elif name == "transform.iree.match.convolution":
            self._need_candidate(op)
            fields = {"lhs_type": _type(op, "lhs_type"), "rhs_type": _type(op, "rhs_type"), "output_type": _type(op, "output_type")}
            self._groups(op, "convolution", fields, CONVOLUTION_GROUPS)
        elif name in ("transform.iree.match.attention", "transform.iree.match.online_attention"):
            self._need_candidate(op)
            online = name.endswith("online_attention")
            types = ("query_type", "key_type", "value_type", "scale_type", "output_type", "max_type", "sum_type")
            attention: dict[str, Any] = {"op": "online_attention" if online else "attention"}
            for t in types:
                if op.attr(t) is not None:
                    attention[t] = _type(op, t)
            self._groups(op, "attention", attention, ATTENTION_GROUPS)
        elif name == "transform.iree.match.dims_equal":
            found = self.groups.get(op.operands[0])
            if found is None:
                raise Unsupported(name, op.line, "dims_equal on a parameter that is no dimension group of a contraction, convolution or attention match")
            pending, group = found
            values = op.attr("expected_values")
            if not isinstance(values, tuple) or not all(isinstance(v, int) for v in values):
                raise Unsupported(name, op.line, "expected a list of sizes")
            if group in pending.dims:
                raise Unsupported(name, op.line, f"a second dims_equal on the {group} group (tdsl keeps one per group)")
            pending.dims[group] = tuple(int(v) for v in values if isinstance(v, int))
        elif name in ("transform.get_operand", "transform.get_result"):
            self._need_candidate(op)
            positions = op.attr("raw_position_list")
            if op.attr("is_inverted") is not None or op.attr("is_all") is not None or not isinstance(positions, tuple) or len(positions) != 1:
                raise Unsupported(name, op.line, "one operand position (tdsl's operand matcher checks one operand)")
            index = positions[0]
            assert isinstance(index, int)
            operand = _Operand(index, name.endswith("result"), _loc_leaf(op), op.line)
            self.operands[op.results[0]] = operand
            self.pending.append(operand)
        elif name == "transform.iree.match.cast_compatible_type":
            operand = self._operand(op)
            target = op.attr("target_type")
            if not isinstance(target, TypeA) or not target.text.startswith("tensor<"):
                raise Unsupported(name, op.line, "a ranked tensor type (tdsl's operand matcher)")
            if operand.type is not None:
                raise Unsupported(name, op.line, "a second type on the same operand")
            operand.type = target.text
        elif name == "transform.iree.match.dim_is_multiple_of":
            operand = self._operand(op)
            dim, size = op.attr("dim"), op.attr("size")
            assert isinstance(dim, int) and isinstance(size, int)
            operand.dims.setdefault(dim, {})
            if "multiple_of" in operand.dims[dim]:
                raise Unsupported(name, op.line, f"a second multiple_of on dim {dim}")
            operand.dims[dim]["multiple_of"] = size
            operand.checks.append(("multiple_of", dim, size, None))
        elif name == "transform.iree.match.dim_bounds":
            operand = self._operand(op)
            dim = op.attr("dim")
            lower, upper = op.attr("lower_bound"), op.attr("upper_bound")
            assert isinstance(dim, int)
            entry = operand.dims.setdefault(dim, {})
            if "min" in entry or "max" in entry:
                raise Unsupported(name, op.line, f"a second dim_bounds on dim {dim}")
            if isinstance(lower, int):
                entry["min"] = lower
            if isinstance(upper, int):
                entry["max"] = upper
            operand.checks.append(("bounds", dim, lower if isinstance(lower, int) else None, upper if isinstance(upper, int) else None))
        elif name == "transform.iree.match.cast_compatible_dag_from_root":
            self._need_candidate(op)
            self.pending.append(self._leaf(_dag(op), op))
        elif name == "transform.match.structured":
            self._need_candidate(op)
            self.pending.append(self._consumer(op))
        elif name == "transform.include":
            self._include(op)
        elif name == "transform.param.constant":
            value = op.attr("value")
            assert value is not None
            self.params[op.results[0]] = value
        elif name == "transform.yield":
            if top:
                self.yields = tuple(self.aliases.get(v, v) for v in op.operands)
        else:
            raise Unsupported(name, op.line, "tdsl has no matcher for this op")

    def _leaf(self, matcher: MatcherKind, op: Op) -> Leaf:
        return Leaf(matcher, _loc_leaf(op), op.line)

    def _operand(self, op: Op) -> _Operand:
        found = self.operands.get(op.operands[0])
        if found is None:
            raise Unsupported(op.name, op.line, "a check on a value that is no operand of the candidate (transform.get_operand)")
        return found

    def _groups(self, op: Op, kind: str, fields: dict[str, Any], groups: tuple[str, ...]) -> None:
        maps = _maps(op)
        if maps is not None:
            fields["maps"] = maps
        pending = _Pending(kind, fields, {}, _loc_leaf(op), op.line)
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
            raise Unsupported(op.name, op.line, "tdsl's structured match holds only the single user of result 0 (ConsumerMatch)")
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


def _dag(op: Op) -> MatcherKind:
    """``cast_compatible_dag_from_root``: a :class:`PackMatch` for tdsl's one-pack pattern,
    else a :class:`DagMatch` holding the printed pattern region."""
    region = op.body
    pack = _pack(region.ops, region.arg_types)
    if pack is not None:
        return pack
    text = op.text
    start = text.index("{\n") + 2
    end = text.rindex("\n}")
    body = "\n".join(line[2:] if line.startswith("  ") else line for line in text[start:end].split("\n"))
    try:
        return DagMatch(pattern=body)
    except StrategyError as err:
        raise Unsupported(op.name, op.line, f"a pattern DAG tdsl can render ({err})") from None


def _pack(ops: list[Op], arg_types: tuple[str, ...]) -> Optional[MatcherKind]:
    """The :class:`PackMatch` for a pattern that is one ``linalg.pack`` / ``linalg.unpack``
    over block arguments of the types tdsl renders, else None."""
    ops = [o for o in ops if o.name != "transform.yield"]
    if len(ops) != 1 or ops[0].name not in ("linalg.pack", "linalg.unpack"):
        return None
    op = ops[0]
    inner = op.attr("inner_dims_pos")
    tiles = op.attr("static_inner_tiles")
    outer = op.attr("outer_dims_perm")
    if not isinstance(inner, tuple) or not isinstance(tiles, tuple):
        return None
    if not all(isinstance(t, str) for t in arg_types) or len(arg_types) < 2:
        return None
    src = arg_types[0]
    kind: Literal["pack", "unpack"] = "pack" if op.name == "linalg.pack" else "unpack"
    unpacked = src if kind == "pack" else arg_types[1]
    if not unpacked.startswith("tensor<"):
        return None
    parts = unpacked[len("tensor<") : -1].split("x")
    try:
        model: PackMatch = PackMatch.model_validate(
            {
                "op": kind,
                "element_type": parts[-1],
                "inner_dims_pos": tuple(int(v) for v in inner if isinstance(v, int)),
                "inner_tiles": tuple(int(v) for v in tiles if isinstance(v, int)),
                "outer_dims_perm": None if not isinstance(outer, tuple) else tuple(int(v) for v in outer if isinstance(v, int)),
                "unpacked_rank": len(parts) - 1,
            }
        )
    except StrategyError:
        return None
    src_type, dst_type = model.operand_types()
    if arg_types[0] != src_type or arg_types[1] != dst_type or len(arg_types) > 3:
        return None
    return model


TYPED_OPS = frozenset(
    {
        "transform.match.operation_name",
        "transform.iree.match.has_no_lowering_config",
        "transform.iree.match.contraction",
        "transform.iree.match.convolution",
        "transform.iree.match.attention",
        "transform.iree.match.online_attention",
        "transform.iree.match.dims_equal",
        "transform.get_operand",
        "transform.get_result",
        "transform.get_defining_op",
        "transform.iree.match.cast_compatible_type",
        "transform.iree.match.dim_is_multiple_of",
        "transform.iree.match.dim_bounds",
        "transform.iree.match.cast_compatible_dag_from_root",
        "transform.match.structured",
        "transform.include",
        "transform.param.constant",
        "transform.yield",
    }
)
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
                if op.name == "transform.match.operation_name" and i and ops[i - 1].name == "transform.match.structured":
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
        raise Unsupported("transform.named_sequence", sequence.line, f"a matcher @{sequence.name} with one !transform.any_op argument")
    reader = _MatcherReader(module, sequence)
    reader.consumer_of = -1
    ops = sequence.op.body.ops
    raw_paths = _raw_paths(module, sequence) if own else set()
    raw_leaves: list[Leaf] = []
    if raw_paths:
        groups: dict[str, list[str]] = {}
        for path, text in _chunks(sequence.op.debug_text):
            if path in raw_paths:
                groups.setdefault(path, []).append(text)
        raw_leaves = [_raw_leaf(texts, path) for path, texts in groups.items()]
        ops = [op for op in ops if op.name == "transform.yield" or _loc_leaf(op) not in raw_paths]
    i = 0
    leaves: list[Any] = []
    while i < len(ops):
        op = ops[i]
        reader.op(op, True)
        if op.name == "transform.match.structured":
            nxt = ops[i + 1] if i + 1 < len(ops) else None
            if nxt is None or nxt.name != "transform.match.operation_name" or nxt.operands[0] != op.results[0]:
                raise Unsupported(op.name, op.line, "the consumer check followed by transform.match.operation_name on the user")
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
    items: list[Any] = list(reader.pending) + raw_leaves
    i = 0
    while i < len(items):
        item = items[i]
        finished = _finish(item)
        i += 1
        if isinstance(item, _Pending) and item.kind == "contraction":
            matcher = finished[0].matcher
            assert isinstance(matcher, ContractionMatch)
            bounds: list[_Operand] = []
            j = i
            while j < len(items) and _bound_of(item, items[j]):
                bounds.append(items[j])
                j += 1
            folded, used = _fold_bounds(matcher, bounds)
            if used:
                finished[0].matcher = folded
                i += used
        leaves.extend(finished)
    return ReadMatcher(leaves, reader.yields, reader.params, reader.notes)


def _bound_of(contraction: _Pending, item: Any) -> bool:
    """``item`` is one dim_bounds check that may be the contraction's k_min / size_max:
    in a tdsl render located at the contraction's own leaf, else right after it."""
    if not isinstance(item, _Operand) or item.type is not None or len(item.checks) != 1 or item.checks[0][0] != "bounds":
        return False
    return item.path == contraction.path


def _fold_bounds(matcher: ContractionMatch, bounds: list[_Operand]) -> tuple[ContractionMatch, int]:
    """The contraction with the ``k_min`` and ``size_max`` the leading ``bounds`` are (tdsl's
    renders of them: ``dim_bounds`` on the lhs's K with ``umin``; on the lhs's M and K and the
    rhs's N with one ``umax``), and how many checks that took."""
    if matcher.operand_layout is None or not bounds:
        return matcher, 0
    data = matcher.model_dump()
    used = 0
    first = bounds[0]
    _, dim, lower, upper = first.checks[0]
    if first.index == 0 and not first.result and dim == matcher.lhs_k_dim() and lower is not None and upper is None:
        data["k_min"] = lower
        used = 1
    rest = bounds[used : used + 3]
    if len(rest) == 3:
        limit = rest[0].checks[0][3]
        trial = dict(data, size_max=limit)
        try:
            candidate = ContractionMatch.model_validate(trial)
        except StrategyError:
            candidate = None
        if candidate is not None and limit is not None:
            want = candidate.bounded_dims()
            got = [(b.index, b.checks[0][1]) for b in rest]
            if want == got and all(b.checks[0][2] is None and b.checks[0][3] == limit and not b.result for b in rest):
                data = trial
                used += 3
    if not used:
        return matcher, 0
    try:
        folded: ContractionMatch = ContractionMatch.model_validate(data)
        return folded, used
    except StrategyError:
        return matcher, 0


def _finish(item: Any) -> list[Leaf]:
    if isinstance(item, Leaf):
        return [item]
    if isinstance(item, _Operand) and item.producer is not None:
        if item.producer_names is None or item.type is not None or item.checks:
            raise Unsupported("transform.get_defining_op", item.line, "a producer check that is operation_name alone (ProducerMatch)")
        return [Leaf(ProducerMatch(operand=item.index, names=item.producer_names), item.path, item.line)]
    if isinstance(item, _Operand):
        dims = [DimConstraint(dim=d, **c) for d, c in item.dims.items()]
        try:
            return [Leaf(OperandMatch(operand=item.index, result=item.result, type=item.type, dims=tuple(dims)), item.path, item.line)]
        except StrategyError as err:
            raise Unsupported("transform.get_operand", item.line, f"operand checks tdsl's operand matcher takes ({err})") from None
    assert isinstance(item, _Pending)
    fields = dict(item.fields)
    groups = {"contraction": CONTRACTION_GROUPS, "convolution": CONVOLUTION_GROUPS, "attention": ATTENTION_GROUPS}[item.kind]
    for g in groups:
        sizes = item.dims.get(g)
        fields[g] = None if sizes is None else (sizes,)
    try:
        if item.kind == "contraction":
            return [Leaf(_contraction(fields), item.path, item.line)]
        if item.kind == "convolution":
            return [Leaf(ConvolutionMatch.model_validate(fields), item.path, item.line)]
        return [Leaf(AttentionMatch.model_validate(fields), item.path, item.line)]
    except StrategyError as err:
        op = {"contraction": "contraction", "convolution": "convolution", "attention": fields.get("op", "attention")}[item.kind]
        raise Unsupported(f"transform.iree.match.{op}", item.line, f"a matcher tdsl can express ({err})") from None


def _contraction(fields: dict[str, Any]) -> ContractionMatch:
    """A contraction matcher; maps that are one of tdsl's operand layouts (with an exact
    batch of the maps' batch rank) become ``operand_layout``."""
    maps = fields.get("maps")
    if maps is not None:
        layout = contraction_with_layout(fields, tuple(maps))
        if layout is not None:
            return layout
    plain: ContractionMatch = ContractionMatch.model_validate(fields)
    return plain
