"""Running ``iree-compile`` safely: timeout, memory cap, diagnostics, atomic output.

Requires the pinned ``iree-base-compiler``. Any ``error:`` diagnostic is a failure even
when ``iree-compile`` exits 0 (a codegen library that fails to load is otherwise
ignored silently and default codegen runs). Diagnostics that carry a tdsl location
(``loc("<strategy>.<field>")``) are reported with that strategy field.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from .. import bindings as mlir
from ..errors import TdslError
from ..files import staged
from .diagnostics import CompilerDiagnostic, parse_diagnostics

DEFAULT_TIMEOUT_S = 300.0
DEFAULT_MEMORY_GB = 16.0

@dataclass(frozen=True)
class CompileResult:
    """What one ``iree-compile`` run did."""

    command: tuple[str, ...]
    returncode: int
    stderr: str
    diagnostics: tuple[CompilerDiagnostic, ...]
    wall_s: float
    output: Path | None

    @property
    def errors(self) -> list[CompilerDiagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.errors


class CompileFailed(TdslError):
    """``iree-compile`` failed, printed an error, ran out of time or memory."""

    def __init__(self, message: str, result: CompileResult | None = None):
        self.result = result
        super().__init__(message)


def _limits(memory_gb: float) -> Callable[[], None]:
    def apply() -> None:
        cap = int(memory_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


def run_iree_compile(
    payload: Path | str,
    flags: Sequence[str],
    output: Path | str | None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_gb: float = DEFAULT_MEMORY_GB,
    check: bool = True,
) -> CompileResult:
    """Runs ``iree-compile payload flags -o output`` under a timeout and an address-space cap.

    The output appears only if compilation succeeds (written to a temporary file and
    renamed). With ``check`` a failure raises :class:`CompileFailed` naming the
    strategy fields of the diagnostics.
    """
    payload = Path(payload)
    if not payload.is_file():
        raise CompileFailed(f"payload {str(payload)!r} does not exist")
    if output is None:
        result = _invoke(payload, flags, os.devnull, timeout_s, memory_gb)
    else:
        try:
            with staged(output) as tmp:
                result = _invoke(payload, flags, str(tmp), timeout_s, memory_gb)
                if not result.ok:
                    raise _Discard()
            result = replace(result, output=Path(output))
        except _Discard:
            pass
    if check and not result.ok:
        raise CompileFailed(describe_failure(result, payload, memory_gb), result)
    return result


class _Discard(Exception):
    """Leaves a staged output unwritten (the compile failed)."""


def _invoke(payload: Path, flags: Sequence[str], output: str, timeout_s: float, memory_gb: float) -> CompileResult:
    command = (
        mlir.tool_path("iree-compile"),
        str(payload),
        *flags,
        "--mlir-print-op-on-diagnostic=false",
        "-o",
        output,
    )
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            preexec_fn=_limits(memory_gb),
        )
    except subprocess.TimeoutExpired as err:
        stderr = err.stderr.decode() if isinstance(err.stderr, bytes) else (err.stderr or "")
        result = CompileResult(command, -9, stderr, tuple(parse_diagnostics(stderr)), timeout_s, None)
        raise CompileFailed(
            f"iree-compile ran past the {timeout_s:g} s timeout on {payload} and was killed "
            "(some transform pattern sets never converge; raise --timeout only if it is slow, not stuck)",
            result,
        ) from None
    diagnostics = tuple(parse_diagnostics(proc.stderr))
    return CompileResult(command, proc.returncode, proc.stderr, diagnostics, time.perf_counter() - start, None)


def describe_failure(result: CompileResult, payload: Path, memory_gb: float) -> str:
    """A readable account of a failed compile: errors first, with strategy fields."""
    if result.returncode in (-9, 137) or "std::bad_alloc" in result.stderr or (
        result.returncode < 0 and not result.errors
    ):
        head = (
            f"iree-compile was killed (exit {result.returncode}) on {payload}; it may have hit "
            f"the {memory_gb:g} GiB memory cap"
        )
    elif result.returncode == 0:
        head = f"iree-compile exited 0 but printed errors on {payload} (treated as a failure)"
    else:
        head = f"iree-compile failed (exit {result.returncode}) on {payload}"
    lines = [head]
    shown = [d for d in result.diagnostics if d.severity in ("error", "note")][:12]
    lines += [f"  {d.describe()}" for d in shown]
    if not shown:
        tail = result.stderr.strip().splitlines()[-5:]
        lines += [f"  {t}" for t in tail]
    return "\n".join(lines)


__all__ = [
    "CompileFailed",
    "CompileResult",
    "CompilerDiagnostic",
    "parse_diagnostics",
    "run_iree_compile",
]

