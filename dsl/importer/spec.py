"""Importing a transform-dialect spec into a :class:`StrategySet`: the entry point's
``foreach_match`` runs, each matcher -> action pair read into one rule.

A spec tdsl rendered itself (module ``@tdsl_<set>``, actions ``@tdsl_r<i>_<name>``, its
markers) imports back to the same rules: the set and strategy names, the rule indices, the
``one_of`` alternatives folded back from their matcher sequences, ``AllOf`` and function
scopes from the locations, so rendering the imported set gives the same script byte for
byte. Any other spec gives one rule per pair, named after its matcher sequence (made a
valid tdsl symbol, and reported when that changed it).

What the import changed or dropped (upgraded spellings, renamed sequences, IREE's
``__tuning_spec_applied__`` marker, included matchers inlined, raw escape hatches) is
listed in :attr:`Imported.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence as Seq, Union

from ..errors import StrategyError, TargetError, TdslError
from ..model.all_of import AllOf, expand
from ..model.base import SYMBOL_RE
from ..model.kinds import Injection, MatcherKind, StrategyKind
from ..model.matchers import ContractionMatch, DagMatch, FunctionMatch, OpNameMatch, map_dims
from ..model.raw import RawAnnotation, RawCodegenAction, RawConfig, RawMatch, RawPreprocessingAction, RawTuningAction
from ..sets.strategy_set import Rule, StrategySet
from ..targets import Target, named, target_names
from ..targets.registry import default_for
from .actions import TDSL_MARKERS, ConfigAction, _marker, Marks, build_layout, read_codegen, read_config_action, read_layout
from .configs import ConfigReader
from ..bindings import Attr, Unit
from .ir import Module, Op, Sequence, read_module
from .matchers import Leaf, ReadMatcher, read_matcher
from .problems import Note, SpecImportError, Unsupported
from .upgrade import upgrade

TUNING_ENTRY_ATTR = "iree_codegen.tuning_spec_entrypoint"
TUNING_MODULE_ATTR = "iree_codegen.tuning_spec_with_default_entrypoint"
TUNING_APPLIED = "__tuning_spec_applied__"

_RAW_ACTION = {
    Injection.TUNING_SPEC: RawTuningAction,
    Injection.PREPROCESSING: RawPreprocessingAction,
    Injection.CODEGEN_LIBRARY: RawCodegenAction,
}


@dataclass(frozen=True)
class ImportedRule:
    """One imported rule and, for a spec tdsl rendered, its index in the original set."""

    rule: Rule
    index: Optional[int]


@dataclass
class Imported:
    """An imported spec: the set, the injection point the spec was for, the target its
    rules were imported for, and what the import changed (``notes``), renamed
    (``renamed``: original sequence name -> tdsl name) or kept as raw MLIR (``raw``: the
    strategy names). ``own`` is True for a spec tdsl rendered."""

    strategy_set: StrategySet
    injection: Injection
    target: str
    rules: list[ImportedRule]
    notes: list[Note] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    raw: list[str] = field(default_factory=list)
    own: bool = False
    path: str = "<spec>"
    upgraded: str = ""
    """The spec as IREE 3.13 parses it (after the upgrades the notes list)."""

    def report(self) -> list[str]:
        """One line per note (``path:line: text``)."""
        return [n.describe(self.path) for n in self.notes]


def sanitize(name: str) -> str:
    """``name`` as a tdsl symbol: characters other than letters, digits and ``_`` become
    ``_``; a leading digit gets a ``_`` in front."""
    text = "".join(c if c.isalnum() and c.isascii() or c == "_" else "_" for c in name) or "_"
    if not (text[0].isalpha() or text[0] == "_"):
        text = "_" + text
    return text


@dataclass
class _Pair:
    matcher: str
    action: str
    scope: Optional[str]
    line: Optional[int]


def _entry(module: Module, kind: Optional[Injection], path: str) -> tuple[Sequence, Injection]:
    marked = [s for s in module.sequences if isinstance(s.op.attrs.get(TUNING_ENTRY_ATTR), Unit)]
    if len(marked) > 1:
        raise SpecImportError(path, marked[1].line, "transform.named_sequence", "a single tuning spec entry point (several have iree_codegen.tuning_spec_entrypoint)")
    if marked:
        return marked[0], kind or Injection.TUNING_SPEC
    main = module.sequence("__transform_main")
    if main is not None:
        return main, kind or Injection.PREPROCESSING
    config = module.sequence("__kernel_config")
    if config is not None:
        tuning = isinstance(module.attrs.get(TUNING_MODULE_ATTR), Unit)
        return config, kind or (Injection.TUNING_SPEC if tuning else Injection.CODEGEN_LIBRARY)
    runs = [s for s in module.sequences if any(op.name == "transform.foreach_match" for op in s.op.body.ops)]
    if len(runs) == 1 and kind is not None:
        return runs[0], kind
    names = ", ".join("@" + s.name for s in runs) or "none"
    raise SpecImportError(
        path,
        runs[0].line if runs else None,
        "transform.named_sequence",
        "an entry point: @__kernel_config or a sequence with iree_codegen.tuning_spec_entrypoint (tuning spec or codegen "
        f"library), or @__transform_main (preprocessing spec); sequences with foreach_match: {names}",
        "name the injection point (kind=tuning_spec, preprocessing or codegen_library) to use the only one" if len(runs) == 1 else "",
    )


def _pairs(entry: Sequence, path: str, deferred: Optional[list[Op]] = None) -> list[_Pair]:
    """The (matcher, action) pairs of the entry's ``foreach_match`` runs, in order, with the
    function each run is scoped to. With ``deferred`` (a tdsl render), the other ops of the
    entry (work tdsl runs after a run, located at ``<strategy>.<field>``) are collected
    there instead of refused."""
    scopes: dict[int, str] = {}
    roots = {entry.args[0]} if entry.args else set()
    pairs: list[_Pair] = []
    for op in entry.op.body.ops:
        if deferred is not None and pairs and op.name not in ("transform.foreach_match", "transform.yield") and not _is_scope(op):
            deferred.append(op)
            continue
        if op.name == "transform.structured.match" and op.operands and op.operands[0] in roots:
            names = op.attr("ops")
            attrs = op.attr("op_attrs")
            if names in (("func.func", "util.func"), ("func.func",), ("util.func",)) and isinstance(attrs, dict) and set(attrs) == {"sym_name"}:
                function = attrs["sym_name"]
                if isinstance(function, str):
                    scopes[op.results[0]] = function
                    continue
        elif op.name == "transform.foreach_match":
            for flag in ("restrict_root", "flatten_results"):
                if op.attr(flag) is not None:
                    raise SpecImportError(path, op.line, op.name, f"foreach_match with {flag} (tdsl's runs have neither)")
            source = op.operands[0]
            if source not in roots and source not in scopes:
                raise SpecImportError(path, op.line, op.name, "a foreach_match over the payload root or a function tdsl scopes by name")
            matchers, actions = op.attr("matchers"), op.attr("actions")
            assert isinstance(matchers, tuple) and isinstance(actions, tuple)
            for m, a in zip(matchers, actions):
                pairs.append(_Pair(getattr(m, "name", ""), getattr(a, "name", ""), scopes.get(source), op.line))
            if source in roots and op.results:
                roots.add(op.results[0])
            continue
        elif op.name == "transform.yield":
            continue
        raise SpecImportError(
            path, op.line, op.name, f"an op in the entry point @{entry.name}: tdsl's entry only runs foreach_match (over the root or a function)"
        )
    if not pairs:
        raise SpecImportError(path, entry.line, "transform.named_sequence", f"a foreach_match in the entry point @{entry.name} (it selects no op)")
    return pairs


def _is_scope(op: Op) -> bool:
    attrs = op.attr("op_attrs")
    return op.name == "transform.structured.match" and isinstance(attrs, dict) and set(attrs) == {"sym_name"}


PER_OP = "per_op"
"""The key of :func:`_deferred_fields` that names the sequence run on each folded op."""


def _deferred_fields(ops: list[Op]) -> dict[str, dict[str, Any]]:
    """The DataLayout fields tdsl renders as work after a run, by strategy name:
    ``propagate_reshapes`` (ops at ``<name>.propagate_reshapes``),
    ``consumer_interchange`` (the interchange at ``<name>.consumer_interchange``) and
    ``fold_unit_dims`` (ops at ``<name>.fold_unit_dims``; the sequence its
    ``transform.include`` runs on each folded op, which holds the pack steps, under
    :data:`PER_OP`)."""
    found: dict[str, dict[str, Any]] = {}

    def visit(op: Op) -> None:
        loc = op.loc or ""
        name, _, field = loc.partition(".")
        if field == "propagate_reshapes":
            found.setdefault(name, {})["propagate_reshapes"] = True
        elif field == "consumer_interchange" and op.name == "transform.structured.interchange":
            found.setdefault(name, {})["consumer_interchange"] = op.attr("iterator_interchange")
        elif field == "fold_unit_dims":
            found.setdefault(name, {})["fold_unit_dims"] = True
        elif not field and op.name == "transform.include":
            found.setdefault(name, {})[PER_OP] = getattr(op.attr("target"), "name", None)
        for region in op.regions:
            for block in region:
                for child in block.ops:
                    visit(child)

    for op in ops:
        visit(op)
    return found


def _own_index(symbol: str) -> Optional[tuple[int, str]]:
    """(rule index, name) of tdsl's action symbol ``tdsl_r<i>_<name>``."""
    if not symbol.startswith("tdsl_r"):
        return None
    head, _, name = symbol[len("tdsl_r") :].partition("_")
    return (int(head), name) if head.isdigit() and name else None


@dataclass
class _Read:
    """One pair read: its matcher leaves (or the raw matcher), the strategy, tdsl's marks."""

    pair: _Pair
    leaves: list[Leaf]
    strategy: StrategyKind
    marks: Marks
    raw: bool


class _Importer:
    def __init__(self, module: Module, path: str, allow_raw: bool, injection: Injection, own: bool = False):
        self.own = own
        self.deferred: dict[str, dict[str, Any]] = {}
        self.module = module
        self.path = path
        self.allow_raw = allow_raw
        self.injection = injection
        self.notes: list[Note] = []
        self.raw: list[str] = []
        self.dropped_applied = False

    def note(self, line: Optional[int], text: str) -> None:
        self.notes.append(Note(line, text))

    def sequence(self, name: str, line: Optional[int]) -> Sequence:
        found = self.module.sequence(name)
        if found is None:
            raise SpecImportError(self.path, line, "transform.foreach_match", f"the sequence @{name} it names")
        return found

    def refuse(self, problem: Unsupported, what: str) -> SpecImportError:
        hint = f"rerun with --allow-raw to keep {what} as raw MLIR" if not self.allow_raw else ""
        return SpecImportError(self.path, problem.line, problem.op, problem.missing, hint)

    def read_pair(self, pair: _Pair, name: str) -> _Read:
        matcher = self.sequence(pair.matcher, pair.line)
        action = self.sequence(pair.action, pair.line)
        raw_leaves = False
        try:
            read = read_matcher(self.module, matcher, self.own)
            for line, text in read.notes:
                self.note(line, text)
        except Unsupported as problem:
            if not self.allow_raw:
                raise self.refuse(problem, f"the matcher @{matcher.name}") from None
            read = self._raw_matcher(matcher, problem)
            raw_leaves = True
        strategy, marks, raw_action = self._action(action, read, name, pair)
        return _Read(pair, read.leaves, strategy, marks, raw_leaves or raw_action)

    def _raw_matcher(self, matcher: Sequence, problem: Unsupported) -> ReadMatcher:
        try:
            model = RawMatch(sequence=matcher.text)
        except StrategyError as err:
            raise SpecImportError(self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}") from None
        params = {op.results[0]: op.attrs["value"] for op in matcher.op.body.ops if op.name == "transform.param.constant"}
        last = matcher.op.body.ops[-1]
        self.note(problem.line, f"{problem.op}: {problem.missing}; the matcher @{matcher.name} is kept as raw MLIR")
        return ReadMatcher([Leaf(model, None, matcher.line)], last.operands, params)

    def _param_texts(self, matcher: Sequence) -> dict[int, str]:
        return {op.results[0]: op.value_text for op in matcher.op.body.ops if op.name == "transform.param.constant"}

    def _action(self, action: Sequence, read: ReadMatcher, name: str, pair: _Pair) -> tuple[StrategyKind, Marks, bool]:
        matcher = self.sequence(pair.matcher, pair.line)
        texts = self._param_texts(matcher)
        if len(action.args) != len(read.yields):
            raise SpecImportError(self.path, action.line, "transform.named_sequence", f"an action @{action.name} that takes what the matcher @{matcher.name} yields ({len(read.yields)} values)")
        bound: dict[int, Optional[Attr]] = {}
        bound_text: dict[int, str] = {}
        lines = {op.results[0]: op.line for op in matcher.op.body.ops if op.name == "transform.param.constant"}
        bound_lines: dict[int, Optional[int]] = {}
        for arg, value in zip(action.args[1:], read.yields[1:]):
            bound[arg] = read.params.get(value)
            bound_lines[arg] = lines.get(value)
            if value in texts:
                bound_text[arg] = texts[value]
        if self.own:
            own_raw = self._own_raw(action)
            if own_raw is not None:
                return own_raw
        try:
            return self._typed_action(action, bound, read, name, bound_lines)
        except Unsupported as problem:
            if not self.allow_raw:
                raise self.refuse(problem, f"the action @{action.name}") from None
            return self._raw_action(action, bound, bound_text, name, problem)

    def _typed_action(
        self, action: Sequence, bound: dict[int, Optional[Attr]], read: ReadMatcher, name: str, lines: dict[int, Optional[int]]
    ) -> tuple[StrategyKind, Marks, bool]:
        if self.injection is Injection.PREPROCESSING:
            fields, marks = read_layout(action)
            deferred = dict(self.deferred.get(marks.name or "", {}))
            per_op = deferred.pop(PER_OP, None)
            if per_op is not None:  # fold_unit_dims: the pack steps run on each folded op
                sequence = self.module.sequence(per_op)
                if sequence is None:
                    raise Unsupported("transform.include", action.line, f"the sequence @{per_op} in the spec")
                packing, _ = read_layout(sequence)
                fields.update(packing)
            fields.update(deferred)
            return build_layout(marks.name or name, fields, action.line), marks, False
        config = read_config_action(action, bound, lines)
        strategy_name = config.marks.name or name
        if config.codegen_spec is not None:
            definition = self.module.sequence(config.codegen_spec)
            if definition is None:
                raise Unsupported("transform.annotate", action.line, f"the lowering sequence @{config.codegen_spec} in the spec")
            if config.annotations:
                raise Unsupported("transform.annotate", config.annotations[0][2], "other annotations next to tdsl's codegen marker")
            root = _root(read.leaves)
            if root == "linalg.generic" and not any(isinstance(l.matcher, OpNameMatch) for l in read.leaves):
                self.note(definition.line, f"{strategy_name}: the script does not name the Codegen root op; imported as root='linalg.generic' (set it to the named op for tdsl's loop checks)")
            return read_codegen(self.module, strategy_name, definition, root), config.marks, False
        return self._config(config, strategy_name, read, action.line), config.marks, False

    def _config(self, config: ConfigAction, name: str, read: ReadMatcher, line: Optional[int]) -> StrategyKind:
        info: Optional[Attr] = None
        decomposition: Optional[Attr] = None
        info_line = line
        for label, value, at in config.annotations:
            if label == "compilation_info" and info is None:
                info, info_line = value, at
            elif label == "decomposition_config" and decomposition is None:
                decomposition = value
            elif label == TUNING_APPLIED and value is None:
                if not self.dropped_applied:
                    self.note(at, f"the {TUNING_APPLIED!r} marker IREE's default specs set is not kept (tdsl marks ops with tdsl.applied)")
                    self.dropped_applied = True
            else:
                raise Unsupported("transform.annotate", at, f"the annotation {label!r} (tdsl's lowering strategies set compilation_info and decomposition_config)")
        if info is None:
            raise Unsupported("transform.annotate", line, "a compilation_info annotation (tdsl's lowering strategies set one)")
        reader = ConfigReader(info_line, _roles(read.leaves))
        strategy = reader.strategy(name, info, decomposition)
        for at, text in reader.notes:
            self.note(at, text)
        return strategy

    def _own_raw(self, action: Sequence) -> Optional[tuple[StrategyKind, Marks, bool]]:
        """In a tdsl render: the raw kinds, rebuilt. A :class:`RawConfig` locates its
        annotations at ``<name>.annotations[i]``; a raw action carries no tdsl marker (its
        ops are located at the strategy name, its helpers are ``<symbol>_<helper>``)."""
        from ..model.mlir_text import rename_symbols

        ops = action.op.body.ops
        if any(".annotations[" in (op.loc or "") for op in ops):
            marks = Marks()
            texts: dict[int, str] = {}
            values: dict[int, Optional[Attr]] = {}
            annotations: list[RawAnnotation] = []
            for op in ops:
                if op.name == "transform.param.constant":
                    texts[op.results[0]] = op.value_text
                    values[op.results[0]] = op.attr("value")
                elif op.name == "transform.annotate":
                    label = op.attr("name")
                    assert isinstance(label, str)
                    value = values.get(op.operands[1]) if len(op.operands) > 1 else None
                    if _marker(label, value, marks):
                        continue
                    annotations.append(RawAnnotation(name=label, value=texts.get(op.operands[1]) if len(op.operands) > 1 else None))
            return RawConfig(name=marks.name or sanitize(action.name), annotations=tuple(annotations)), marks, True
        markers = {op.attr("name") for op in ops if op.name == "transform.annotate"}
        if markers & set(TDSL_MARKERS):
            return None
        helpers = _helpers(self.module, action)
        prefix = action.name + "_"
        mapping = {h.name: h.name[len(prefix) :] for h in helpers if h.name.startswith(prefix)}
        name = action.op.loc or sanitize(action.name)
        kind = _RAW_ACTION[self.injection]
        strategy = kind(
            name=name,
            sequence=rename_symbols(action.text, mapping),
            helpers=tuple(rename_symbols(h.text, mapping) for h in helpers),
        )
        parsed = _own_index(action.name)
        return strategy, Marks(name, parsed[0] if parsed else None), True

    def _raw_action(
        self, action: Sequence, bound: dict[int, Optional[Attr]], bound_text: dict[int, str], name: str, problem: Unsupported
    ) -> tuple[StrategyKind, Marks, bool]:
        """The raw escape hatch for an action: its annotations as :class:`RawConfig` when it
        only annotates (a tuning spec's config), else the sequence as a raw action."""
        annotations = _annotations(action, bound_text)
        if annotations is not None and self.injection is not Injection.PREPROCESSING:
            try:
                strategy: StrategyKind = RawConfig(name=name, annotations=tuple(annotations))
            except StrategyError as err:
                raise SpecImportError(self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}") from None
            self.note(problem.line, f"{problem.op}: {problem.missing}; its annotations are kept as raw MLIR ({name})")
            return strategy, Marks(), True
        if len(action.args) != 1:
            raise SpecImportError(self.path, problem.line, problem.op, f"{problem.missing}; as raw MLIR the action must take only the matched op")
        helpers = _helpers(self.module, action)
        try:
            strategy = _RAW_ACTION[self.injection](name=name, sequence=action.text, helpers=tuple(h.text for h in helpers))
        except StrategyError as err:
            raise SpecImportError(self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}") from None
        self.note(problem.line, f"{problem.op}: {problem.missing}; the action @{action.name} is kept as raw MLIR ({name})")
        return strategy, Marks(), True


def _annotations(action: Sequence, bound_text: dict[int, str]) -> Optional[list[RawAnnotation]]:
    """The annotations of an action that only annotates its op with parameters (None when it
    does anything else)."""
    local: dict[int, str] = dict(bound_text)
    out: list[RawAnnotation] = []
    for op in action.op.body.ops:
        if op.name == "transform.param.constant":
            local[op.results[0]] = op.value_text
        elif op.name == "transform.annotate" and op.operands[0] == action.args[0]:
            label = op.attr("name")
            if not isinstance(label, str):
                return None
            if len(op.operands) == 1:
                out.append(RawAnnotation(name=label))
            elif op.operands[1] in local:
                out.append(RawAnnotation(name=label, value=local[op.operands[1]]))
            else:
                return None
        elif op.name != "transform.yield":
            return None
    return out or None


def _helpers(module: Module, action: Sequence) -> list[Sequence]:
    """The sequences ``action`` refers to (transitively), in spec order."""
    from ..model.mlir_text import symbols

    wanted: set[str] = set()
    todo = [action.text]
    while todo:
        for name in symbols(todo.pop()):
            found = module.sequence(name)
            if found is not None and name not in wanted and name != action.name:
                wanted.add(name)
                todo.append(found.text)
    return [s for s in module.sequences if s.name in wanted]


def _roles(leaves: list[Leaf]) -> Optional[tuple[str, ...]]:
    """The loop roles the matcher fixes: a contraction's, or a pattern DAG's root
    ``linalg.matmul`` / ``batch_matmul`` / contraction ``linalg.generic``."""
    for leaf in leaves:
        if isinstance(leaf.matcher, ContractionMatch):
            roles = leaf.matcher.loop_roles()
            if roles is not None:
                return roles
        if isinstance(leaf.matcher, DagMatch):
            return _dag_roles(leaf.matcher.pattern)
    return None


def _dag_roles(pattern: str) -> Optional[tuple[str, ...]]:
    from ..bindings import MapA
    from .ir import read_module as read

    try:
        module = read("module attributes {transform.with_named_sequence} {\n  transform.named_sequence @m(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {\n"
                      "    %i, %o = transform.iree.match.cast_compatible_dag_from_root %op {\n" + pattern + "\n    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)\n"
                      "    transform.yield %op : !transform.any_op\n  }\n}\n")
    except TdslError:
        return None
    ops = [o for o in module.sequences[0].op.body.ops[0].body.ops if o.name != "transform.yield"]
    if not ops:
        return None
    root = ops[-1]
    named = {"linalg.matmul": ("m", "n", "k"), "linalg.batch_matmul": ("b", "m", "n", "k")}
    if root.name in named and root.attr("indexing_maps") is None:
        return named[root.name]
    maps = root.attr("indexing_maps")
    if not isinstance(maps, tuple) or len(maps) != 3 or not all(isinstance(m, MapA) for m in maps):
        return None
    probe = ContractionMatch.model_construct(maps=tuple(m.text for m in maps if isinstance(m, MapA)))
    shape = probe._roles_from_maps()
    return None if shape is None else shape.roles


def _dag_root(pattern: str) -> Optional[str]:
    """The name of a pattern DAG's root op (its last op)."""
    from .ir import read_module as read

    try:
        module = read("module attributes {transform.with_named_sequence} {\n  transform.named_sequence @m(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {\n"
                      "    %i, %o = transform.iree.match.cast_compatible_dag_from_root %op {\n" + pattern + "\n    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)\n"
                      "    transform.yield %op : !transform.any_op\n  }\n}\n")
    except TdslError:
        return None
    ops = [o for o in module.sequences[0].op.body.ops[0].body.ops if o.name != "transform.yield"]
    return ops[-1].name if ops else None


def _root(leaves: list[Leaf]) -> str:
    for leaf in leaves:
        if isinstance(leaf.matcher, OpNameMatch) and len(leaf.matcher.names) == 1:
            return leaf.matcher.names[0]
    return "linalg.generic"


def _matcher(leaves: list[Leaf], scope: Optional[str]) -> MatcherKind:
    """The rule's matcher: one leaf, or an ``AllOf`` (leaf positions from a tdsl render's
    ``matchers[j]`` locations; the scope's function matcher where a position is missing)."""
    positions = []
    for leaf in leaves:
        path = leaf.path or ""
        positions.append(int(path[path.rindex("[") + 1 : -1]) if path.endswith("]") and ".matchers[" in path else None)
    all_of = any(p is not None for p in positions) or scope is not None or len(leaves) != 1
    if not all_of:
        return leaves[0].matcher
    models: list[Optional[MatcherKind]]
    if all(p is not None for p in positions) and positions:
        size = max(p for p in positions if p is not None) + 1 + (1 if scope is not None else 0)
        models = [None] * size
        for leaf, p in zip(leaves, positions):
            assert p is not None
            models[p] = leaf.matcher
        if scope is not None:
            gap = next((i for i, m in enumerate(models) if m is None), len(models) - 1)
            models[gap] = FunctionMatch(function=scope)
        matchers = [m for m in models if m is not None]
    else:
        matchers = ([FunctionMatch(function=scope)] if scope is not None else []) + [leaf.matcher for leaf in leaves]
    return AllOf(matchers=tuple(matchers))


def _fold(reads: list[_Read], scope: Optional[str]) -> MatcherKind:
    """One matcher for the alternatives of one tdsl rule (its matcher sequences ``_match<k>``):
    each group's distinct sizes become a ``one_of`` set, checked against the sequences'
    order (tdsl renders the product of the sets in field order)."""
    if len(reads) == 1:
        return _matcher(reads[0].leaves, scope)
    count = len(reads[0].leaves)
    if any(len(r.leaves) != count for r in reads):
        raise TdslError("matcher sequences of one rule differ in their leaves")
    merged: list[Leaf] = []
    for j in range(count):
        models = [r.leaves[j].matcher for r in reads]
        first = models[0]
        groups: tuple[str, ...] = getattr(first, "GROUPS", ())
        data = first.model_dump()
        for g in groups:
            values = [getattr(m, g) for m in models]
            distinct: list[Any] = []
            for v in values:
                if v is not None and v[0] not in distinct:
                    distinct.append(v[0])
            if any(v is None for v in values):
                if any(v is not None for v in values):
                    raise TdslError(f"group {g} is open in some alternatives only")
                data[g] = None
            else:
                data[g] = tuple(distinct)
        for m in models[1:]:
            other = m.model_dump()
            if type(m) is not type(first) or {k: v for k, v in other.items() if k not in groups} != {k: v for k, v in first.model_dump().items() if k not in groups}:
                raise TdslError("matcher sequences of one rule differ beyond their dimension groups")
        merged.append(Leaf(type(first).model_validate(data), reads[0].leaves[j].path, reads[0].leaves[j].line))
    matcher = _matcher(merged, scope)
    expected = [[(leaf.matcher.model_dump()) for leaf in r.leaves] for r in reads]
    produced = []
    for alternative in expand(matcher):
        produced.append([type(leaf).model_validate({**leaf.model_dump(), **{g: (choice[g],) if choice.get(g) is not None else None for g in getattr(leaf, "GROUPS", ())}}).model_dump() for _, leaf, choice in alternative])
    if produced != expected:
        raise TdslError("the matcher sequences of one rule are not the product of their alternatives")
    return matcher


def _target_model(name: str, targets: Optional[Seq[Target]]) -> Target:
    for t in targets or ():
        if t.name == name:
            return t
    found = named(name)
    if found is None:
        listed = " or ".join(repr(n) for n in target_names())
        raise TargetError(f"target {name!r}: expected {listed} (or pass the target models)")
    return found


def _backends(strategy: StrategyKind) -> frozenset[Any]:
    """The backends ``strategy`` is for: its kind's, narrowed for raw MLIR by the dialect
    of the attributes it holds (``#iree_gpu.`` / ``#iree_cpu.``)."""
    from ..model.kinds import Backend

    if strategy.raw:
        text = str(strategy.model_dump())
        if "#iree_gpu." in text and "#iree_cpu." not in text:
            return frozenset({Backend.ROCM})
        if "#iree_cpu." in text and "#iree_gpu." not in text:
            return frozenset({Backend.LLVM_CPU})
    return strategy.backends


def _infer_target(strategies: list[StrategyKind], given: Optional[str], notes: list[Note]) -> str:
    if given is not None:
        return given
    from ..model.kinds import Backend

    backends = [_backends(s) for s in strategies]
    if backends and all(b == frozenset({Backend.ROCM}) for b in backends if len(b) == 1) and any(len(b) == 1 for b in backends):
        if all(Backend.ROCM in b for b in backends):
            return default_for(Backend.ROCM).name
    cpu = default_for(Backend.LLVM_CPU).name
    if backends and any(len(b) == 1 for b in backends) and all(Backend.LLVM_CPU in b for b in backends):
        return cpu
    if any(len(b) == 1 for b in backends):
        raise TargetError(f"the spec holds configs for both {Backend.LLVM_CPU} and {Backend.ROCM}: pass a target")
    notes.append(Note(None, f"no config names a backend; the rules are imported for target {cpu!r} (pass a target to choose)"))
    return cpu


def read_spec(
    text: str,
    path: str = "<spec>",
    target: Optional[str] = None,
    allow_raw: bool = False,
    kind: Optional[Union[Injection, str]] = None,
    targets: Optional[Seq[Target]] = None,
) -> Imported:
    """Imports the spec ``text`` (``path`` names it in messages). ``target`` is the target
    name the rules are for (default: inferred, ``gfx942`` for GPU configs, ``cpu``
    otherwise); ``targets`` gives target models (else ``cpu`` / ``gfx942`` defaults);
    ``kind`` forces the injection point; ``allow_raw`` keeps what tdsl cannot express as
    raw MLIR. Raises :class:`SpecImportError`."""
    injection = Injection(kind) if isinstance(kind, str) else kind
    upgraded, notes = upgrade(text, path)
    module = read_module(upgraded)
    entry, injection = _entry(module, injection, path)
    deferred: list[Op] = []
    pairs = _pairs(entry, path, deferred if (module.name or "").startswith("tdsl_") else None)
    own = (module.name or "").startswith("tdsl_") and all(_own_index(p.action) is not None for p in pairs)
    if deferred and not own:
        stray = deferred[0]
        raise SpecImportError(path, stray.line, stray.name, f"an op in the entry point @{entry.name}: tdsl's entry only runs foreach_match (over the root or a function)")
    importer = _Importer(module, path, allow_raw, injection, own)
    importer.deferred = _deferred_fields(deferred)
    importer.notes.extend(notes)
    reads: list[_Read] = []
    for pair in pairs:
        reads.append(importer.read_pair(pair, sanitize(pair.matcher)))
    # Group: tdsl renders one action per rule (its matcher sequences are the alternatives).
    groups: list[list[_Read]] = []
    for r in reads:
        if own and groups and groups[-1][0].pair.action == r.pair.action:
            groups[-1].append(r)
        else:
            groups.append([r])
    rules: list[tuple[Optional[int], MatcherKind, StrategyKind, Optional[int], bool]] = []
    renamed: dict[str, str] = {}
    used: set[str] = set()
    for group in groups:
        first = group[0]
        try:
            matcher = _fold(group, first.pair.scope) if own else _matcher(first.leaves, first.pair.scope)
        except (StrategyError, TdslError) as err:
            raise SpecImportError(path, first.pair.line, "transform.foreach_match", f"matchers of @{first.pair.action} that fold into one rule ({err})") from None
        index: Optional[int] = None
        strategy = first.strategy
        if own:
            parsed = _own_index(first.pair.action)
            assert parsed is not None
            index = first.marks.rule if first.marks.rule is not None else parsed[0]
        else:
            original = first.pair.matcher
            name = strategy.name
            unique = name
            k = 2
            while unique in used:
                unique = f"{name}_{k}"
                k += 1
            if unique != original:
                renamed[original] = unique
            if unique != name:
                strategy = strategy.model_copy(update={"name": unique})
            used.add(unique)
        matcher_sequence = module.sequence(first.pair.matcher)
        rules.append((index, matcher, strategy, matcher_sequence.line if matcher_sequence else first.pair.line, first.raw))
    for original, new in renamed.items():
        found = module.sequence(original)
        why = "a tdsl strategy name is a symbol of letters, digits and '_'" if sanitize(original) != original else "another rule has its name"
        importer.note(found.line if found is not None else None, f"@{original} is named {new} ({why})")
    try:
        target_name = _infer_target([r[2] for r in rules], target, importer.notes)
    except TargetError as err:
        raise SpecImportError(path, None, "", str(err)) from None
    set_name = sanitize(module.name[len("tdsl_") :]) if own and module.name else sanitize(module.name or Path(path).stem or "imported")
    indices = [r[0] for r in rules]
    if own and indices != list(range(len(indices))):
        importer.note(None, f"rule indices {indices} of the original set: the other rules are in other scripts; merge them with import_specs to keep the indices")
    imported_rules = [ImportedRule(Rule(target=target_name, match=m, strategy=s), i) for i, m, s, _, _ in rules]
    raw_names = [s.name for _, _, s, _, raw in rules if raw]
    if injection is Injection.CODEGEN_LIBRARY and not own and all(s.injection is Injection.TUNING_SPEC for _, _, s, _, _ in rules):
        importer.note(entry.line, "a codegen library that only sets compilation_info: tdsl renders its rules as a tuning spec "
                      "(--iree-codegen-tuning-spec-path), which IREE 3.13 applies the same way")
    if injection is not Injection.PREPROCESSING:
        gone = _target_model(target_name, targets).ops_gone_at_codegen
        for _, matcher, strategy, at, _ in rules:
            for leaf in (matcher.matchers if isinstance(matcher, AllOf) else (matcher,)):
                root = _dag_root(leaf.pattern) if isinstance(leaf, DagMatch) else None
                if root is not None and root.startswith(gone):
                    importer.note(at, f"{strategy.name}: the pattern's root {root} is a linalg.generic when IREE 3.13 configures ops for {target_name}, so this rule matches nothing (as in the original spec)")
    try:
        strategy_set = _build(set_name, [r.rule for r in imported_rules], target_name, targets, importer.notes)
    except StrategyError as err:
        text = str(err)
        where: Optional[int] = None
        if ".rules[" in text:
            number = text.split(".rules[", 1)[1].split("]", 1)[0]
            where = rules[int(number)][3] if number.isdigit() and int(number) < len(rules) else None
        names = [s.name for _, _, s, _, _ in rules]
        for i, name in enumerate(names):
            if text.startswith(f"invalid strategy: {name}."):
                where = rules[i][3]
        raise SpecImportError(path, where, "", f"the imported rules do not make a valid strategy set for {target_name}: {text}") from None
    notes_sorted = sorted(importer.notes, key=lambda n: (n.line is None, n.line or 0))
    return Imported(strategy_set, injection, target_name, imported_rules, notes_sorted, renamed, raw_names, own, path, upgraded)


def _build(name: str, rules: list[Rule], target: str, targets: Optional[Seq[Target]], notes: list[Note]) -> StrategySet:
    model = _target_model(target, targets)
    try:
        return StrategySet(name=name, targets=(model,), rules=tuple(rules))
    except StrategyError as err:
        accepting = model.accepting(err) if targets is None else None
        if accepting is None:
            raise
        retry, why = accepting
        built = StrategySet(name=name, targets=(retry,), rules=tuple(rules))
        notes.append(Note(None, why))
        return built


def import_spec(
    path: Union[str, Path],
    target: Optional[Union[Target, str]] = None,
    allow_raw: bool = False,
    kind: Optional[Union[Injection, str]] = None,
) -> StrategySet:
    """The :class:`StrategySet` of the transform-dialect spec at ``path`` (a tuning spec, a
    preprocessing spec or a codegen library); see :func:`read_spec`. ``target`` is the
    target name the rules are for, or the target model itself."""
    if target is None or isinstance(target, str):
        return read_file(path, target, allow_raw, kind).strategy_set
    return read_file(path, target.name, allow_raw, kind, (target,)).strategy_set


def read_file(
    path: Union[str, Path],
    target: Optional[str] = None,
    allow_raw: bool = False,
    kind: Optional[Union[Injection, str]] = None,
    targets: Optional[Seq[Target]] = None,
) -> Imported:
    """:func:`read_spec` of the file at ``path``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecImportError(str(p), None, "", "the spec file does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise SpecImportError(str(p), None, "", f"the spec file cannot be read: {err}") from None
    return read_spec(text, str(p), target, allow_raw, kind, targets)


def merge(imports: Seq[Imported], targets: Optional[Seq[Target]] = None) -> StrategySet:
    """One set from the scripts tdsl rendered for one set (several targets, injection
    points): the rules at their original indices. Raises :class:`SpecImportError` when the
    scripts are not of one tdsl set or leave an index out."""
    if not imports:
        raise SpecImportError("<specs>", None, "", "no spec to merge")
    names = {i.strategy_set.name for i in imports}
    if len(names) != 1 or not all(i.own for i in imports):
        raise SpecImportError(imports[0].path, None, "", f"scripts tdsl rendered for one set (found sets {sorted(names)})")
    by_index: dict[int, Rule] = {}
    order: list[str] = []
    for imported in imports:
        for r in imported.rules:
            assert r.index is not None
            if r.index in by_index and by_index[r.index] != r.rule:
                raise SpecImportError(imported.path, None, "", f"two different rules with index {r.index}")
            by_index[r.index] = r.rule
    if sorted(by_index) != list(range(len(by_index))):
        missing = sorted(set(range(max(by_index) + 1)) - set(by_index))
        raise SpecImportError(imports[0].path, None, "", f"the scripts of every target and injection point of the set: rules {missing} are missing")
    rules = [by_index[i] for i in range(len(by_index))]
    for rule in rules:
        if rule.target not in order:
            order.append(rule.target)
    models = [_target_model(t, targets) for t in order]
    name = names.pop()
    try:
        return StrategySet(name=name, targets=tuple(models), rules=tuple(rules))
    except StrategyError as err:
        retried = [(m.accepting(err) or (m, ""))[0] for m in models] if targets is None else models
        if retried == models:
            raise
        return StrategySet(name=name, targets=tuple(retried), rules=tuple(rules))


def import_specs(
    paths: Seq[Union[str, Path, tuple[Union[str, Path], str]]], targets: Optional[Seq[Target]] = None
) -> StrategySet:
    """The set tdsl rendered into the scripts ``paths`` (each a path, or (path, target
    name) for a script whose target the script does not tell, e.g. a preprocessing spec),
    rules at their original indices (:func:`merge`)."""
    imports = []
    for entry in paths:
        path, target = entry if isinstance(entry, tuple) else (entry, None)
        imports.append(read_file(path, target, targets=targets))
    return merge(imports, targets)
