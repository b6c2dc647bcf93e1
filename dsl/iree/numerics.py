"""Numerical check of a strategy: compile with it and without it, run both, compare.

``run(payload, strategies)`` compiles the payload for CPU with the strategies, and
again with IREE's default pipeline (the differential oracle), runs every public
function on the same deterministic inputs, and compares each result with the default
build and, where the function is a plain matmul / batch matmul / convolution, with
numpy in float64. A result that a quantizing op produces (an ONNX model's u8/i8 output of
QLinearMatMul, the float output of a DequantizeLinear) may differ by one quantization step
(:func:`tdsl.iree.frontend.output_steps`): two correct builds can round a value on a
rounding boundary differently; integer results are exact.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import bindings as mlir
from ..sets.loader import as_strategy_set
from .compile import CompileReport, compile
from .iree_compile import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, run_iree_compile
from .progress import NO_PROGRESS, Progress
from ..errors import ParseFailure, PayloadError, RunFailed
from .execute import Comparison, compare, invoke, numpy_reference
from .frontend import Arg, Program, Signature, as_declared, check_runnable, load_inputs, load_program, make_inputs, onnxruntime_inexact, onnxruntime_reference, signatures
from ..sets.strategy_set import StrategySet
from ..targets import CpuTarget, Target


class NumericsFailed(RunFailed):
    """Results differ from the reference beyond the element type's tolerance."""

    def __init__(self, message: str, report: "RunReport"):
        self.report = report
        super().__init__(message)


@dataclass(frozen=True)
class StepComparison(Comparison):
    """A comparison of a quantized result: ok when the max abs error is at most one
    quantization ``step`` (its ``tolerance`` is the step, absolute)."""

    step: float = 1.0

    @property
    def ok(self) -> bool:
        return self.max_abs <= self.step * (1 + 1e-6)


def compare_result(out: np.ndarray, ref: np.ndarray, result: Arg, reference: str, index: int) -> Comparison:
    """:func:`~tdsl.iree.execute.compare` under the element type's tolerance, or one
    quantization step (absolute) for a result with a ``step``."""
    found = compare(out, ref, result.element, reference, index)
    if result.step is None:
        return found
    return StepComparison(found.reference, index, found.max_abs, found.max_rel, result.step, result.step)


@dataclass(frozen=True)
class FunctionCheck:
    """Comparisons of one function's results against each reference."""

    function: str
    comparisons: tuple[Comparison, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)


@dataclass(frozen=True)
class RunReport:
    """The outcome of :func:`run`."""

    compile_report: CompileReport
    functions: tuple[FunctionCheck, ...]
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.functions)

    def to_json(self) -> dict[str, Any]:
        return {
            "compile": self.compile_report.to_json(),
            "ok": self.ok,
            "notes": list(self.notes),
            "functions": [
                {
                    "function": f.function,
                    "ok": f.ok,
                    "comparisons": [
                        {
                            "reference": c.reference,
                            "result": c.result_index,
                            "max_abs_error": c.max_abs,
                            "max_rel_error": c.max_rel,
                            "tolerance": c.tolerance,
                            "tolerance_kind": "absolute (one quantization step)" if isinstance(c, StepComparison) else "relative",
                            "ok": c.ok,
                        }
                        for c in f.comparisons
                    ],
                }
                for f in self.functions
            ],
        }

    def text(self) -> str:
        lines = [self.compile_report.text()] + [f"  note: {n}" for n in self.notes]
        for f in self.functions:
            for c in f.comparisons:
                verdict = "ok" if c.ok else "FAIL"
                tolerance = f"tolerance {c.tolerance:g} abs, one quantization step" if isinstance(c, StepComparison) else f"tolerance {c.tolerance:g}"
                lines.append(
                    f"  {f.function} result {c.result_index} vs {c.reference}: max abs {c.max_abs:.3g}, "
                    f"max rel {c.max_rel:.3g} ({tolerance}) {verdict}"
                )
        return "\n".join(lines)


def payload_signatures(payload: Path) -> tuple[str, list[mlir.FunctionSignature]]:
    """The payload's text and the signatures of its public functions; a payload that is
    missing, does not parse or has arguments tdsl cannot feed is a one-line error."""
    if not payload.is_file():
        raise PayloadError(f"payload {str(payload)!r} does not exist")
    try:
        text = payload.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise PayloadError(f"payload {str(payload)!r} cannot be read: {err}") from None
    try:
        functions = mlir.signatures(text)
    except ParseFailure as err:
        first = err.diagnostics[0]
        where = f"{payload}:{first.line}:{first.column}" if first.line else str(payload)
        raise RunFailed(f"{where}: the payload does not parse: {first.message}") from None
    except PayloadError as err:
        raise PayloadError(f"{payload}: {err}") from None
    return text, functions


def program_of(payload: Path | str | Program, dims: Mapping[str, int] = {}, weights_seed: int = 0, parameters: Sequence[str] = ()) -> Program:
    """``payload`` as a :class:`~tdsl.iree.frontend.Program`: an ``.onnx`` model is imported,
    an ``.mlir`` file read (torch/ONNX dialect or linalg); ``dims`` fix dynamic dimensions,
    ``parameters`` name the archives of its parameter globals (``SCOPE=FILE.irpa``).
    A linalg payload is checked as :func:`payload_signatures` does (one-line errors)."""
    if isinstance(payload, Program):
        return payload
    path = Path(payload)
    if path.suffix.lower() == ".mlir" and not dims:
        text = path.read_text() if path.is_file() else ""
        if "!torch." not in text:
            payload_signatures(path)
    elif not path.is_file():
        raise PayloadError(f"payload {str(path)!r} does not exist")
    return load_program(path, dims=dims, weights_seed=weights_seed, parameters=parameters)


def _spelled_arg(arg: Arg) -> str:
    shape = "x".join("?" if s is None else str(s) for s in arg.shape)
    return f"{shape}x{arg.element}" if shape else arg.element


def check_inputs(signature: Signature, inputs: Sequence[Any], names: Sequence[str] | None = None) -> None:
    """Refuses inputs whose count, shapes or dtypes differ from ``signature``'s arguments."""
    if len(inputs) != len(signature.inputs):
        raise RunFailed(
            f"--inputs: @{signature.function} expects {len(signature.inputs)} arguments "
            f"({', '.join(_spelled_arg(a) for a in signature.inputs) or 'none'}), "
            f"received {len(inputs)} arrays"
        )
    for i, (array, arg) in enumerate(zip(inputs, signature.inputs)):
        name = names[i] if names is not None and i < len(names) else f"input {i}"
        if not isinstance(array, np.ndarray):
            raise RunFailed(f"--inputs: {name}: expected a numpy array, received {type(array).__name__}")
        shape = tuple(int(s) for s in arg.shape if s is not None)
        if tuple(array.shape) != shape or array.dtype != arg.dtype:
            got = "x".join(str(d) for d in array.shape) + ("x" if array.shape else "") + str(array.dtype)
            want = "x".join(str(d) for d in shape) + ("x" if shape else "") + f"{arg.element} ({arg.dtype.name})"
            raise RunFailed(f"--inputs: {name}: argument {i} of @{signature.function} expects {want}, received {got}")


def compile_default(payload: Path, target_flags: Sequence[str], output: Path, timeout_s: float, memory_gb: float) -> None:
    """Compiles ``payload`` with IREE's default pipeline (no tdsl scripts)."""
    run_iree_compile(payload, list(target_flags), output, timeout_s=timeout_s, memory_gb=memory_gb)


def run(
    payload: Path | str | Program,
    strategies: StrategySet | str | Path,
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
    loaded :class:`~tdsl.iree.frontend.Program` (``dims`` and ``weights_seed`` as in
    :func:`~tdsl.iree.frontend.load_program`). Seeded inputs respect integer semantics
    (token ids below the vocabulary, masks 0/1; ``input_ranges`` overrides); ``inputs``
    (arrays) or ``input_files`` (one ``.npz`` or one ``.npy`` per argument), for a payload
    with one function, replace them and are checked against its signature before anything
    compiles (``input_names``, e.g. their files, name them in the error). References: IREE's
    default build, numpy in float64 for plain matmul / batch matmul / convolution functions,
    and onnxruntime for an ``.onnx`` model.
    With ``check`` a mismatch raises :class:`NumericsFailed` (the report is attached).
    ``extra_flags`` go to both builds; ``serial_loading`` and ``progress`` as in
    :func:`tdsl.compile`.
    """
    strategy_set = as_strategy_set(strategies)
    strategy_set, target_model = strategy_set.for_target(target)
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
        tuned = Path(tmp) / "strategy.vmfb"
        default = Path(tmp) / "default.vmfb"
        progress.expect("compile", 1)
        report = compile(
            program.mlir_path, strategy_set, target, tuned, timeout_s=timeout_s, memory_gb=memory_gb,
            extra_flags=extra_flags, serial_loading=serial_loading, progress=progress,
        )
        if report.result.output is None:
            raise RunFailed("compilation produced no module")
        with progress.step("compile", "IREE default"):
            flags = [*target_model.baseline().compile_flags(), *extra_flags]
            compile_default(program.mlir_path, flags, default, timeout_s, memory_gb)
        checks = []
        notes = list(program.notes)
        progress.expect("run", len(functions))
        for sig in functions:
            progress.begin("run", f"@{sig.function}")
            args = given if given is not None else make_inputs(sig, seed, input_ranges)
            outs = as_declared(invoke(tuned, sig.function, args, parameters=program.parameters), sig)
            refs = {"iree-default": as_declared(invoke(default, sig.function, args, parameters=program.parameters), sig)}
            numpy_refs = numpy_reference(text, sig.function, args)
            if numpy_refs is not None:
                refs["numpy"] = numpy_refs
            if program.onnx_path is not None and len(functions) == 1:
                inexact = onnxruntime_inexact(program.onnx_path)
                if inexact:
                    notes.append(inexact)
                else:
                    refs["onnxruntime"] = onnxruntime_reference(program.onnx_path, args)
            comparisons = [
                compare_result(out, ref_outs[i], sig.results[i], name, i)
                for name, ref_outs in refs.items()
                for i, out in enumerate(outs)
            ]
            checks.append(FunctionCheck(sig.function, tuple(comparisons)))
            progress.advance("run")
    result = RunReport(report, tuple(checks), tuple(notes))
    if check and not result.ok:
        raise NumericsFailed("results differ from the reference beyond tolerance:\n" + result.text(), result)
    return result
