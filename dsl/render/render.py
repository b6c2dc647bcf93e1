"""Rendering: a StrategySet and a target name in, verified transform-dialect scripts out.

Rendering is pure: no I/O besides reading templates, no clock, no environment; equal
strategy sets give byte-identical scripts. Each script is parsed and verified with the
MLIR bindings of ``iree-base-compiler`` before it is returned; a failure raises
:class:`tdsl.errors.RenderError` with the script (line numbers) and the strategy field
that produced the bad line. Every transform op carries ``loc("<strategy>.<field path>")``.

Injection points and the files they produce:

============== ========================= =============================================
injection      file                      flag
============== ========================= =============================================
preprocessing  ``preprocessing.mlir``    ``--iree-preprocessing-transform-spec-filename``
tuning spec    ``tuning_spec.mlir``      ``--iree-codegen-tuning-spec-path``
codegen lib    ``codegen_library.mlir``  ``--iree-codegen-transform-dialect-library``
============== ========================= =============================================

IREE ignores a tuning spec when a codegen library is given, so when a target has a
``codegen`` rule its lowering rules go into the library's ``__kernel_config`` instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import jinja2

from .. import bindings as mlir
from ..errors import RenderError
from ..files import atomic_write
from ..spec.all_of import AllOf, expand, scope
from ..spec.base import path_text
from ..spec.kinds import Injection
from ..spec.strategy_set import Rule, StrategySet

PREPROCESSING = Injection.PREPROCESSING
TUNING_SPEC = Injection.TUNING_SPEC
CODEGEN_LIBRARY = Injection.CODEGEN_LIBRARY

# IREE 3.13 can deadlock when several executables load a tuning spec or codegen library
# in parallel: gdb on a hung iree-compile shows a worker blocked on the mutex in
# IREECodegenDialect::getOrLoadTransformLibraryModule (MaterializeTuningSpecsPass) and the
# main thread waiting for it. Seen here in about 1 of 15-60 compiles of
# examples/cpu_auto (300 s CI timeouts). Single-threaded pass execution avoids it, at
# about 20 % more compile time (cpu_auto: 1.2-1.3 s -> 1.4-1.5 s).
SERIAL_LOADING = "--mlir-disable-threading"

FLAG = {
    PREPROCESSING: "--iree-preprocessing-transform-spec-filename",
    TUNING_SPEC: "--iree-codegen-tuning-spec-path",
    CODEGEN_LIBRARY: "--iree-codegen-transform-dialect-library",
}
TEMPLATE = {
    PREPROCESSING: "preprocessing.mlir.j2",
    TUNING_SPEC: "tuning_spec.mlir.j2",
    CODEGEN_LIBRARY: "codegen_library.mlir.j2",
}
MARKER = "tdsl.applied"
LAYOUT_MARKER = "tdsl.layout"
RULE_MARKER = "tdsl.rule"
LAYOUT_RULE_MARKER = "tdsl.layout_rule"
ROOT_MARKER = "tdsl.root"


@dataclass(frozen=True)
class Script:
    """One rendered, verified script and the injection point it is for."""

    injection: Injection
    text: str

    @property
    def filename(self) -> str:
        return f"{self.injection}.mlir"

    def flag(self, directory: Path | str) -> str:
        return f"{FLAG[self.injection]}={Path(directory).resolve() / self.filename}"


@dataclass(frozen=True)
class Rendered:
    """The scripts of one StrategySet for one target, and the flags that inject them."""

    strategy_set: str
    target: Any
    scripts: tuple[Script, ...]
    rule_names: tuple[str, ...] = field(default=())

    def script(self, injection: str) -> Script | None:
        for script in self.scripts:
            if script.injection == injection:
                return script
        return None

    def flags(self, directory: Path | str, include_target: bool = True) -> list[str]:
        """``iree-compile`` flags: the target's, then one per script written to ``directory``,
        plus :data:`SERIAL_LOADING` when a codegen-phase script is injected."""
        flags = list(self.target.compile_flags()) if include_target else []
        flags += [s.flag(directory) for s in self.scripts]
        if any(s.injection in (TUNING_SPEC, CODEGEN_LIBRARY) for s in self.scripts):
            flags.append(SERIAL_LOADING)
        return flags

    def write(self, directory: Path | str) -> list[Path]:
        """Writes every script and ``flags.txt`` to ``directory`` atomically; returns the paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for script in self.scripts:
            paths.append(atomic_write(out / script.filename, script.text))
        flags = "\n".join(self.flags(out)) + "\n"
        paths.append(atomic_write(out / "flags.txt", flags))
        return paths


# --------------------------------------------------------------------------------------
# Template environment (built once).


def _ints(values: Any) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _loc(*parts: Any) -> str:
    return f'loc("{path_text(parts)}")'


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one jinja2 environment (StrictUndefined) over the packaged templates."""
    directory = resources.files("tdsl.templates")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["ints"] = _ints
    env.filters["quote"] = _quote
    env.globals["loc"] = _loc
    env.globals["MARKER"] = MARKER
    env.globals["LAYOUT_MARKER"] = LAYOUT_MARKER
    env.globals["RULE_MARKER"] = RULE_MARKER
    env.globals["LAYOUT_RULE_MARKER"] = LAYOUT_RULE_MARKER
    env.globals["ROOT_MARKER"] = ROOT_MARKER
    return env


# --------------------------------------------------------------------------------------
# Plans: canonical data the templates lay out.


@dataclass(frozen=True)
class RulePlan:
    """A rule as the templates see it: symbols, location prefixes, matcher alternatives."""

    index: int
    rule: Rule
    symbol: str
    match_path: str
    alternatives: list[list[tuple[int, Any, dict[str, Any]]]]

    @property
    def strategy(self) -> Any:
        return self.rule.strategy

    @property
    def scope(self) -> str | None:
        """The function this rule is restricted to (rendered as a foreach_match root)."""
        return scope(self.rule.match)

    def matcher_symbols(self) -> list[str]:
        return [f"{self.symbol}_match{j}" for j in range(len(self.alternatives))]

    @property
    def rule_path(self) -> str:
        return self.match_path.rsplit(".", 1)[0]

    def leaf_path(self, j: int) -> str:
        if isinstance(self.rule.match, AllOf):
            return f"{self.match_path}.matchers[{j}]"
        return self.match_path


@dataclass(frozen=True)
class Run:
    """Consecutive rules with the same scope: one ``transform.foreach_match``."""

    scope: str | None
    rules: list[RulePlan]


def runs(rules: list[RulePlan]) -> list[Run]:
    """Groups rules into foreach_match runs, keeping their order."""
    grouped: list[Run] = []
    for rule in rules:
        if grouped and grouped[-1].scope == rule.scope:
            grouped[-1].rules.append(rule)
        else:
            grouped.append(Run(rule.scope, [rule]))
    return grouped


def _plan(strategy_set: StrategySet, index: int, rule: Rule) -> RulePlan:
    return RulePlan(
        index=index,
        rule=rule,
        symbol=f"tdsl_r{index}_{rule.strategy.name}",
        match_path=f"{strategy_set.name}.rules[{index}].match",
        alternatives=expand(rule.match),
    )


def injections(rules: Sequence[Rule]) -> list[Injection]:
    """The script each rule of one target renders into: its kind's injection point, except
    that tuning-spec rules join the codegen library when the target has one (IREE ignores
    a tuning spec next to a codegen library)."""
    has_library = any(r.strategy.injection is Injection.CODEGEN_LIBRARY for r in rules)
    moved = {Injection.TUNING_SPEC: Injection.CODEGEN_LIBRARY} if has_library else {}
    return [moved.get(r.strategy.injection, r.strategy.injection) for r in rules]


def render(strategy_set: StrategySet, target: str) -> Rendered:
    """Renders and verifies every script ``strategy_set`` needs for ``target``."""
    target_model = strategy_set.target(target)
    rules = strategy_set.rules_for(target)
    groups: dict[str, list[RulePlan]] = {}
    for (index, rule), injection in zip(rules, injections([r for _, r in rules])):
        groups.setdefault(injection, []).append(_plan(strategy_set, index, rule))
    scripts = []
    for injection in (PREPROCESSING, TUNING_SPEC, CODEGEN_LIBRARY):
        if injection not in groups:
            continue
        text = environment().get_template(TEMPLATE[injection]).render(
            set=strategy_set, target=target_model, rules=groups[injection], runs=runs(groups[injection])
        )
        verify(text, f"{strategy_set.name} ({injection} for {target})")
        scripts.append(Script(injection, text))
    return Rendered(
        strategy_set=strategy_set.name,
        target=target_model,
        scripts=tuple(scripts),
        rule_names=tuple(r.strategy.name for _, r in rules),
    )


# --------------------------------------------------------------------------------------
# Verification with the MLIR bindings.

_LOC_IN_LINE = re.compile(r'loc\("([^"]*)"\)')
_ATTR_KEY = re.compile(r"^\s*([a-z_]+) = ")


def field_at_line(text: str, line: int) -> str | None:
    """The strategy field path of the op at ``line`` (1-based): the first ``loc("..")``
    at or after that line, which closes the op the line belongs to. A line inside a
    multi-line attribute (``  mma_kind = ...,``) adds its key: ``mm_f16.mma_kind``."""
    lines = text.splitlines()
    for candidate in lines[line - 1 :]:
        found = _LOC_IN_LINE.search(candidate)
        if found:
            name = found.group(1)
            key = _ATTR_KEY.match(lines[line - 1])
            if key and not _LOC_IN_LINE.search(lines[line - 1]):
                name = f"{name}.{key.group(1)}"
            return name
    return None


def numbered(text: str, around: int | None = None, context: int = 6) -> str:
    """``text`` with line numbers; only ``context`` lines around line ``around`` if given."""
    lines = text.splitlines()
    lo, hi = 0, len(lines)
    if around is not None:
        lo, hi = max(0, around - 1 - context), min(len(lines), around + context)
    width = len(str(hi))
    out = []
    for i in range(lo, hi):
        mark = ">" if around is not None and i + 1 == around else " "
        out.append(f"{mark}{i + 1:>{width}} | {lines[i]}")
    return "\n".join(out)


_OP_IN_MESSAGE = re.compile(r"'([a-z_]+(?:\.[a-z_]+)+)' op")


def line_of_field(text: str, name: str, message: str = "") -> int | None:
    """The line that carries ``loc("<name>")``; among several, the one with the op the
    diagnostic ``message`` names (``'transform.structured.lower_unpack' op ...``)."""
    needle = f'loc("{name}")'
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    op = _OP_IN_MESSAGE.search(message)
    if op:
        text_lines = text.splitlines()
        named = [i for i in lines if f" {op.group(1)} " in text_lines[i - 1]]
        if named:
            return named[0]
    return lines[0] if lines else None


def verify(text: str, what: str) -> Any:
    """Parses and verifies ``text``; raises RenderError naming the field of the bad line."""
    try:
        return mlir.parse(text)
    except mlir.ParseFailure as failure:
        first = failure.diagnostics[0]
        line = first.line
        name = first.name
        if line is not None:
            name = field_at_line(text, line)
        elif name is not None:
            line = line_of_field(text, name, first.message)
        messages = "\n".join(
            f"  error: {d.message}" + "".join(f"\n    note: {n}" for n in d.notes)
            for d in failure.diagnostics
        )
        where = f" (strategy field {name})" if name else ""
        listing = numbered(text, line) if line else numbered(text)
        raise RenderError(
            f"the rendered script for {what} does not verify{where}:\n{messages}\n{listing}",
            text,
            name,
            line,
        ) from None
