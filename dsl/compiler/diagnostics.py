"""Diagnostics printed by ``iree-compile``, mapped back to strategy fields and rules.

A diagnostic whose location is one of tdsl's ``loc("<strategy>.<field>")`` names that
field; one that points into the payload keeps its file and line.

A codegen error inside a dispatch (``large vector sizes``, ``exceeded stack allocation
limit``, ...) carries no tdsl location: IREE points it into the executable dump
(``configured_module_<executable>.mlir``). :func:`locate_in_dispatches` reads the
``tdsl.rule`` / ``tdsl.layout_rule`` markers of that dispatch and names the rules that
configured it (``<set>.rules[i]``, the strategy name and kind). An error on a tile
level (``expected only parallel dims to be set in the distribution tiling level, but tile
size at index (6) was also set``) names the level and loop of the rule that set it
(:func:`locate_tile_levels`): where the matcher does not fix a convolution's loop order,
only IREE knows which loops are reductions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

from ..render import LAYOUT_RULE_MARKER, RULE_MARKER

_DIAG = re.compile(r"^(?P<where>.*?):\s(?P<severity>error|warning|remark|note): (?P<message>.*)$")
_NAME_IN_WHERE = re.compile(r'^"(?P<name>[^"]+)"$')
_NAME_IN_MESSAGE = re.compile(r'^loc\("(?P<name>[^"]+)"\):\s*(?P<rest>.*)$')
_FILE_LINE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)$")

CONFIGURED = "configured_module_"
"""The prefix of the executable dump files that hold a configured dispatch."""


@dataclass(frozen=True)
class CompilerDiagnostic:
    """One diagnostic printed by ``iree-compile``.

    ``strategy_field`` is the tdsl location (``mm_td.tiling[1]``) when the diagnostic
    points into a rendered script, or the rule (``mm.rules[2]``) that configured the
    dispatch an error points into; ``file``/``line`` where it points (the payload, a
    dump file). ``dispatch`` is the dispatch the error is in, ``rules`` the rules that
    configured it (``mm.rules[2] (mm_tiles, cpu_lowering)``, lowering rules first),
    both set by :func:`locate_in_dispatches`.
    """

    severity: str
    message: str
    strategy_field: str | None = None
    file: str | None = None
    line: int | None = None
    dispatch: str | None = None
    rules: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.dispatch is not None:
            if self.rules:
                where = f"{' and '.join(self.rules)} configured dispatch {self.dispatch}"
            else:
                where = f"dispatch {self.dispatch} (IREE's default configuration: no tdsl rule applied to it)"
        elif self.strategy_field:
            where = f"strategy field {self.strategy_field}"
        else:
            where = f"{self.file}:{self.line}" if self.file else "iree-compile"
        return f"{where}: {self.severity}: {self.message}"


def parse_diagnostics(stderr: str) -> list[CompilerDiagnostic]:
    """The diagnostics in ``iree-compile``'s stderr (source excerpts and carets skipped)."""
    found = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw.strip())
        if not m:
            continue
        where, severity, message = m.group("where"), m.group("severity"), m.group("message")
        name = None
        file = line = None
        if n := _NAME_IN_WHERE.match(where):
            name = n.group("name")
        elif n := _NAME_IN_MESSAGE.match(message):
            name, message = n.group("name"), n.group("rest")
        if f := _FILE_LINE.match(where):
            if f.group("file") != "<unknown>":
                file, line = f.group("file"), int(f.group("line"))
        found.append(CompilerDiagnostic(severity, message, name, file, line))
    return found


@dataclass(frozen=True)
class RuleName:
    """How an error names a rule: its path in the set and its strategy's name and kind."""

    path: str
    strategy: str
    kind: str

    def __str__(self) -> str:
        return f"{self.path} ({self.strategy}, {self.kind})"


@dataclass(frozen=True)
class _Function:
    """A dispatch function of one configured module: its name, first line, and the rules
    its ops carry markers of (lowering rules, then layout rules)."""

    name: str
    line: int
    rules: tuple[int, ...]


_FUNC_LINE = re.compile(r"^\s*func\.func\s+(?:(?:public|private)\s+)?@(?P<name>[A-Za-z0-9_$.]+)")
_MARKERS = {
    key: re.compile(rf'"?{re.escape(key)}"?\s*=\s*(?P<index>\d+)\s*:\s*i64')
    for key in (RULE_MARKER, LAYOUT_RULE_MARKER)
}


def _functions(text: str) -> list[_Function]:
    """The dispatch functions of one configured module, in order, with the rules whose
    markers their ops carry (read line by line: a function's ops follow its header)."""
    found: list[tuple[str, int, list[int], list[int]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _FUNC_LINE.match(line)
        if header:
            found.append((header.group("name"), number, [], []))
            continue
        if not found:
            continue
        _, _, lowering, layout = found[-1]
        for key, into in ((RULE_MARKER, lowering), (LAYOUT_RULE_MARKER, layout)):
            for marker in _MARKERS[key].finditer(line):
                index = int(marker.group("index"))
                if index not in into:
                    into.append(index)
    return [
        _Function(name, line, tuple(sorted(lowering)) + tuple(sorted(i for i in layout if i not in lowering)))
        for name, line, lowering, layout in found
    ]


def _configured_module(file: Path) -> Path | None:
    """The configured module of the executable a dump file belongs to (``configured_module_X.mlir``
    for ``module_X.mlir`` or ``module_X_<variant>_benchmark.mlir``), if it exists."""
    name = file.name
    if name.startswith(CONFIGURED):
        return file if file.is_file() else None
    candidates = sorted(file.parent.glob(f"{CONFIGURED}*.mlir"), key=lambda p: -len(p.name))
    for candidate in candidates:
        executable = candidate.name[len(CONFIGURED) : -len(".mlir")]
        if name == f"module_{executable}.mlir" or name.startswith(f"module_{executable}_"):
            return candidate
    return None


def locate_in_dispatches(
    diagnostics: Sequence[CompilerDiagnostic],
    dump: Path | str,
    rules: Mapping[int, RuleName],
) -> tuple[CompilerDiagnostic, ...]:
    """``diagnostics`` with each error that carries no strategy location but points into
    the executable dump ``dump`` (or names one of its dispatch functions) attributed to
    its dispatch and the rules that configured it: ``strategy_field`` becomes the first
    such rule's path (``<set>.rules[i]``), ``rules`` names them all (``rules`` maps a
    rule index to its :class:`RuleName`, :func:`rule_names`). A dispatch no rule
    configured keeps ``strategy_field`` None (IREE's own configuration failed)."""
    where = Path(dump)
    modules: dict[Path, list[_Function]] = {}

    def functions_of(path: Path) -> list[_Function]:
        if path not in modules:
            try:
                modules[path] = _functions(path.read_text(errors="replace"))
            except OSError:
                modules[path] = []
        return modules[path]

    def in_dump(file: str) -> Path | None:
        path = Path(file)
        try:
            inside = path.resolve().parent == where.resolve()
        except OSError:
            return None
        return _configured_module(path) if inside else None

    def all_functions() -> list[_Function]:
        found: list[_Function] = []
        for path in sorted(where.glob(f"{CONFIGURED}*.mlir")) if where.is_dir() else []:
            found += functions_of(path)
        return found

    located = []
    for d in diagnostics:
        if d.severity != "error" or d.strategy_field:
            located.append(d)
            continue
        chosen: list[_Function] = []
        module = in_dump(d.file) if d.file else None
        if module is not None:
            functions = functions_of(module)
            before = [f for f in functions if d.line is not None and f.line <= d.line]
            chosen = before[-1:] or functions
        else:
            named = [f for f in all_functions() if re.search(rf"@{re.escape(f.name)}\b", d.message)]
            chosen = named[:1]
        if not chosen:
            located.append(d)
            continue
        indices = [i for f in chosen for i in f.rules]
        indices = [i for n, i in enumerate(indices) if i not in indices[:n] and i in rules]
        names = tuple(str(rules[i]) for i in indices)
        located.append(
            replace(
                d,
                strategy_field=rules[indices[0]].path if indices else None,
                dispatch=", ".join(f.name for f in chosen),
                rules=names,
            )
        )
    return tuple(located)


def rule_names(set_name: str, indexed: Sequence[tuple[int, str, str]]) -> dict[int, RuleName]:
    """{index: RuleName} for the (index, strategy name, kind) of a set's rules."""
    return {index: RuleName(f"{set_name}.rules[{index}]", name, kind) for index, name, kind in indexed}


_TILE_LEVEL = re.compile(
    r"expected only (?P<kind>parallel|reduction) dims to be set in the (?P<level>\w+) tiling level, "
    r"but tile size at index \((?P<index>\d+)\)"
)


def locate_tile_levels(
    diagnostics: Sequence[CompilerDiagnostic], rules: Mapping[int, RuleName], strategies: Mapping[int, object]
) -> tuple[CompilerDiagnostic, ...]:
    """``diagnostics`` with each error on a tile level that no strategy location names
    attributed to ``<strategy>.<level>[<loop>]`` of the first rule (among those that
    configured its dispatch, when known) whose strategy (``strategies``, by rule index)
    sets a tile at that loop of that level."""
    located = []
    for d in diagnostics:
        m = _TILE_LEVEL.search(d.message)
        if d.severity != "error" or m is None or (d.strategy_field and d.strategy_field not in _rule_paths(rules)):
            located.append(d)
            continue
        level, loop = m.group("level"), int(m.group("index"))
        configured = [i for i, name in rules.items() if str(name) in d.rules] or list(rules)
        setting = [i for i in configured if _tile(strategies.get(i), level, loop)]
        if not setting:
            located.append(d)
            continue
        first = rules[setting[0]]
        located.append(
            replace(
                d,
                strategy_field=f"{first.strategy}.{level}[{loop}]",
                message=f"{d.message} (loop {loop} is a "
                f"{'reduction' if m.group('kind') == 'parallel' else 'parallel'} loop of the matched op: "
                f"set {level}[{loop}] to 0)",
                rules=tuple(str(rules[i]) for i in setting),
            )
        )
    return tuple(located)


def _rule_paths(rules: Mapping[int, RuleName]) -> set[str]:
    return {name.path for name in rules.values()}


def _tile(strategy: object, level: str, loop: int) -> bool:
    """``strategy`` has a tile level ``level`` with a non-zero tile at ``loop``."""
    sizes = getattr(strategy, level, None)
    return isinstance(sizes, tuple) and loop < len(sizes) and isinstance(sizes[loop], int) and sizes[loop] != 0


_ON_OP = re.compile(r"^'(?P<op>[A-Za-z_][\w.]*)' op ")


def locate_by_op_name(
    diagnostics: Sequence[CompilerDiagnostic], rules: Mapping[int, RuleName], op_names: Mapping[int, Sequence[str]]
) -> tuple[CompilerDiagnostic, ...]:
    """``diagnostics`` with each error that no location names and that is on an op
    (``'linalg.fill' op multiple ops within dispatch trying to set the translation info``)
    attributed to the rules whose matcher names that op (``op_names``: the op names each
    rule's matcher names, by rule index): where IREE fails before a configured dispatch is
    written, the op is what ties the error to a rule."""
    located = []
    for d in diagnostics:
        m = _ON_OP.match(d.message)
        naming = [i for i, names in op_names.items() if m is not None and m.group("op") in names and i in rules]
        if d.severity != "error" or d.strategy_field or not naming:
            located.append(d)
            continue
        located.append(
            replace(
                d,
                strategy_field=f"{rules[naming[0]].path}.match",
                message=f"{d.message} (the rule's matcher selects {m.group('op') if m else 'the op'}; "
                "narrow it to the op it is meant for)",
                rules=tuple(str(rules[i]) for i in naming),
            )
        )
    return tuple(located)
