"""``tdsl.run``: compile with a strategy and without it, run both, compare.

``run(payload, strategies)`` compiles the payload for CPU with the strategies, and
again with IREE's default pipeline (the differential oracle), runs every public
function on the same deterministic inputs, and compares each result with the default
build, with numpy in float64 where the function is a plain matmul / batch matmul /
convolution, and with onnxruntime for an ``.onnx`` model (:mod:`tdsl.measure.numerics`).
``run(payload)`` (no strategies) builds IREE default only and compares it with numpy and
onnxruntime; a note says which references there were.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..compiler.compile import compile_default, compile_with_options, default_target
from ..compiler.options import DEFAULT_MEMORY_GB, DEFAULT_OPTIONS, DEFAULT_TIMEOUT_S, CompileOptions, flag_tuple
from ..compiler.progress import NO_PROGRESS, Progress
from ..errors import RunFailed
from ..programs.inputs import load_inputs, make_inputs
from ..programs.load import program_of
from ..programs.parameters import check_runnable
from ..programs.program import Program
from ..programs.reference import ReferenceFailed, onnxruntime_inexact, onnxruntime_reference
from ..programs.signatures import Signature, as_declared, signatures
from ..sets.loader import as_strategy_set
from ..sets.strategy_set import StrategySet
from ..targets import CpuTarget, Target
from .execute import invoke, numpy_reference
from .numerics import FunctionCheck, NumericsFailed, RunReport, check_inputs, compare_result


def run(
    payload: Path | str | Program,
    strategies: StrategySet | str | Path | None = None,
    target: Target | str = CpuTarget.default_name,
    *,
    inputs: Sequence[np.ndarray] | None = None,
    input_files: Sequence[Path | str] = (),
    seed: int = 0,
    input_ranges: Mapping[str, tuple[float, float]] = {},
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    check: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_gb: float = DEFAULT_MEMORY_GB,
    input_names: Sequence[str] | None = None,
    extra_flags: Sequence[str] = (),
    serial_loading: bool = True,
    progress: Progress = NO_PROGRESS,
) -> RunReport:
    """Compiles with and without ``strategies``, runs every function, compares results.

    ``payload`` is an ``.onnx`` model, a torch/ONNX-dialect or linalg ``.mlir`` file, or a
    loaded :class:`~tdsl.programs.program.Program` (``dims`` and ``weights_seed`` as in
    :func:`~tdsl.programs.load.load_program`). Seeded inputs respect integer semantics
    (token ids below the vocabulary, masks 0/1; ``input_ranges`` overrides); ``inputs``
    (arrays) or ``input_files`` (one ``.npz`` or one ``.npy`` per argument), for a payload
    with one function, replace them and are checked against its signature before anything
    compiles (``input_names``, e.g. their files, name them in the error). References: IREE's
    default build, numpy in float64 for plain matmul / batch matmul / convolution functions,
    and onnxruntime for an ``.onnx`` model. ``strategies=None`` builds IREE's default
    pipeline for ``target`` only and compares it with numpy and onnxruntime (a note names
    them, or says there was none).
    With ``check`` a mismatch raises :class:`NumericsFailed` (the report is attached).
    ``extra_flags`` go to both builds; ``serial_loading`` and ``progress`` as in
    :func:`tdsl.compile`.
    """
    options = CompileOptions(
        timeout_s=timeout_s, memory_gb=memory_gb, extra_flags=flag_tuple(extra_flags), serial_loading=serial_loading
    )
    return run_with_options(
        payload,
        strategies,
        target,
        options=options,
        inputs=inputs,
        input_files=input_files,
        seed=seed,
        input_ranges=input_ranges,
        dims=dims,
        weights_seed=weights_seed,
        check=check,
        input_names=input_names,
        progress=progress,
    )


def run_with_options(
    payload: Path | str | Program,
    strategies: StrategySet | str | Path | None,
    target: Target | str = CpuTarget.default_name,
    *,
    options: CompileOptions = DEFAULT_OPTIONS,
    inputs: Sequence[np.ndarray] | None = None,
    input_files: Sequence[Path | str] = (),
    seed: int = 0,
    input_ranges: Mapping[str, tuple[float, float]] = {},
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    check: bool = True,
    input_names: Sequence[str] | None = None,
    progress: Progress = NO_PROGRESS,
) -> RunReport:
    """:func:`run` with its ``iree-compile`` options as one value."""
    strategy_set: StrategySet | None = None
    if strategies is None:
        target_model = default_target(target)
    else:
        strategy_set, target_model = as_strategy_set(strategies).for_target(target)
    target = target_model.name
    if not target_model.runs_on_host:
        raise RunFailed(f"tdsl run executes on CPU only; target {target!r} is {target_model.backend}")
    program = program_of(payload, dims, weights_seed)
    check_runnable(program)
    functions = signatures(program)
    if not functions:
        raise RunFailed(f"{program.source}: no public func.func to run")
    given: list[np.ndarray] | None = list(inputs) if inputs is not None else None
    if (given is not None or input_files) and len(functions) != 1:
        raise RunFailed(f"{program.source}: --inputs needs a payload with one function, found {len(functions)}")
    if input_files:
        given = load_inputs(input_files, functions[0])
    elif given is not None:
        check_inputs(functions[0], given, input_names)
    text = program.text()
    with tempfile.TemporaryDirectory(prefix="tdsl-run-") as tmp:
        built = Path(tmp) / ("strategy.vmfb" if strategy_set is not None else "default.vmfb")
        default = Path(tmp) / "default.vmfb" if strategy_set is not None else None
        progress.expect("compile", 1)
        report = compile_with_options(
            program.mlir_path, strategy_set, target_model, built, options=options, progress=progress
        )
        if report.result.output is None:
            raise RunFailed("compilation produced no module")
        if default is not None:
            with progress.step("compile", "IREE default"):
                flags = [*target_model.baseline().compile_flags(), *options.extra_flags]
                compile_default(program.mlir_path, flags, default, options)
        checks = []
        notes = list(program.notes)
        progress.expect("run", len(functions))
        for sig in functions:
            progress.begin("run", f"@{sig.function}")
            args = given if given is not None else make_inputs(sig, seed, input_ranges)
            outs = as_declared(invoke(built, sig.function, args, parameters=program.parameters), sig)
            refs = _references(program, text, sig, args, default, len(functions) == 1, notes)
            comparisons = [
                compare_result(out, ref_outs[i], sig.results[i], name, i)
                for name, ref_outs in refs.items()
                for i, out in enumerate(outs)
            ]
            checks.append(FunctionCheck(sig.function, tuple(comparisons)))
            progress.advance("run")
    if strategy_set is None:
        notes.append(_compared_note(checks))
    # the module was a temporary file, gone now: the report names no path
    result = RunReport(replace(report, output=None), tuple(checks), tuple(notes))
    if check and not result.ok:
        raise NumericsFailed("results differ from the reference beyond tolerance:\n" + result.text(), result)
    return result


def _references(
    program: Program,
    text: str,
    sig: Signature,
    args: Sequence[np.ndarray],
    default: Path | None,
    onnx_comparable: bool,
    notes: list[str],
) -> dict[str, list[np.ndarray]]:
    """The reference results of ``sig`` on ``args``: IREE default's module (``default``),
    numpy where it computes the function, onnxruntime for an ``.onnx`` model of one
    function (or a note in ``notes`` saying why it is not compared)."""
    refs: dict[str, list[np.ndarray]] = {}
    if default is not None:
        refs["iree-default"] = as_declared(invoke(default, sig.function, args, parameters=program.parameters), sig)
    numpy_refs = numpy_reference(text, sig.function, args)
    if numpy_refs is not None:
        refs["numpy"] = numpy_refs
    if program.onnx_path is not None and onnx_comparable:
        inexact = onnxruntime_inexact(program.onnx_path)
        if inexact:
            notes.append(inexact)
        else:
            try:
                refs["onnxruntime"] = onnxruntime_reference(program.onnx_path, args)
            except ReferenceFailed as err:
                notes.append(f"onnxruntime is not compared: {err}")
    return refs


def _compared_note(checks: Sequence[FunctionCheck]) -> str:
    """What a run without strategies compared: IREE default's build with which references."""
    names = sorted({c.reference for f in checks for c in f.comparisons})
    if names:
        return f"no strategies: IREE default's build compared with {' and '.join(names)}"
    return (
        "no strategies and no reference: IREE default's build ran, nothing compared (numpy computes plain "
        "matmul / batch matmul / convolution functions, onnxruntime .onnx models; --strategies compares a "
        "strategy with IREE default)"
    )
