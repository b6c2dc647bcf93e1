"""Compiling a payload with a strategy set: render, verify, inject, compile, report.

``compile(payload, strategies, target)`` renders the set for the target into a private
directory, runs ``iree-compile`` with the injection flags under a timeout and memory
cap, and reads the configured dispatches back to prove which rules applied, and how often
each is launched per call (IREE's stream statistics, written by the same run: see
:mod:`tdsl.compiler.dispatches`). The module (``output``) is written only if everything succeeded. ``strategies=None`` compiles with
IREE's default pipeline for a target given by name (``cpu`` or ``gfx942``): the report a
user reads before writing a rule. ``baseline=True`` also compiles with IREE's default
pipeline and reports both builds side by side, per dispatch.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from .. import bindings as mlir
from ..errors import StrategyNotApplied, TargetError
from ..files import atomic_write, staged
from ..model.all_of import leaves
from ..model.kinds import Phase
from ..model.matchers import OpNameMatch
from ..programs.load import load_program, not_a_payload
from ..render import LAYOUT_RULE_MARKER, PREPROCESSING, Rendered, injections, render
from ..sets.loader import as_strategy_set
from ..sets.strategy_set import StrategySet
from ..targets import Target, named, target_names
from ..targets.knobs import program_knobs
from .diagnostics import (
    CompilerDiagnostic,
    locate_by_op_name,
    locate_in_dispatches,
    locate_tile_levels,
    rule_names,
)
from .dispatches import STATISTICS_FILE, DispatchSummary, launches_in, statistics_flags, summarize_dump
from .flags import rendered_flags, with_threading
from .hsaco import KernelResources, resources
from .iree_compile import CompileFailed, run_iree_compile
from .knob_fallback import build_with_fallback
from .options import DEFAULT_MEMORY_GB, DEFAULT_OPTIONS, DEFAULT_TIMEOUT_S, CompileOptions, flag_tuple
from .outputs import check_dump_dir, check_output_file, keep_dump_dir
from .payload_rewrites import rewritten_payload
from .phases import compile_to_phase, phase_of
from .progress import NO_PROGRESS, Progress
from .report import IREE_DEFAULT, CompileReport, RuleOutcome


def default_target(target: Target | str) -> Target:
    """``target``, or the default target called ``target`` (:func:`tdsl.targets.named`):
    what a compile without strategies builds for."""
    found = named(target) if isinstance(target, str) else target
    if found is None:
        raise TargetError(
            f"--target {target!r}: without strategies, expected one of {sorted(target_names())} (IREE's default "
            "pipeline for that target)"
        )
    return found


def kernel_resources(dump: Path, target: Target) -> tuple[KernelResources, ...]:
    """The GPU kernels of an executable dump with their resources, for a target with GPU
    facts (none for other targets)."""
    facts = target.gpu_facts
    return tuple(resources(dump, facts)) if facts is not None else ()


def compile(  # noqa: A001 - the verb users expect: tdsl.compile(...)
    payload: Path | str,
    strategies: StrategySet | str | Path | None,
    target: Target | str,
    output: Path | str | None = None,
    *,
    dump_ir: str | Phase | None = None,
    dump_ir_to: Path | str | None = None,
    strict: bool = False,
    extra_flags: Sequence[str] = (),
    serial_loading: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_gb: float = DEFAULT_MEMORY_GB,
    keep_dump: Path | str | None = None,
    baseline: bool = False,
    progress: Progress = NO_PROGRESS,
) -> CompileReport:
    """Renders ``strategies`` for ``target``, compiles ``payload`` and reports what applied.

    ``target``: a target name of the set, or a target model (:meth:`~tdsl.StrategySet.for_target`).
    ``strategies=None``: IREE's default pipeline for ``target`` (a model, or the name of a
    default target: :func:`tdsl.targets.named`).
    ``dump_ir``: also write the IR at that phase (one of :data:`PHASES`) to
    ``dump_ir_to`` (default ``<output or payload stem>.<phase>.mlir``).
    ``strict``: a rule that matched nothing is an error (no output is written).
    ``extra_flags``: more ``iree-compile`` flags, after tdsl's (the last occurrence wins).
    ``serial_loading=False``: leave out :data:`tdsl.render.SERIAL_LOADING` (see there why
    it is on).
    ``keep_dump``: keep IREE's executable dump (configured IR, ISA, HSACO) in that
    directory (a new or empty one, or one an earlier ``keep_dump`` wrote: it is replaced),
    the rendered scripts in its ``scripts`` subdirectory (the report's ``flags`` point
    there; without ``keep_dump`` they name the scripts relative to a directory that is
    gone) and, with ``baseline``, IREE default's dump in its ``iree-default`` subdirectory.
    ``baseline``: also compile with IREE's default pipeline; the report holds it.
    ``progress``: receives one ``compile`` step per ``iree-compile`` run.
    ``timeout_s`` / ``memory_gb``: each ``iree-compile`` run's timeout and address-space cap
    (:class:`~tdsl.compiler.options.CompileOptions`).
    """
    options = CompileOptions(
        timeout_s=timeout_s, memory_gb=memory_gb, extra_flags=flag_tuple(extra_flags), serial_loading=serial_loading
    )
    return compile_with_options(
        payload,
        strategies,
        target,
        output,
        options=options,
        dump_ir=dump_ir,
        dump_ir_to=dump_ir_to,
        strict=strict,
        keep_dump=keep_dump,
        baseline=baseline,
        progress=progress,
    )


def compile_with_options(
    payload: Path | str,
    strategies: StrategySet | str | Path | None,
    target: Target | str,
    output: Path | str | None = None,
    *,
    options: CompileOptions = DEFAULT_OPTIONS,
    dump_ir: str | Phase | None = None,
    dump_ir_to: Path | str | None = None,
    strict: bool = False,
    keep_dump: Path | str | None = None,
    baseline: bool = False,
    progress: Progress = NO_PROGRESS,
) -> CompileReport:
    """:func:`compile` with its ``iree-compile`` options as one value. An ``.onnx`` model is
    imported first (:func:`~tdsl.programs.load.load_program`, cached) and its MLIR compiled."""
    payload = Path(payload)
    problem = not_a_payload(payload)
    if problem is not None:
        raise CompileFailed(problem)
    if payload.suffix == ".onnx":
        payload = load_program(payload).mlir_path
    outputs = _checked_outputs(payload, output, dump_ir, dump_ir_to, keep_dump)
    if strategies is None:
        return _compile_iree_default(payload, default_target(target), outputs, options, progress)
    return _compile_strategies(payload, strategies, target, outputs, options, strict, baseline, progress)


@dataclass(frozen=True)
class _Outputs:
    """Where a compile writes, checked before any work: the module, the IR after a phase
    (``phase`` and ``ir_dump`` together or neither), the kept executable dump."""

    module: Path | None
    phase: Phase | None
    ir_dump: Path | None
    kept: Path | None


def _checked_outputs(
    payload: Path,
    output: Path | str | None,
    dump_ir: str | Phase | None,
    dump_ir_to: Path | str | None,
    keep_dump: Path | str | None,
) -> _Outputs:
    """The output paths of a compile; one that cannot be written is refused here."""
    phase = phase_of(dump_ir)
    out = Path(output) if output is not None else None
    if out is not None:
        check_output_file(out, "output")
    ir_dump = None
    if phase is not None:
        ir_dump = Path(dump_ir_to) if dump_ir_to else (out or payload).with_suffix(f".{phase}.mlir")
        check_output_file(ir_dump, "--dump-ir")
    kept = Path(keep_dump) if keep_dump is not None else None
    if kept is not None:
        check_dump_dir(kept)
    return _Outputs(out, phase, ir_dump, kept)


def _compile_iree_default(
    payload: Path, target_model: Target, outputs: _Outputs, options: CompileOptions, progress: Progress
) -> CompileReport:
    """The build without strategies: IREE's default pipeline for ``target_model``, and the
    IR after ``outputs.phase`` when asked for."""
    with tempfile.TemporaryDirectory(prefix="tdsl-") as tmp:
        progress.expect("compile", 1 + (outputs.phase is not None))
        default = _default_build(
            payload, target_model.name, target_model, outputs.module, options, Path(tmp) / "dump", progress
        )
        if outputs.phase is not None and outputs.ir_dump is not None:
            with progress.step("compile", f"IR after {outputs.phase}"):
                with tempfile.TemporaryDirectory(prefix="tdsl-ir-") as ir_tmp:
                    ir_out = Path(ir_tmp) / f"{outputs.phase}.mlir"
                    run_iree_compile(
                        payload,
                        [*default.flags, *options.extra_flags, f"--compile-to={outputs.phase}"],
                        ir_out,
                        options,
                    )
                    atomic_write(outputs.ir_dump, ir_out.read_text())
        if outputs.kept is not None:
            keep_dump_dir(Path(tmp) / "dump", outputs.kept)
    return replace(default, output=outputs.module, ir_dump=outputs.ir_dump, dump_dir=outputs.kept)


def _compile_strategies(
    payload: Path,
    strategies: StrategySet | str | Path,
    target: Target | str,
    outputs: _Outputs,
    options: CompileOptions,
    strict: bool,
    baseline: bool,
    progress: Progress,
) -> CompileReport:
    """The strategy build (:func:`_build_set`); where it fails with a ready set's program
    knobs, the build without them, with a note (:mod:`tdsl.compiler.knob_fallback`)."""
    strategy_set, target_model = as_strategy_set(strategies).for_target(target)
    build = partial(
        _build_set, payload, outputs=outputs, options=options, strict=strict, baseline=baseline, progress=progress
    )
    report, notes = build_with_fallback(strategy_set, target_model, build)
    return replace(report, notes=(*report.notes, *notes))


def _build_set(
    payload: Path,
    strategy_set: StrategySet,
    target_model: Target,
    *,
    outputs: _Outputs,
    options: CompileOptions,
    strict: bool,
    baseline: bool,
    progress: Progress,
) -> CompileReport:
    """Renders ``strategy_set`` for ``target_model``, compiles with the scripts injected and
    reads back where each rule applied; then the IR dump, IREE default's build
    (``baseline``) and the kept dump."""
    name = target_model.name
    rendered = render(strategy_set, name)
    has_preprocessing = rendered.script(PREPROCESSING) is not None
    progress.expect("compile", 1 + has_preprocessing + (outputs.phase is not None) + baseline)
    with tempfile.TemporaryDirectory(prefix="tdsl-") as tmp:
        scripts = Path(tmp) / "scripts"
        rendered.write(scripts)
        dump = Path(tmp) / "dump"
        dump.mkdir()
        original = payload
        rewritten = rewritten_payload(payload, target_model, options, Path(tmp))
        payload = rewritten.payload
        with ExitStack() as stack:
            module = stack.enter_context(staged(outputs.module)) if outputs.module is not None else None
            locate = _locator(strategy_set, name, dump)

            with progress.step("compile", "strategy build"):
                result = run_iree_compile(
                    payload, _strategy_flags(rendered, scripts, dump, options), module, options, locate=locate
                )
            dispatches = tuple(summarize_dump(dump))
            launch_counts, kernels = launches_in(dump), kernel_resources(dump, rendered.target)
            layout_hits: dict[int, list[str]] = {}
            if has_preprocessing:
                with progress.step("compile", "IR after preprocessing (where layout rules applied)"):
                    layout_hits = layout_rules_by_function(
                        compile_to_phase(payload, rendered, scripts, Phase.PREPROCESSING, options)
                    )
            outcomes = tuple(_outcomes(strategy_set, name, dispatches, layout_hits))
            if strict:
                _check_strict(outcomes, payload, name)
            if outputs.phase is not None and outputs.ir_dump is not None:
                with progress.step("compile", f"IR after {outputs.phase}"):
                    ir_text = compile_to_phase(payload, rendered, scripts, outputs.phase, options)
                atomic_write(outputs.ir_dump, ir_text)
            base = (
                _default_build(original, name, target_model, None, options, dump / IREE_DEFAULT, progress)
                if baseline
                else None
            )
            if outputs.kept is not None:
                shutil.copytree(scripts, dump / "scripts")
                keep_dump_dir(dump, outputs.kept)
    kept = outputs.kept
    return CompileReport(
        payload=original,
        target=name,
        output=outputs.module,
        flags=_shown_flags(rendered, scripts, kept, options),
        result=result,
        dispatches=dispatches,
        rules=outcomes,
        dump_dir=kept,
        ir_dump=outputs.ir_dump,
        kernels=kernels,
        strategy_set=strategy_set.name,
        baseline=base if base is None or kept is None else replace(base, dump_dir=kept / IREE_DEFAULT),
        extra_flags=options.extra_flags,
        shadowed=rendered.shadowed,
        launch_counts=launch_counts,
        knobs=program_knobs(target_model),
        notes=rewritten.notes,
    )


def _locator(
    strategy_set: StrategySet, target: str, dump: Path
) -> Callable[[Sequence[CompilerDiagnostic]], tuple[CompilerDiagnostic, ...]]:
    """Maps a failed build's diagnostics to the rules of ``strategy_set`` for ``target``:
    the rules that configured the dispatch an error is in, the tile level and loop IREE
    refused, the rule whose matcher names the op an error is on."""
    indexed = strategy_set.rules_for(target)
    names = rule_names(strategy_set.name, [(i, r.strategy.name, r.strategy.kind) for i, r in indexed])
    strategies = {i: r.strategy for i, r in indexed}
    op_names = {
        i: tuple(n for leaf in leaves(r.match) if isinstance(leaf, OpNameMatch) for n in leaf.names) for i, r in indexed
    }

    def locate(diagnostics: Sequence[CompilerDiagnostic]) -> tuple[CompilerDiagnostic, ...]:
        found = locate_tile_levels(locate_in_dispatches(diagnostics, dump, names), names, strategies)
        return locate_by_op_name(found, names, op_names)

    return locate


def _strategy_flags(rendered: Rendered, scripts: Path, dump: Path, options: CompileOptions) -> list[str]:
    """The strategy build's command: the injection flags, the extra flags, then the
    executable dump and IREE's stream statistics."""
    return [
        *with_threading(rendered.flags(scripts), options.serial_loading),
        *options.extra_flags,
        f"--iree-hal-dump-executable-files-to={dump}",
        f"--iree-hal-dump-executable-binaries-to={dump}",
        *statistics_flags(dump / STATISTICS_FILE),
    ]


def _check_strict(outcomes: Sequence[RuleOutcome], payload: Path, target: str) -> None:
    """``--strict``: a rule of the user's (not ``optional``) that matched nothing fails."""
    if any(not o.applied and not o.optional for o in outcomes):
        missing = [f"rule {o.index} ({o.strategy})" for o in outcomes if not o.applied and not o.optional]
        raise StrategyNotApplied(f"--strict: {', '.join(missing)} matched nothing in {payload} for target {target}")


def _shown_flags(rendered: Rendered, scripts: Path, kept: Path | None, options: CompileOptions) -> tuple[str, ...]:
    """The flags a report shows, with paths that exist after return: the kept scripts, else
    names relative to the scripts' directory (as `tdsl render --relative` writes them; that
    directory is gone)."""
    return tuple(
        rendered_flags(rendered, kept / "scripts", serial_loading=options.serial_loading)
        if kept is not None
        else rendered_flags(rendered, scripts, serial_loading=options.serial_loading, relative=True)
    )


def _default_build(
    payload: Path,
    target: str,
    target_model: Target,
    output: Path | None,
    options: CompileOptions,
    dump: Path,
    progress: Progress,
) -> CompileReport:
    """``payload`` compiled with IREE's default pipeline for ``target_model``, its dump in ``dump``."""
    flags = target_model.baseline_flags()
    dump.mkdir(parents=True, exist_ok=True)
    extra = options.extra_flags
    command = [
        *flags,
        *extra,
        f"--iree-hal-dump-executable-files-to={dump}",
        f"--iree-hal-dump-executable-binaries-to={dump}",
        *statistics_flags(dump / STATISTICS_FILE),
    ]
    with progress.step("compile", "IREE default"):
        result = run_iree_compile(payload, command, output, options)
    kernels = kernel_resources(dump, target_model)
    return CompileReport(
        payload=payload,
        target=target,
        output=output,
        flags=tuple(flags),
        result=result,
        dispatches=tuple(summarize_dump(dump)),
        rules=(),
        kernels=kernels,
        extra_flags=extra,
        launch_counts=launches_in(dump),
    )


def compile_default(
    payload: Path, target_flags: Sequence[str], output: Path, options: CompileOptions = DEFAULT_OPTIONS
) -> None:
    """Compiles ``payload`` with IREE's default pipeline (no tdsl scripts): ``target_flags``
    are the whole command (the caller places ``options.extra_flags``); ``options`` give the
    limits."""
    run_iree_compile(payload, list(target_flags), output, options)


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
                type(rule.strategy).raw,
                rule.optional,
            )
        )
    return outcomes
