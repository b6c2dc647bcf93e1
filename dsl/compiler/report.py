"""What a compile reports: where each rule applied (:class:`RuleOutcome`) and the whole
build (:class:`CompileReport`: dispatches, launches, kernel resources, warnings), as text
or JSON, and two builds side by side per dispatch (:func:`side_by_side`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..model.kinds import Injection
from ..programs.precision import describe
from ..targets.knobs import ProgramKnob, knobs_line
from .dispatches import DispatchSummary, Launches, short_pipeline, spelled
from .hsaco import KernelResources
from .iree_compile import CompileResult

IREE_DEFAULT = "iree-default"
"""How reports name a build with IREE's default pipeline (no tdsl scripts)."""
UNMATCHED_SHOWN = 3
"""Up to this many rules that matched nothing are listed one by one; more are summed up in
one line (ready-made sets hold rules for shapes and types a payload lacks)."""
DEFAULT_CPU_PIPELINE = "Default"
"""llvm-cpu's fallback pipeline: no tiling and no vectorization (scalar loops)."""


@dataclass(frozen=True)
class RuleOutcome:
    """Where one rule applied: the dispatches whose ops carry its marker."""

    index: int
    strategy: str
    kind: str
    injection: Injection
    dispatches: tuple[str, ...]
    functions: tuple[str, ...] = ()
    raw: bool = False
    """The strategy is raw MLIR kept from an imported spec; a raw action marks no op, so
    where it applied is unknown rather than nowhere."""
    optional: bool = False
    """The rule is a ready-library rule (``Rule.optional``): matching nothing is expected."""

    @property
    def applied(self) -> bool:
        return bool(self.dispatches or self.functions)

    def where(self) -> str:
        """Human summary of where the rule applied."""
        if not self.applied and self.raw:
            return "raw MLIR (kept verbatim from an imported spec; it marks no op, so where it applied is unknown)"
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
    """The outcome of :func:`compile`. ``strategy_set`` is None for a build with IREE's
    default pipeline; ``baseline`` holds IREE's default build when it was asked for."""

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
    strategy_set: str | None = None
    baseline: "CompileReport | None" = None
    extra_flags: tuple[str, ...] = field(default=())
    shadowed: tuple[str, ...] = field(default=())
    launch_counts: Launches | None = None
    """Launches by dispatch function, as IREE's stream statistics gave them (None: unknown)."""
    knobs: tuple[ProgramKnob, ...] = ()
    """The program knobs in force (settings of the target that differ from IREE's defaults)."""
    notes: tuple[str, ...] = ()
    """What the build did that the user did not ask for (a ready knob dropped, and why)."""

    @property
    def launches(self) -> int | None:
        """Dispatch launches per call (one call of each public function); None when unknown."""
        return self.launch_counts.total if self.launch_counts is not None else None

    @property
    def launches_at_load(self) -> int:
        """Dispatch launches in the module's initializers (once, when it loads)."""
        return self.launch_counts.total_at_load if self.launch_counts is not None else 0

    def counts(self) -> str:
        """``14 executables, 101 launches per call`` (``, 2 at load`` when initializers launch
        some; only the executables when the launches are unknown)."""
        text = f"{len(self.dispatches)} executables"
        if self.launches is not None:
            text += f", {self.launches} launches per call"
        if self.launches_at_load:
            text += f", {self.launches_at_load} at load"
        return text

    @property
    def unmatched(self) -> list[RuleOutcome]:
        return [r for r in self.rules if not r.applied and not r.raw]

    @property
    def build(self) -> str:
        """``strategy`` or ``iree-default``: what this build is called in a report."""
        return "strategy" if self.strategy_set is not None else IREE_DEFAULT

    def warnings(self, verbose: bool = True) -> list[str]:
        """One warning per shadowed rule (``shadowed``: an earlier rule's matcher certainly
        takes every op it matches, see :attr:`tdsl.render.Rendered.shadowed`), then one per
        rule that matched nothing. With ``verbose=False``, the ready-library rules
        (``Rule.optional``) that matched nothing are summed up in one line, and so are the
        other rules when more than :data:`UNMATCHED_SHOWN` matched nothing."""
        lines = [f"{self.strategy_set}.{line}: it never fires on {self.target}" for line in self.shadowed]
        lines += self.unintended_pipelines()
        if verbose:
            return lines + [self._unmatched_line(r) for r in self.unmatched]
        own = self._own_unmatched()
        ready = [r for r in self.unmatched if r.optional]
        if len(own) > UNMATCHED_SHOWN:
            lines.append(
                f"{len(own)} of {len(self.rules)} rules of {self.strategy_set} matched nothing in "
                f"{self.payload.name} (rules {_ranges([r.index for r in own])}; -v lists them, "
                "--strict makes it an error)"
            )
        else:
            lines += [self._unmatched_line(r) for r in own]
        if ready:
            lines.append(
                f"{len(ready)} ready-library rules found no such op in {self.payload.name} "
                f"(rules {_ranges([r.index for r in ready])}; -v lists them; expected, never a --strict error)"
            )
        return lines

    def unintended_pipelines(self) -> list[str]:
        """One warning per dispatch where a graph-level rule's op ended on llvm-cpu's
        ``Default`` pipeline, which neither tiles nor vectorizes (e.g. a packed batch matmul
        that ``specialize`` turned into ``linalg.contract``: 10-30x slower). No tdsl layout
        strategy intends that pipeline; a codegen rule that names it does, and is not warned."""
        by_name = {d.name: d for d in self.dispatches}
        lines = []
        for r in self.rules:
            if r.injection != Injection.PREPROCESSING:
                continue
            for name in r.dispatches:
                d = by_name.get(name)
                if d is None or short_pipeline(d.pipeline) != DEFAULT_CPU_PIPELINE or d.applied_strategies:
                    continue
                lines.append(
                    f"rule {r.index} ({r.strategy}): its op in {name} ended as {' + '.join(d.compute_ops) or '?'} on "
                    f"IREE's {DEFAULT_CPU_PIPELINE} pipeline (not tiled or vectorized: expect it to be many times slower "
                    "than IREE's default; for a packed batch matmul leave specialize off, as mmt4d_layout(batch=True) does, "
                    "or leave the op to data tiling)"
                )
        return lines

    def _hidden_unmatched(self, verbose: bool) -> list[RuleOutcome]:
        """The rules that matched nothing and that a short listing leaves out: none when
        ``verbose``, else the ready-library ones, and the others too when more than
        :data:`UNMATCHED_SHOWN` of them matched nothing."""
        if verbose:
            return []
        many = len(self._own_unmatched()) > UNMATCHED_SHOWN
        return [r for r in self.unmatched if r.optional or many]

    def _own_unmatched(self) -> list[RuleOutcome]:
        """The user's rules (not ready-library ones) that matched nothing."""
        return [r for r in self.unmatched if not r.optional]

    def _unmatched_line(self, r: RuleOutcome) -> str:
        ready = " (ready-library rule)" if r.optional else ""
        return f"rule {r.index} ({r.strategy}, {r.kind}){ready} matched nothing in {self.payload.name}"

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "payload": str(self.payload),
            "target": self.target,
            "strategy_set": self.strategy_set,
            "output": str(self.output) if self.output else None,
            "compile_seconds": round(self.result.wall_s, 3),
            "flags": list(self.flags),
            "extra_flags": list(self.extra_flags),
            "program_flags": list(self.result.program_flags),
            "executables": len(self.dispatches),
            "launches": self.launches,
            "launches_at_load": self.launches_at_load,
            "dispatches": [
                {
                    "name": d.name,
                    "launches": d.launches,
                    "launches_at_load": d.launches_at_load,
                    "compute_ops": list(d.compute_ops),
                    "pipeline": d.pipeline,
                    "codegen_spec": d.codegen_spec,
                    "peeled": d.peeled,
                    "layout": list(d.layout_strategies),
                    "applied": list(d.applied_strategies),
                    "lowering_configs": [c.to_json() for c in d.lowering_configs],
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
                    "raw": r.raw,
                }
                for r in self.rules
            ],
            "program_knobs": [k.to_json() for k in self.knobs],
            "notes": list(self.notes),
            "warnings": self.warnings(),
            "shadowed": list(self.shadowed),
            "ir_dump": str(self.ir_dump) if self.ir_dump else None,
            "dump_dir": str(self.dump_dir) if self.dump_dir else None,
            "kernels": [k.to_json() for k in self.kernels],
        }
        if self.baseline is not None:
            data["baseline"] = self.baseline.to_json()
            data["side_by_side"] = [
                {"dispatch": name, "field": key, self.build: ours, IREE_DEFAULT: theirs}
                for name, rows in side_by_side(self, self.baseline)
                for key, ours, theirs in rows
            ]
        return data

    def text(self, report: bool | None = None, verbose: bool = True) -> str:
        """The report as text. ``report=True`` adds, per dispatch, its pipeline, lowering
        configs and (gfx942) kernel resources, next to IREE default's when ``baseline`` is
        there; ``None`` adds the gfx942 kernel resources only; ``verbose=False`` sums up
        more than :data:`UNMATCHED_SHOWN` rules that matched nothing in one line."""
        how = f" with {self.strategy_set}" if self.strategy_set else " with IREE's default pipeline (no strategies)"
        if self.strategy_set is not None and not self.rules:
            how += " (no rules for this target" + (
                "; program knobs below)" if self.knobs else ": IREE's default pipeline)"
            )
        if self.strategy_set is None and self.extra_flags:
            how = " with IREE's default pipeline and the extra flags (no tdsl strategies)"
        lines = [f"compiled {self.payload} for {self.target}{how} in {self.result.wall_s:.2f} s"]
        if self.baseline is not None:
            lines[0] += f" (IREE default: {self.baseline.result.wall_s:.2f} s)"
        program = (
            [knobs_line(self.knobs)]
            if self.strategy_set is not None and (self.knobs or not self.result.program_flags)
            else []
        )
        if self.result.program_flags:  # flags the program's element types call for (f64 kept)
            program.append(describe(self.result.program_flags))
        if program:
            lines.append(f"  program: {'; '.join(program)}")
        lines += [f"  note: {note}" for note in self.notes]
        if self.output:
            lines.append(f"  module: {self.output}")
        if self.dump_dir:
            lines.append(f"  executable dump: {self.dump_dir}")
        counts = self.counts()
        if self.baseline is not None:
            counts += f" ({IREE_DEFAULT}: {self.baseline.counts()})"
        lines.append(f"  {counts}:")
        lines += [f"    {d.line()}" for d in self.dispatches]
        if self.rules:
            lines.append("  rules:")
            hidden = self._hidden_unmatched(verbose)
            for r in self.rules:
                if r not in hidden:
                    lines.append(f"    [{r.index}] {r.strategy} ({r.kind} -> {r.injection}): {r.where()}")
            if hidden:
                lines.append(
                    f"    {len(hidden)} more rules matched nothing: {_ranges([r.index for r in hidden])} (-v lists them)"
                )
        if report:
            lines += self._detail()
        elif report is None and self.kernels:
            lines.append("  kernel resources:")
            lines += [f"    {k.line()}" for k in self.kernels]
        return "\n".join(lines)

    def _detail(self) -> list[str]:
        if self.baseline is None:
            lines = ["  report per dispatch:"]
            for name, rows in side_by_side(self, None):
                lines.append(f"    {name}")
                width = max((len(k) for k, _, _ in rows), default=0)
                lines += [f"      {key:<{width}}  {ours}" for key, ours, _ in rows]
            return lines
        lines = [f"  report per dispatch, {self.build} | {IREE_DEFAULT} ('*' differs):"]
        for name, rows in side_by_side(self, self.baseline):
            lines.append(f"    {name}")
            width = max((len(k) for k, _, _ in rows), default=0)
            left = max([len(self.build)] + [len(o) for _, o, _ in rows])
            lines.append(f"      {'':<{width}}  {self.build:<{left}}  {IREE_DEFAULT}")
            both = not name.endswith(" only)")
            for key, ours, theirs in rows:
                mark = "*" if both and ours != theirs else " "
                lines.append(f"    {mark} {key:<{width}}  {ours:<{left}}  {theirs}")
        return lines


def _ranges(indices: Sequence[int]) -> str:
    """``[4, 5, 6, 9]`` -> ``"4-6, 9"``."""
    parts: list[str] = []
    start = prev = None
    for i in sorted(indices):
        if start is None:
            start = prev = i
        elif prev is not None and i == prev + 1:
            prev = i
        else:
            parts.append(f"{start}-{prev}" if start != prev else f"{start}")
            start = prev = i
    if start is not None:
        parts.append(f"{start}-{prev}" if start != prev else f"{start}")
    return ", ".join(parts)


def dispatch_fields(dispatch: DispatchSummary, kernel: KernelResources | None) -> list[tuple[str, str]]:
    """(field, value) rows of one dispatch: its launches per call (when known), pipeline,
    each op's lowering config entries (``linalg.matmul distribution``) and, on gfx942, its
    kernel resources."""
    rows = [("launches per call", dispatch.launch_text())] if dispatch.launches is not None else []
    rows.append(("pipeline", short_pipeline(dispatch.pipeline)))
    seen: dict[str, int] = {}
    for config in dispatch.lowering_configs:
        seen[config.op] = seen.get(config.op, 0) + 1
        op = config.op if seen[config.op] == 1 else f"{config.op}#{seen[config.op]}"
        entries = config.ordered()
        if not entries:
            rows.append((f"{op} lowering_config", config.text))
        rows += [(f"{op} {key}", spelled(value)) for key, value in entries]
    if kernel is not None:
        mfma = "?" if kernel.mfma_instructions is None else str(kernel.mfma_instructions)
        rows += [
            ("LDS bytes", str(kernel.lds_bytes)),
            ("VGPR", str(kernel.vgprs)),
            ("AGPR", str(kernel.agprs)),
            ("SGPR", str(kernel.sgprs)),
            ("spills (VGPR+SGPR)", f"{kernel.vgpr_spills}+{kernel.sgpr_spills}"),
            ("scratch bytes", str(kernel.scratch_bytes)),
            ("MFMA instructions", mfma),
            ("waves/SIMD", str(kernel.waves_per_simd)),
        ]
    return rows


def _natural(name: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


_DISPATCH = re.compile(r"^(?P<function>.*)_dispatch_\d+(?:_(?P<what>.*))?$")


def _pairing_key(name: str) -> tuple[str, str]:
    """(payload function, what the dispatch computes): ``mlp_dispatch_4_matmul_128x128x512_f32``
    -> (``mlp``, ``matmul_128x128x512_f32``). A strategy that adds dispatches (packs) shifts
    the numbers of the later ones, not what they compute."""
    found = _DISPATCH.match(name)
    return (found.group("function"), found.group("what") or name) if found else (name, name)


def side_by_side(ours: CompileReport, theirs: CompileReport | None) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Per dispatch: (field, ours, theirs) rows, ``-`` where a build lacks the field. Two
    builds' dispatches pair up when they compute the same thing in the same payload function
    (IREE names a dispatch after its root op and shapes); one without a partner is shown
    alone, named ``(strategy only)`` / ``(iree-default only)``. ``theirs=None``: one build."""

    def fields(report: CompileReport) -> list[tuple[str, list[tuple[str, str]]]]:
        kernels = {k.name: k for k in report.kernels}
        return [(d.name, dispatch_fields(d, kernels.get(d.name))) for d in report.dispatches]

    mine = fields(ours)
    if theirs is None:
        return [(name, [(k, v, "") for k, v in rows]) for name, rows in mine]
    other = fields(theirs)
    unpaired = list(other)
    pairs: list[tuple[tuple[str, list[tuple[str, str]]] | None, tuple[str, list[tuple[str, str]]] | None]] = []
    for entry in mine:
        partner = next((o for o in unpaired if _pairing_key(o[0]) == _pairing_key(entry[0])), None)
        if partner is not None:
            unpaired.remove(partner)
        pairs.append((entry, partner))
    pairs += [(None, o) for o in unpaired]
    pairs.sort(key=lambda pair: _natural(_pairing_key((pair[0] or pair[1] or ("", []))[0])[0]))
    table: list[tuple[str, list[tuple[str, str, str]]]] = []
    for left, right in pairs:
        a, b = dict(left[1]) if left else {}, dict(right[1]) if right else {}
        keys = [k for k, _ in (left[1] if left else [])] + [k for k, _ in (right[1] if right else []) if k not in a]
        if left and right:
            title = left[0] if left[0] == right[0] else f"{left[0]} ({IREE_DEFAULT}: {right[0]})"
        elif left:
            title = f"{left[0]} ({ours.build} only)"
        else:
            assert right is not None
            title = f"{right[0]} ({IREE_DEFAULT} only)"
        table.append((title, [(k, a.get(k, "-"), b.get(k, "-")) for k in keys]))
    return table
