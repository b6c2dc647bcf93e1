"""Compiling a payload with a strategy set: render, verify, inject, compile, report.

``compile(payload, strategies, target)`` renders the set for the target into a private
directory, runs ``iree-compile`` with the injection flags under a timeout and memory
cap, and reads the configured dispatches back to prove which rules applied. The module
(``output``) is written only if everything succeeded.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .iree_compile import (
    DEFAULT_MEMORY_GB,
    DEFAULT_TIMEOUT_S,
    CompileFailed,
    CompileResult,
    run_iree_compile,
)
from ..errors import OutputError, StrategyNotApplied
from ..files import atomic_write, staged
from ..spec.loader import as_strategy_set
from .. import bindings as mlir
from ..spec.kinds import Injection, Phase
from ..render import LAYOUT_RULE_MARKER, PREPROCESSING, injections, render
from .phases import compile_to_phase, phase_of
from .hsaco import KernelResources, resources
from .dispatches import DispatchSummary, summarize_dump
from ..spec.strategy_set import StrategySet
from ..targets import AmdGpuTarget

@dataclass(frozen=True)
class RuleOutcome:
    """Where one rule applied: the dispatches whose ops carry its marker."""

    index: int
    strategy: str
    kind: str
    injection: Injection
    dispatches: tuple[str, ...]
    functions: tuple[str, ...] = ()

    @property
    def applied(self) -> bool:
        return bool(self.dispatches or self.functions)

    def where(self) -> str:
        """Human summary of where the rule applied."""
        if not self.applied:
            return "NOTHING (warning)"
        parts = []
        if self.functions:
            parts.append("graph level in " + ", ".join(f"@{f}" for f in self.functions))
        if self.dispatches:
            parts.append("dispatches " + ", ".join(self.dispatches))
        elif self.functions:
            parts.append("its marker is gone by dispatch formation (IREE rewrote the op)")
        return "; ".join(parts)


@dataclass(frozen=True)
class CompileReport:
    """The outcome of :func:`compile`."""

    payload: Path
    target: str
    output: Path | None
    flags: tuple[str, ...]
    result: CompileResult
    dispatches: tuple[DispatchSummary, ...]
    rules: tuple[RuleOutcome, ...]
    dump_dir: Path | None = None
    ir_dump: Path | None = None
    kernels: tuple[KernelResources, ...] = ()

    @property
    def unmatched(self) -> list[RuleOutcome]:
        return [r for r in self.rules if not r.applied]

    def warnings(self) -> list[str]:
        return [
            f"rule {r.index} ({r.strategy}, {r.kind}) matched nothing in {self.payload.name}"
            for r in self.unmatched
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "payload": str(self.payload),
            "target": self.target,
            "output": str(self.output) if self.output else None,
            "compile_seconds": round(self.result.wall_s, 3),
            "flags": list(self.flags),
            "dispatches": [
                {
                    "name": d.name,
                    "compute_ops": list(d.compute_ops),
                    "pipeline": d.pipeline,
                    "codegen_spec": d.codegen_spec,
                    "layout": list(d.layout_strategies),
                    "applied": list(d.applied_strategies),
                    "lowering_configs": list(d.lowering_configs),
                }
                for d in self.dispatches
            ],
            "rules": [
                {
                    "index": r.index,
                    "strategy": r.strategy,
                    "kind": r.kind,
                    "injection": r.injection,
                    "dispatches": list(r.dispatches),
                    "functions": list(r.functions),
                    "applied": r.applied,
                }
                for r in self.rules
            ],
            "warnings": self.warnings(),
            "ir_dump": str(self.ir_dump) if self.ir_dump else None,
            "kernels": [k.to_json() for k in self.kernels],
        }

    def text(self) -> str:
        lines = [f"compiled {self.payload} for {self.target} in {self.result.wall_s:.2f} s"]
        if self.output:
            lines.append(f"  module: {self.output}")
        lines.append(f"  {len(self.dispatches)} dispatches:")
        lines += [f"    {d.line()}" for d in self.dispatches]
        lines.append("  rules:")
        for r in self.rules:
            lines.append(f"    [{r.index}] {r.strategy} ({r.kind} -> {r.injection}): {r.where()}")
        if self.kernels:
            lines.append("  kernel resources:")
            lines += [f"    {k.line()}" for k in self.kernels]
        return "\n".join(lines)



def compile(  # noqa: A001 - the verb users expect: tdsl.compile(...)
    payload: Path | str,
    strategies: StrategySet | str | Path,
    target: str,
    output: Path | str | None = None,
    *,
    dump_ir: str | Phase | None = None,
    dump_ir_to: Path | str | None = None,
    strict: bool = False,
    extra_flags: Sequence[str] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_gb: float = DEFAULT_MEMORY_GB,
    keep_dump: Path | str | None = None,
) -> CompileReport:
    """Renders ``strategies`` for ``target``, compiles ``payload`` and reports what applied.

    ``dump_ir``: also write the IR at that phase (one of :data:`PHASES`) to
    ``dump_ir_to`` (default ``<output or payload stem>.<phase>.mlir``).
    ``strict``: a rule that matched nothing is an error (no output is written).
    ``keep_dump``: keep IREE's executable dump (configured IR, ISA, HSACO) in that dir.
    """
    payload = Path(payload)
    if not payload.is_file():
        raise CompileFailed(f"payload {str(payload)!r} does not exist")
    phase = phase_of(dump_ir)
    out = Path(output) if output is not None else None
    if out is not None:
        check_output_file(out, "output")
    if phase is not None:
        check_output_file(Path(dump_ir_to) if dump_ir_to else (out or payload).with_suffix(f".{phase}.mlir"), "--dump-ir")
    strategy_set = as_strategy_set(strategies)
    rendered = render(strategy_set, target)
    with tempfile.TemporaryDirectory(prefix="tdsl-") as tmp:
        scripts = Path(tmp) / "scripts"
        rendered.write(scripts)
        dump = Path(keep_dump) if keep_dump is not None else Path(tmp) / "dump"
        flags = [
            *rendered.flags(scripts),
            *extra_flags,
            f"--iree-hal-dump-executable-files-to={dump}",
            f"--iree-hal-dump-executable-binaries-to={dump}",
        ]
        with ExitStack() as stack:
            module = stack.enter_context(staged(out)) if out is not None else None
            result = run_iree_compile(payload, flags, module, timeout_s=timeout_s, memory_gb=memory_gb)
            dispatches = tuple(summarize_dump(dump))
            kernels = tuple(resources(dump, rendered.target.facts)) if isinstance(rendered.target, AmdGpuTarget) else ()
            layout_hits: dict[int, list[str]] = {}
            if rendered.script(PREPROCESSING) is not None:
                ir = compile_to_phase(payload, rendered, scripts, Phase.PREPROCESSING, extra_flags, timeout_s, memory_gb)
                layout_hits = layout_rules_by_function(ir)
            outcomes = tuple(_outcomes(strategy_set, target, dispatches, layout_hits))
            if strict and any(not o.applied for o in outcomes):
                missing = [f"rule {o.index} ({o.strategy})" for o in outcomes if not o.applied]
                raise StrategyNotApplied(
                    f"--strict: {', '.join(missing)} matched nothing in {payload} for target {target}"
                )
            ir_dump = None
            if phase is not None:
                ir_dump = Path(dump_ir_to) if dump_ir_to else (out or payload).with_suffix(f".{phase}.mlir")
                ir_text = compile_to_phase(payload, rendered, scripts, phase, extra_flags, timeout_s, memory_gb)
                atomic_write(ir_dump, ir_text)
    flags_shown = tuple(rendered.flags(scripts))
    return CompileReport(
        payload=payload,
        target=target,
        output=out,
        flags=flags_shown,
        result=result,
        dispatches=dispatches,
        rules=outcomes,
        dump_dir=Path(keep_dump) if keep_dump is not None else None,
        ir_dump=ir_dump,
        kernels=kernels,
    )


def check_output_file(path: Path, what: str) -> None:
    """Refuses, before any work, an output file path that cannot be written: an existing
    directory, a path under a regular file, a missing or read-only directory."""
    if path.is_dir():
        raise OutputError(f"{what} {str(path)!r}: expected a file path, received an existing directory")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{what} {str(path)!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {str(path)!r}: the directory {str(parent)!r} is not writable")


def layout_rules_by_function(preprocessed_ir: str) -> dict[int, list[str]]:
    """{rule index: functions} from the ``tdsl.layout_rule`` markers after preprocessing."""
    hits: dict[int, list[str]] = {}
    for op in mlir.walk(preprocessed_ir):
        index = op.values.get(LAYOUT_RULE_MARKER)
        if isinstance(index, int) and op.function:
            if op.function not in hits.setdefault(index, []):
                hits[index].append(op.function)
    return hits


def _outcomes(
    strategy_set: StrategySet,
    target: str,
    dispatches: Sequence[DispatchSummary],
    layout_hits: dict[int, list[str]],
) -> list[RuleOutcome]:
    rules = strategy_set.rules_for(target)
    outcomes = []
    for (index, rule), injection in zip(rules, injections([r for _, r in rules])):
        hit = tuple(d.name for d in dispatches if index in d.rules)
        outcomes.append(
            RuleOutcome(
                index,
                rule.strategy.name,
                rule.strategy.kind,
                injection,
                hit,
                tuple(layout_hits.get(index, ())),
            )
        )
    return outcomes
