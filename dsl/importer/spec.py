"""Importing a transform-dialect spec into a :class:`StrategySet`: the entry point's
``foreach_match`` runs, each matcher -> action pair read into one rule.

A spec tdsl rendered itself (module ``@tdsl_<set>``, actions ``@tdsl_r<i>_<name>``, its
markers) imports back to the same rules: the set and strategy names, the rule indices, the
``one_of`` alternatives folded back from their matcher sequences, ``AllOf`` and function
scopes from the locations, so rendering the imported set gives the same script byte for
byte. object other spec gives one rule per pair, named after its matcher sequence (made a
valid tdsl symbol, and reported when that changed it).

What the import changed or dropped (upgraded spellings, renamed sequences, IREE's
``__tuning_spec_applied__`` marker, included matchers inlined, raw escape hatches) is
listed in :attr:`Imported.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union
from typing import Sequence as Seq

from ..errors import StrategyError, TargetError, TdslError
from ..model.all_of import AllOf
from ..model.call_replacement import CallReplacement
from ..model.kinds import Injection, MatcherKind, StrategyKind
from ..model.matchers import AttentionMatch, DagMatch
from ..sets.strategy_set import Rule, StrategySet
from ..targets import Target, named, target_names
from ..targets.amdgpu_facts import SPEC_WORDS
from ..targets.registry import default_for
from .call_replacements import cleanup_ops
from .entry import check_spec, deferred_fields, find_entry, guess_injection, own_index, read_pairs, sanitize
from .folding import dag_root, fold_alternatives, rule_matcher
from .imperative import is_imperative, read_chains
from .ir import Module, Op, Sequence, read_module
from .pair_reader import PairRead, PairReader
from .problems import Note, SpecImportError
from .upgrade import upgrade


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
    entry: str = ""
    """The name of the spec's entry point sequence."""

    def report(self) -> list[str]:
        """One line per note (``path:line: text``)."""
        return [n.describe(self.path) for n in self.notes]


def _target_model(name: str, targets: Optional[Seq[Target]]) -> Target:
    for t in targets or ():
        if t.name == name:
            return t
    found = named(name)
    if found is None:
        listed = " or ".join(repr(n) for n in target_names())
        raise TargetError(f"target {name!r}: expected {listed} (or pass the target models)")
    return found


def _backends(strategy: StrategyKind) -> frozenset[object]:
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


ROCM_WORDS = SPEC_WORDS
"""Words that only a spec for a ROCm GPU holds (:data:`tdsl.targets.amdgpu_facts.SPEC_WORDS`)."""


def _infer_target(strategies: list[StrategyKind], given: Optional[str], notes: list[Note], text: str = "") -> str:
    """The target the rules are for: ``given``, else the backend their configs name, else
    gfx942 where the spec's ``text`` names ROCm (:data:`ROCM_WORDS`), else cpu (noted)."""
    if given is not None:
        return given
    from ..model.kinds import Backend

    backends = [_backends(s) for s in strategies]
    if (
        backends
        and all(b == frozenset({Backend.ROCM}) for b in backends if len(b) == 1)
        and any(len(b) == 1 for b in backends)
    ):
        if all(Backend.ROCM in b for b in backends):
            return default_for(Backend.ROCM).name
    cpu = default_for(Backend.LLVM_CPU).name
    if backends and any(len(b) == 1 for b in backends) and all(Backend.LLVM_CPU in b for b in backends):
        return cpu
    if any(len(b) == 1 for b in backends):
        raise TargetError(f"the spec holds configs for both {Backend.LLVM_CPU} and {Backend.ROCM}: pass a target")
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())  # comments left out
    rocm = next((word for word in ROCM_WORDS if word in code), None)
    if rocm is not None:
        gpu = default_for(Backend.ROCM).name
        notes.append(
            Note(
                None,
                f"no config names a backend, but the spec names {rocm!r} (ROCm): the rules are imported for target {gpu!r} (pass a target to choose)",
            )
        )
        return gpu
    notes.append(
        Note(None, f"no config names a backend; the rules are imported for target {cpu!r} (pass a target to choose)")
    )
    return cpu


@dataclass(frozen=True)
class _FoldedRule:
    """One rule as read: its index in the set a tdsl render came from, its matcher and
    strategy, the line of its matcher sequence, and whether it keeps raw MLIR."""

    index: Optional[int]
    matcher: MatcherKind
    strategy: StrategyKind
    line: Optional[int]
    raw: bool


@dataclass
class _ReadPairs:
    """A spec's pairs read: the module, its entry point and injection point, the reader
    (which collects the notes), the pairs read in order, and whether tdsl rendered it."""

    module: Module
    entry: Sequence
    injection: Injection
    reader: PairReader
    reads: list[PairRead]
    own: bool
    upgraded: str


def _read_pairs(text: str, path: str, injection: Optional[Injection], allow_raw: bool) -> _ReadPairs:
    """Upgrades and parses the spec, finds its entry point and reads each of its pairs."""
    upgraded, notes = upgrade(text, path)
    module = read_module(upgraded)
    check_spec(module, path)
    guessed = guess_injection(module, text) if injection is None else None
    if guessed is not None:
        injection = guessed
        notes.append(
            Note(
                None,
                f"the spec names hal.executable ops, which only a codegen library sees: imported as a {guessed.value}",
            )
        )
    entry, injection = find_entry(module, injection, path)
    if is_imperative(entry):
        reader = PairReader(module, path, allow_raw, injection)
        reader.notes.extend(notes)
        reads = [reader.read_chain(chain, entry) for chain in read_chains(entry, path, reader.notes, injection)]
        return _ReadPairs(module, entry, injection, reader, reads, False, upgraded)
    deferred: list[Op] = []
    tdsl_render = (module.name or "").startswith("tdsl_")
    pairs = read_pairs(entry, path, deferred, notes, tdsl_render)
    own = tdsl_render and all(own_index(p.action) is not None for p in pairs)
    reader = PairReader(module, path, allow_raw, injection, own)
    reader.deferred = deferred_fields(deferred) if own else {}
    reader.notes.extend(notes)
    # the pairs first: what they do is what a reader of the spec needs to know first
    reads = [reader.read_pair(pair, sanitize(pair.matcher)) for pair in pairs]
    if deferred and not own and any(isinstance(r.strategy, CallReplacement) for r in reads):
        cleanup, deferred = cleanup_ops(deferred, _roots(entry))
        for op in cleanup:
            reader.note(op.line, f"{op.name}: the cleanup CallReplacement runs after its rules (kept)")
    if deferred and not own:
        stray = deferred[0]
        raise SpecImportError(
            path,
            stray.line,
            stray.name,
            f"an op in the entry point @{entry.name} after its foreach_match runs: tdsl's entry only runs "
            "foreach_match (over the root or a function)",
        )
    return _ReadPairs(module, entry, injection, reader, reads, own, upgraded)


def _roots(entry: Sequence) -> set[int]:
    """The handles of the payload root in the entry: its argument and each run's result."""
    runs = [op for op in entry.op.body.ops if op.name == "transform.foreach_match"]
    return set(entry.args[:1]) | {result for op in runs for result in op.results}


def _groups(spec: _ReadPairs) -> list[list[PairRead]]:
    """The reads by rule: tdsl renders one action per rule (its matcher sequences are the
    alternatives); every pair of another spec is a rule of its own."""
    groups: list[list[PairRead]] = []
    for r in spec.reads:
        if spec.own and groups and groups[-1][0].pair.action == r.pair.action:
            groups[-1].append(r)
        else:
            groups.append([r])
    return groups


def _fold_rules(spec: _ReadPairs, path: str) -> tuple[list[_FoldedRule], dict[str, str]]:
    """One rule per group, and the sequences renamed (original -> tdsl name) to give each
    strategy of a spec tdsl did not render a name of its own."""
    rules: list[_FoldedRule] = []
    renamed: dict[str, str] = {}
    used: set[str] = set()
    for group in _groups(spec):
        first = group[0]
        try:
            if spec.own:
                matcher = fold_alternatives([r.leaves for r in group], first.pair.scope)
            else:
                matcher = rule_matcher(first.leaves, first.pair.scope)
        except (StrategyError, TdslError) as err:
            raise SpecImportError(
                path,
                first.pair.line,
                "transform.foreach_match",
                f"matchers of @{first.pair.action} that fold into one rule ({err})",
            ) from None
        index: Optional[int] = None
        strategy = first.strategy
        if spec.own:
            parsed = own_index(first.pair.action)
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
        matcher_sequence = spec.module.sequence(first.pair.matcher)
        rules.append(
            _FoldedRule(
                index, matcher, strategy, matcher_sequence.line if matcher_sequence else first.pair.line, first.raw
            )
        )
    return rules, renamed


def _note_renamed(spec: _ReadPairs, renamed: dict[str, str]) -> None:
    for original, new in renamed.items():
        found = spec.module.sequence(original)
        why = (
            "a tdsl strategy name is a symbol of letters, digits and '_'"
            if sanitize(original) != original
            else "another rule has its name"
        )
        spec.reader.note(found.line if found is not None else None, f"@{original} is named {new} ({why})")


def _note_dead_matchers(
    spec: _ReadPairs, rules: list[_FoldedRule], target_name: str, targets: Optional[Seq[Target]]
) -> None:
    """Warns of the rules IREE 3.13 never applies when it configures ops (as in the original
    spec): a pattern DAG whose root op the target has turned into a generic, and an
    ``iree.match.attention`` matcher (attention is ``iree_linalg_ext.online_attention`` by
    then, on every target)."""
    gone = _target_model(target_name, targets).ops_gone_at_codegen
    for rule in rules:
        for leaf in rule.matcher.matchers if isinstance(rule.matcher, AllOf) else (rule.matcher,):
            root = dag_root(leaf.pattern) if isinstance(leaf, DagMatch) else None
            if root is not None and root.startswith(gone):
                spec.reader.note(
                    rule.line,
                    f"{rule.strategy.name}: the pattern's root {root} is a linalg.generic when IREE 3.13 configures ops for {target_name}, so this rule matches nothing (as in the original spec)",
                )
            if isinstance(leaf, AttentionMatch) and leaf.op == "attention":
                spec.reader.note(
                    rule.line,
                    f"warning: {rule.strategy.name}: IREE 3.13 has turned attention into iree_linalg_ext.online_attention when it configures ops, so its transform.iree.match.attention matches nothing (as in the original spec); match op='online_attention' to configure attention",
                )


def _strategy_set(
    name: str, rules: list[_FoldedRule], target_name: str, targets: Optional[Seq[Target]], notes: list[Note], path: str
) -> StrategySet:
    """The imported set; an invalid one is a :class:`SpecImportError` at the line of the
    rule it names."""
    try:
        return _build(
            name,
            [Rule(target=target_name, match=r.matcher, strategy=r.strategy) for r in rules],
            target_name,
            targets,
            notes,
        )
    except StrategyError as err:
        text = str(err)
        where: Optional[int] = None
        if ".rules[" in text:
            number = text.split(".rules[", 1)[1].split("]", 1)[0]
            where = rules[int(number)].line if number.isdigit() and int(number) < len(rules) else None
        for rule in rules:
            if text.startswith(f"invalid strategy: {rule.strategy.name}."):
                where = rule.line
        raise SpecImportError(
            path, where, "", f"the imported rules do not make a valid strategy set for {target_name}: {text}"
        ) from None


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
    spec = _read_pairs(text, path, Injection(kind) if isinstance(kind, str) else kind, allow_raw)
    rules, renamed = _fold_rules(spec, path)
    _note_renamed(spec, renamed)
    notes = spec.reader.notes
    try:
        target_name = _infer_target([r.strategy for r in rules], target, notes, spec.upgraded)
    except TargetError as err:
        raise SpecImportError(path, None, "", str(err)) from None
    module_name = spec.module.name
    set_name = (
        sanitize(module_name[len("tdsl_") :])
        if spec.own and module_name
        else sanitize(module_name or Path(path).stem or "imported")
    )
    indices = [r.index for r in rules]
    if spec.own and indices != list(range(len(indices))):
        spec.reader.note(
            None,
            f"rule indices {indices} of the original set: the other rules are in other scripts; merge them with import_specs to keep the indices",
        )
    if (
        spec.injection is Injection.CODEGEN_LIBRARY
        and not spec.own
        and all(r.strategy.injection is Injection.TUNING_SPEC for r in rules)
    ):
        spec.reader.note(
            spec.entry.line,
            "a codegen library that only sets compilation_info: tdsl renders its rules as a tuning spec "
            "(--iree-codegen-tuning-spec-path), which IREE 3.13 applies the same way",
        )
    if spec.injection is not Injection.PREPROCESSING:
        _note_dead_matchers(spec, rules, target_name, targets)
    strategy_set = _strategy_set(set_name, rules, target_name, targets, notes, path)
    imported_rules = [
        ImportedRule(Rule(target=target_name, match=r.matcher, strategy=r.strategy), r.index) for r in rules
    ]
    raw_names = [r.strategy.name for r in rules if r.raw]
    notes_sorted = sorted(notes, key=lambda n: (n.line is None, n.line or 0))
    return Imported(
        strategy_set,
        spec.injection,
        target_name,
        imported_rules,
        notes_sorted,
        renamed,
        raw_names,
        spec.own,
        path,
        spec.upgraded,
        spec.entry.name,
    )


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
    if p.is_dir():
        raise SpecImportError(str(p), None, "", "expected a transform-dialect spec file (.mlir), received a directory")
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
        raise SpecImportError(
            imports[0].path, None, "", f"scripts tdsl rendered for one set (found sets {sorted(names)})"
        )
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
        raise SpecImportError(
            imports[0].path,
            None,
            "",
            f"the scripts of every target and injection point of the set: rules {missing} are missing",
        )
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
