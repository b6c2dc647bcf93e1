"""Running ``iree-compile`` safely: timeout, memory cap, diagnostics, atomic output.

Requires the pinned ``iree-base-compiler``. Any ``error:`` diagnostic is a failure even
when ``iree-compile`` exits 0 (a codegen library that fails to load is otherwise
ignored silently and default codegen runs). Diagnostics that carry a tdsl location
(``loc("<strategy>.<field>")``) are reported with that strategy field.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from . import mlir
from .errors import TdslError

DEFAULT_TIMEOUT_S = 300.0
DEFAULT_MEMORY_GB = 16.0

_DIAG = re.compile(r"^(?P<where>.*?):\s(?P<severity>error|warning|remark|note): (?P<message>.*)$")
_NAME_IN_WHERE = re.compile(r'^"(?P<name>[^"]+)"$')
_NAME_IN_MESSAGE = re.compile(r'^loc\("(?P<name>[^"]+)"\):\s*(?P<rest>.*)$')
_FILE_LINE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)$")


@dataclass(frozen=True)
class CompilerDiagnostic:
    """One diagnostic printed by ``iree-compile``.

    ``strategy_field`` is the tdsl location (``mm_td.tiling[1]``) when the diagnostic
    points into a rendered script; ``file``/``line`` when it points into the payload.
    """

    severity: str
    message: str
    strategy_field: str | None = None
    file: str | None = None
    line: int | None = None

    def describe(self) -> str:
        where = f"strategy field {self.strategy_field}" if self.strategy_field else (
            f"{self.file}:{self.line}" if self.file else "iree-compile"
        )
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
    out = Path(output) if output is not None else None
    tmp_out: str | None = None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_out = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        os.close(fd)
    command = (
        mlir.tool_path("iree-compile"),
        str(payload),
        *flags,
        "--mlir-print-op-on-diagnostic=false",
        "-o",
        tmp_out if tmp_out is not None else os.devnull,
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
        if tmp_out is not None:
            _remove(tmp_out)
        stderr = err.stderr.decode() if isinstance(err.stderr, bytes) else (err.stderr or "")
        result = CompileResult(command, -9, stderr, tuple(parse_diagnostics(stderr)), timeout_s, None)
        raise CompileFailed(
            f"iree-compile ran past the {timeout_s:g} s timeout on {payload} and was killed "
            "(some transform pattern sets never converge; raise --timeout only if it is slow, not stuck)",
            result,
        ) from None
    except BaseException:
        if tmp_out is not None:
            _remove(tmp_out)
        raise
    wall = time.perf_counter() - start
    diagnostics = tuple(parse_diagnostics(proc.stderr))
    result = CompileResult(command, proc.returncode, proc.stderr, diagnostics, wall, None)
    if result.ok and tmp_out is not None and out is not None:
        os.replace(tmp_out, out)
        result = CompileResult(command, proc.returncode, proc.stderr, diagnostics, wall, out)
    elif tmp_out is not None:
        _remove(tmp_out)
    if check and not result.ok:
        raise CompileFailed(describe_failure(result, payload, memory_gb), result)
    return result


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


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


__all__ = [
    "CompileFailed",
    "CompileResult",
    "CompilerDiagnostic",
    "parse_diagnostics",
    "run_iree_compile",
]

