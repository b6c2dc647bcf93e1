"""Reading one (matcher, action) pair of a spec into a strategy: typed where tdsl
expresses it, else refused, or kept as raw MLIR with ``allow_raw``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..bindings import Attr, Opaque
from ..errors import StrategyError
from ..model.base import MARKER_RE
from ..model.kinds import Injection, StrategyKind
from ..model.lowering import NO_UKERNELS
from ..model.matchers import OpNameMatch
from ..model.raw import RawAnnotation, RawCodegenAction, RawConfig, RawMatch, RawPreprocessingAction, RawTuningAction
from .actions import (
    TDSL_MARKERS,
    ConfigAction,
    Marks,
    build_layout,
    read_codegen,
    read_config_action,
    read_layout,
    read_marker,
)
from .call_replacements import read_call_replacement, read_rendered_call, replaces_with_call
from .configs import ConfigReader
from .entry import PER_OP, TUNING_APPLIED, Pair, own_index, sanitize
from .folding import loop_roles, root_op
from .imperative import Chain, chain_action, chain_matcher, chain_name, chain_text
from .ir import Module, Sequence
from .kernel_rewrites import read_kernel_rewrite
from .matchers import Leaf, ReadMatcher, read_matcher
from .problems import Note, SpecImportError, Unsupported

RAW_ACTION = {
    Injection.TUNING_SPEC: RawTuningAction,
    Injection.PREPROCESSING: RawPreprocessingAction,
    Injection.CODEGEN_LIBRARY: RawCodegenAction,
}


@dataclass
class PairRead:
    """One pair read: its matcher leaves (or the raw matcher), the strategy, tdsl's marks."""

    pair: Pair
    leaves: list[Leaf]
    strategy: StrategyKind
    marks: Marks
    raw: bool


class PairReader:
    def __init__(self, module: Module, path: str, allow_raw: bool, injection: Injection, own: bool = False):
        self.own = own
        self.deferred: dict[str, dict[str, object]] = {}
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

    def read_pair(self, pair: Pair, name: str) -> PairRead:
        matcher = self.sequence(pair.matcher, pair.line)
        action = self.sequence(pair.action, pair.line)
        if replaces_with_call(action):
            return self._call_replacement(matcher, action, pair, name)
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
        return PairRead(pair, read.leaves, strategy, marks, raw_leaves or raw_action)

    def _call_replacement(self, matcher: Sequence, action: Sequence, pair: Pair, name: str) -> PairRead:
        """A pair that replaces the matched DAG with a call to what the spec defines, as a
        :class:`~tdsl.model.call_replacement.CallReplacement` (a preprocessing kind)."""
        if self.injection is not Injection.PREPROCESSING:
            raise SpecImportError(
                self.path,
                action.line,
                "transform.util.import_symbol",
                f"a preprocessing spec (@{action.name} replaces ops with a call; read as a {self.injection.value})",
            )
        try:
            if self.own:  # tdsl's render: a typed matcher, the strategy name and rule index in the symbols
                parsed = own_index(action.name)
                strategy_name = parsed[1] if parsed else name
                read = read_matcher(self.module, matcher, self.own)
                strategy = read_rendered_call(self.module, action, action.op.loc or strategy_name)
                return PairRead(pair, read.leaves, strategy, Marks(strategy.name, parsed and parsed[0]), False)
            leaf, strategy = read_call_replacement(self.module, matcher, action, name)
        except Unsupported as problem:
            raise SpecImportError(self.path, problem.line, problem.op, problem.missing) from None
        return PairRead(pair, [leaf], strategy, Marks(), False)

    def read_chain(self, chain: Chain, entry: Sequence) -> PairRead:
        """One chain of an imperative entry point: its match as the matcher, the ops on the
        matched handle as the action (typed, else refused, or with ``allow_raw`` that chain
        alone kept as a raw action on the typed matcher, with a note naming its ops)."""
        name = chain_name(chain)
        pair = Pair(name, name, chain.scope, chain.line)
        try:
            leaf = Leaf(chain_matcher(chain.match), None, chain.line)
        except Unsupported as problem:
            raise SpecImportError(self.path, problem.line, problem.op, problem.missing) from None
        if not chain.ops:
            raise SpecImportError(
                self.path, chain.line, chain.match.name, "ops on the handle it matches (the match is unused)"
            )
        read = ReadMatcher([leaf], (chain.handle,), {})
        try:
            strategy, marks, _ = self._typed_action(chain_action(chain, name), {}, read, name, {})
            return PairRead(pair, [leaf], strategy, marks, False)
        except Unsupported as problem:
            if not self.allow_raw:
                raise self.refuse(problem, f"the ops on the handle of line {chain.line}") from None
            try:
                strategy = RAW_ACTION[self.injection](name=name, sequence=chain_text(chain, entry.op.value_names, name))
            except StrategyError as err:
                raise SpecImportError(
                    self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}"
                ) from None
            ops = ", ".join(dict.fromkeys(op.name for op in chain.ops))
            self.note(
                problem.line,
                f"{problem.op}: {problem.missing}; the ops on the handle of line {chain.line} ({ops}) are kept as a raw action ({name}) on its typed matcher",
            )
            return PairRead(pair, [leaf], strategy, Marks(), True)

    def _raw_matcher(self, matcher: Sequence, problem: Unsupported) -> ReadMatcher:
        try:
            model = RawMatch(sequence=matcher.text)
        except StrategyError as err:
            raise SpecImportError(
                self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}"
            ) from None
        params = {
            op.results[0]: op.attrs["value"] for op in matcher.op.body.ops if op.name == "transform.param.constant"
        }
        last = matcher.op.body.ops[-1]
        self.note(problem.line, f"{problem.op}: {problem.missing}; the matcher @{matcher.name} is kept as raw MLIR")
        return ReadMatcher([Leaf(model, None, matcher.line)], last.operands, params)

    def _param_texts(self, matcher: Sequence) -> dict[int, str]:
        return {op.results[0]: op.value_text for op in matcher.op.body.ops if op.name == "transform.param.constant"}

    def _action(self, action: Sequence, read: ReadMatcher, name: str, pair: Pair) -> tuple[StrategyKind, Marks, bool]:
        matcher = self.sequence(pair.matcher, pair.line)
        texts = self._param_texts(matcher)
        if len(action.args) != len(read.yields):
            raise SpecImportError(
                self.path,
                action.line,
                "transform.named_sequence",
                f"an action @{action.name} that takes what the matcher @{matcher.name} yields ({len(read.yields)} values)",
            )
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
        self,
        action: Sequence,
        bound: dict[int, Optional[Attr]],
        read: ReadMatcher,
        name: str,
        lines: dict[int, Optional[int]],
    ) -> tuple[StrategyKind, Marks, bool]:
        if self.injection is Injection.PREPROCESSING:
            fields, marks = read_layout(action)
            deferred = dict(self.deferred.get(marks.name or "", {}))
            per_op = deferred.pop(PER_OP, None)
            if isinstance(per_op, str):  # fold_unit_dims: the pack steps run on each folded op
                sequence = self.module.sequence(per_op)
                if sequence is None:
                    raise Unsupported("transform.include", action.line, f"the sequence @{per_op} in the spec")
                packing, _ = read_layout(sequence)
                fields.update(packing)
            fields.update(deferred)
            return build_layout(marks.name or name, fields, action.line), marks, False
        if self.injection is Injection.CODEGEN_LIBRARY:
            rewrite = read_kernel_rewrite(action, name, self.note)
            if rewrite is not None:
                return rewrite[0], rewrite[1], False
        config = read_config_action(action, bound, lines)
        strategy_name = config.marks.name or name
        if config.codegen_spec is not None:
            definition = self.module.sequence(config.codegen_spec)
            if definition is None:
                raise Unsupported(
                    "transform.annotate", action.line, f"the lowering sequence @{config.codegen_spec} in the spec"
                )
            if config.annotations:
                raise Unsupported(
                    "transform.annotate", config.annotations[0][2], "other annotations next to tdsl's codegen marker"
                )
            root = root_op(read.leaves)
            if root == "linalg.generic" and not any(isinstance(leaf.matcher, OpNameMatch) for leaf in read.leaves):
                self.note(
                    definition.line,
                    f"{strategy_name}: the script does not name the Codegen root op; imported as root='linalg.generic' (set it to the named op for tdsl's loop checks)",
                )
            return read_codegen(self.module, strategy_name, definition, root, strict=not self.own), config.marks, False
        return self._config(config, strategy_name, read, action.line), config.marks, False

    def _config(self, config: ConfigAction, name: str, read: ReadMatcher, line: Optional[int]) -> StrategyKind:
        info: Optional[Attr] = None
        decomposition: Optional[Attr] = None
        markers: list[str] = []
        extra: dict[str, object] = {}
        info_line = line
        for label, value, at in config.annotations:
            if label == "compilation_info" and info is None:
                info, info_line = value, at
            elif label == "decomposition_config" and decomposition is None:
                decomposition = value
            elif label == "hal.executable.target" and isinstance(value, Opaque) and value.text == NO_UKERNELS:
                extra["ukernels"] = False
            elif label == TUNING_APPLIED and value is None:
                if not self.dropped_applied:
                    self.note(
                        at,
                        f"the {TUNING_APPLIED!r} marker IREE's default specs set is not kept (tdsl marks ops with tdsl.applied)",
                    )
                    self.dropped_applied = True
            elif value is None and MARKER_RE.fullmatch(label):
                markers.append(label)
            else:
                raise Unsupported(
                    "transform.annotate",
                    at,
                    f"the annotation {label!r} (tdsl's lowering strategies set compilation_info, decomposition_config, "
                    f"__*_applied__ markers and hal.executable.target = {NO_UKERNELS})",
                )
        if info is None:
            raise Unsupported(
                "transform.annotate", line, "a compilation_info annotation (tdsl's lowering strategies set one)"
            )
        reader = ConfigReader(info_line, loop_roles(read.leaves))
        strategy = reader.strategy(name, info, decomposition)
        if markers:
            extra["markers"] = markers
        if extra:
            try:
                strategy = type(strategy).model_validate({**strategy.model_dump(), **extra})
            except StrategyError as err:
                raise Unsupported(
                    "transform.annotate", info_line, f"the annotations of a strategy tdsl accepts ({err})"
                ) from None
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
                    if read_marker(label, value, marks):
                        continue
                    annotations.append(
                        RawAnnotation(name=label, value=texts.get(op.operands[1]) if len(op.operands) > 1 else None)
                    )
            return RawConfig(name=marks.name or sanitize(action.name), annotations=tuple(annotations)), marks, True
        markers = {op.attr("name") for op in ops if op.name == "transform.annotate"}
        if markers & set(TDSL_MARKERS):
            return None
        helpers = _helpers(self.module, action)
        prefix = action.name + "_"
        mapping = {h.name: h.name[len(prefix) :] for h in helpers if h.name.startswith(prefix)}
        name = action.op.loc or sanitize(action.name)
        kind = RAW_ACTION[self.injection]
        strategy = kind(
            name=name,
            sequence=rename_symbols(action.text, mapping),
            helpers=tuple(rename_symbols(h.text, mapping) for h in helpers),
        )
        parsed = own_index(action.name)
        return strategy, Marks(name, parsed[0] if parsed else None), True

    def _without_prints(self, action: Sequence) -> str:
        """The action's text without its ``transform.print`` ops (debug output of the
        transform interpreter), each dropped with a note."""
        prints = [op for op in action.op.body.ops if op.name == "transform.print"]
        if not prints or not _print_lines(action):
            return action.text
        for op in prints:
            self.note(op.line, "transform.print (debug output of the transform interpreter) is not kept")
        return "\n".join(line for line in action.text.splitlines() if not line.strip().startswith("transform.print"))

    def _raw_action(
        self,
        action: Sequence,
        bound: dict[int, Optional[Attr]],
        bound_text: dict[int, str],
        name: str,
        problem: Unsupported,
    ) -> tuple[StrategyKind, Marks, bool]:
        """The raw escape hatch for an action: its annotations as :class:`RawConfig` when it
        only annotates (a tuning spec's config), else the sequence as a raw action."""
        annotations = _annotations(action, bound_text)
        if annotations is not None and self.injection is not Injection.PREPROCESSING:
            try:
                strategy: StrategyKind = RawConfig(name=name, annotations=tuple(annotations))
            except StrategyError as err:
                raise SpecImportError(
                    self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}"
                ) from None
            self.note(problem.line, f"{problem.op}: {problem.missing}; its annotations are kept as raw MLIR ({name})")
            return strategy, Marks(), True
        if len(action.args) != 1:
            raise SpecImportError(
                self.path,
                problem.line,
                problem.op,
                f"{problem.missing}; as raw MLIR the action must take only the matched op",
            )
        helpers = _helpers(self.module, action)
        try:
            strategy = RAW_ACTION[self.injection](
                name=name, sequence=self._without_prints(action), helpers=tuple(h.text for h in helpers)
            )
        except StrategyError as err:
            raise SpecImportError(
                self.path, problem.line, problem.op, f"{problem.missing}; and as raw MLIR: {err}"
            ) from None
        self.note(
            problem.line, f"{problem.op}: {problem.missing}; the action @{action.name} is kept as raw MLIR ({name})"
        )
        return strategy, Marks(), True


def _print_lines(action: Sequence) -> bool:
    """Whether each ``transform.print`` of ``action``'s body is one line of its text of its own."""
    lines = [line.strip() for line in action.text.splitlines()]
    prints = [op for op in action.op.body.ops if op.name == "transform.print"]
    return len(prints) == sum(line.startswith("transform.print") for line in lines)


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
