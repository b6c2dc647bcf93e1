"""Numerical comparison of a strategy's build: the verdicts :func:`tdsl.measure.run.run` reports.

A result is compared with each reference under its element type's tolerance
(:func:`~tdsl.measure.execute.compare`). A result that a quantizing op produces (an ONNX
model's u8/i8 output of QLinearMatMul, the float output of a DequantizeLinear) may differ by
one quantization step (:func:`tdsl.programs.quantization.output_steps`): two correct builds
can round a value on a rounding boundary differently; integer results are exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, TypedDict

import numpy as np

from ..compiler.report import CompileReport
from ..errors import RunFailed
from ..programs.signatures import Arg, Signature
from .execute import Comparison, compare


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
        return self.max_abs <= self.step * (1 + 1e-6) and not self.mismatched


def compare_result(out: np.ndarray, ref: np.ndarray, result: Arg, reference: str, index: int) -> Comparison:
    """:func:`~tdsl.measure.execute.compare` under the element type's tolerance, or one
    quantization step (absolute) for a result with a ``step``."""
    found = compare(out, ref, result.element, reference, index)
    if result.step is None:
        return found
    return StepComparison(
        found.reference, index, found.max_abs, found.max_rel, result.step, found.mismatched, step=result.step
    )


@dataclass(frozen=True)
class FunctionCheck:
    """Comparisons of one function's results against each reference."""

    function: str
    comparisons: tuple[Comparison, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)


class ComparisonJson(TypedDict):
    """One comparison in :meth:`RunReport.to_json`."""

    reference: str
    result: int
    max_abs_error: float
    max_rel_error: float
    tolerance: float
    tolerance_kind: str
    mismatched: list[str]
    ok: bool


class FunctionCheckJson(TypedDict):
    """One function's comparisons in :meth:`RunReport.to_json`."""

    function: str
    ok: bool
    comparisons: list[ComparisonJson]


class RunReportJson(TypedDict):
    """:meth:`RunReport.to_json`: the compile report, whether every comparison passed, notes and functions."""

    compile: dict[str, object]
    ok: bool
    notes: list[str]
    functions: list[FunctionCheckJson]


@dataclass(frozen=True)
class RunReport:
    """The outcome of :func:`run`."""

    compile_report: CompileReport
    functions: tuple[FunctionCheck, ...]
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.functions)

    def to_json(self) -> RunReportJson:
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
                            "tolerance_kind": "absolute (one quantization step)"
                            if isinstance(c, StepComparison)
                            else "relative",
                            "mismatched": list(c.mismatched),
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
                tolerance = (
                    f"tolerance {c.tolerance:g} abs, one quantization step"
                    if isinstance(c, StepComparison)
                    else f"tolerance {c.tolerance:g}"
                )
                special = "".join(f"; {m}" for m in c.mismatched)
                lines.append(
                    f"  {f.function} result {c.result_index} vs {c.reference}: max abs {c.max_abs:.3g}, "
                    f"max rel {c.max_rel:.3g} ({tolerance}){special} {verdict}"
                )
        return "\n".join(lines)


def _spelled_arg(arg: Arg) -> str:
    shape = "x".join("?" if s is None else str(s) for s in arg.shape)
    return f"{shape}x{arg.element}" if shape else arg.element


def check_inputs(signature: Signature, inputs: Sequence[object], names: Sequence[str] | None = None) -> None:
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
