"""Running ``iree-compile`` safely: timeout, memory cap, diagnostics, atomic output.

Requires the pinned ``iree-base-compiler``. Any ``error:`` diagnostic is a failure even
when ``iree-compile`` exits 0 (a codegen library that fails to load is otherwise
ignored silently and default codegen runs). Diagnostics that carry a tdsl location
(``loc("<strategy>.<field>")``) are reported with that strategy field.

A failure is one line (:class:`CompileFailed`) that tells an ordinary error from a crash
(a signal, an LLVM stack dump: a compiler bug), a memory-cap kill and a timeout, and names
a directory that outlives tdsl (:func:`tdsl.files.failure_dir`) holding the compiler's
whole output, the command, and copies of the scripts and dumps it read and wrote.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from .. import bindings as mlir
from ..errors import TdslError
from ..files import atomic_write, failure_dir, staged
from ..programs.load import not_a_payload
from ..programs.precision import program_flags
from .diagnostics import CompilerDiagnostic, parse_diagnostics
from .options import DEFAULT_OPTIONS, CompileOptions

# stderr markers of a run that hit the address-space cap (RLIMIT_AS makes allocations fail).
_MEMORY_MARKERS = (
    "std::bad_alloc",
    "LLVM ERROR: out of memory",
    "Cannot allocate memory",
    "pthread_create failed",
    "failed to map segment from shared object",
)
# stderr markers of a crash: LLVM's signal handler prints a stack dump.
_CRASH_MARKERS = ("Stack dump:", "PLEASE submit a bug report", "Please report issues to")


@dataclass(frozen=True)
class CompileResult:
    """What one ``iree-compile`` run did."""

    command: tuple[str, ...]
    returncode: int
    stderr: str
    diagnostics: tuple[CompilerDiagnostic, ...]
    wall_s: float
    output: Path | None
    timed_out: bool = False
    program_flags: tuple[str, ...] = ()
    """The flags the program called for that tdsl put first (:func:`~tdsl.programs.precision.program_flags`)."""

    @property
    def errors(self) -> list[CompilerDiagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.errors and not self.timed_out


Locate = Callable[[Sequence[CompilerDiagnostic]], Sequence[CompilerDiagnostic]]
"""Maps the diagnostics of a failed run (see :func:`run_iree_compile`)."""


class CompileFailed(TdslError):
    """``iree-compile`` failed, printed an error, crashed, ran out of time or memory.

    ``evidence`` is the directory (it outlives tdsl) with the full output, the command and
    copies of the files it read; the message names it.
    """

    def __init__(self, message: str, result: CompileResult | None = None, evidence: Path | None = None):
        self.result = result
        self.evidence = evidence
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
    options: CompileOptions = DEFAULT_OPTIONS,
    *,
    check: bool = True,
    locate: Locate | None = None,
) -> CompileResult:
    """Runs ``iree-compile payload flags -o output`` under ``options``' timeout and
    address-space cap. ``flags`` are the whole command: the caller has placed
    ``options.extra_flags`` among them. The flags the program calls for
    (:func:`~tdsl.programs.precision.program_flags`: f64 kept) go first, unless ``flags``
    set their option; the result names them.

    The output appears only if compilation succeeds (written to a temporary file and
    renamed). With ``check`` a failure raises :class:`CompileFailed`: one line naming the
    strategy field of the first error and the directory that keeps the evidence.
    ``locate`` maps the diagnostics of a failed run before they are described, while the
    files the run wrote (an executable dump) still exist: :func:`tdsl.compiler.compile.compile`
    names the rule that configured the dispatch a codegen error is in
    (:func:`~tdsl.compiler.diagnostics.locate_in_dispatches`).
    """
    payload = Path(payload)
    problem = not_a_payload(payload)
    if problem is not None:
        raise CompileFailed(problem)
    added = program_flags(payload, flags)
    flags = [*added, *flags]
    if output is None:
        result = _invoke(payload, flags, os.devnull, options)
    else:
        try:
            with staged(output) as tmp:
                result = _invoke(payload, flags, str(tmp), options)
                if not result.ok:
                    raise _Discard()
            result = replace(result, output=Path(output))
        except _Discard:
            pass
    result = replace(result, program_flags=added)
    if locate is not None and not result.ok:
        result = replace(result, diagnostics=tuple(locate(result.diagnostics)))
    if check and not result.ok:
        try:
            evidence: Path | None = keep_evidence(result, payload, options)
        except OSError:
            evidence = None
        raise CompileFailed(describe_failure(result, payload, options, evidence), result, evidence)
    return result


class _Discard(Exception):
    """Leaves a staged output unwritten (the compile failed)."""


def _invoke(payload: Path, flags: Sequence[str], output: str, options: CompileOptions) -> CompileResult:
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
            errors="replace",
            timeout=options.timeout_s,
            preexec_fn=_limits(options.memory_gb),
        )
    except subprocess.TimeoutExpired as err:
        raw = err.stderr or b""
        stderr = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        return CompileResult(
            command, -signal.SIGKILL, stderr, tuple(parse_diagnostics(stderr)), options.timeout_s, None, True
        )
    diagnostics = tuple(parse_diagnostics(proc.stderr))
    return CompileResult(command, proc.returncode, proc.stderr, diagnostics, time.perf_counter() - start, None)


def failure_kind(result: CompileResult) -> str:
    """``"timeout"``, ``"memory"`` (the address-space cap), ``"crash"`` (a signal or a
    stack dump: a compiler bug), ``"errors"`` (exit 0 with error diagnostics) or ``"failed"``."""
    if result.timed_out:
        return "timeout"
    if any(m in result.stderr for m in _MEMORY_MARKERS) or result.returncode in (-signal.SIGKILL, 137):
        return "memory"
    if result.returncode < 0 or any(m in result.stderr for m in _CRASH_MARKERS):
        return "crash"
    if result.returncode == 0:
        return "errors"
    return "failed"


def _signal_name(returncode: int) -> str:
    if returncode >= 0:
        return f"exit {returncode}"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _crash_line(stderr: str) -> str:
    """The last line the compiler printed before its crash report, if any."""
    before = []
    for line in stderr.splitlines():
        if any(line.startswith(m) for m in _CRASH_MARKERS) or line.startswith("Stack dump"):
            break
        if line.strip():
            before.append(line.strip())
    return before[-1] if before else ""


_PASS_IN_STACK = re.compile(r"(?:^|[\s:(])(?P<name>[A-Za-z0-9_]+Pass)::runOnOperation")
_PASS_RUNNING = re.compile(r"Running pass '(?P<name>[^']+)'")


def _crashed_pass(stderr: str) -> str:
    """The pass whose code was on the stack when the compiler crashed, if the dump says."""
    if "Stack dump" not in stderr:
        return ""
    dump = stderr.split("Stack dump", 1)[1]
    found = _PASS_IN_STACK.search(dump) or _PASS_RUNNING.search(dump)
    return found.group("name") if found else ""


def describe_failure(
    result: CompileResult,
    payload: Path,
    options: CompileOptions = DEFAULT_OPTIONS,
    evidence: Path | None = None,
) -> str:
    """One line on a failed compile: what kind of failure, its first error (with the strategy
    field when the error carries one) and where the whole output was kept."""
    kind = failure_kind(result)
    code = _signal_name(result.returncode)
    if kind == "timeout":
        head = (
            f"iree-compile ran past the {options.timeout_s:g} s timeout on {payload} and was killed "
            "(some transform pattern sets never converge; raise --timeout only if it is slow, not stuck)"
        )
    elif kind == "memory" and result.returncode in (-signal.SIGKILL, 137):
        head = (
            f"iree-compile was killed (SIGKILL) on {payload}: out of memory (the system's, or the "
            f"{options.memory_gb:g} GiB address-space cap; raise --memory-gb or free memory)"
        )
    elif kind == "memory":
        head = (
            f"iree-compile ran out of memory ({code}) on {payload}: it hit the {options.memory_gb:g} GiB "
            "address-space cap (raise --memory-gb)"
        )
    elif kind == "crash":
        crashed_in = _crashed_pass(result.stderr)
        head = (
            f"iree-compile crashed ({code}{' in ' + crashed_in if crashed_in else ''}) on {payload}: "
            "a compiler bug (often set off by a strategy value it does not expect), not the memory cap"
        )
    elif kind == "errors":
        head = f"iree-compile exited 0 but printed errors on {payload} (treated as a failure)"
    else:
        head = f"iree-compile failed (exit {result.returncode}) on {payload}"
    errors = result.errors
    mapped = [d for d in errors if d.strategy_field]
    first = (mapped or errors)[:1]
    parts = [head]
    if first:
        more = len(errors) - 1
        parts.append(
            first[0].describe()
            + _first_note(result.diagnostics, first[0])
            + (f" (and {more} more error{'s' if more > 1 else ''})" if more else "")
        )
    elif kind == "crash" and _crash_line(result.stderr):
        parts.append(_crash_line(result.stderr))
    elif kind == "failed":
        tail = [t.strip() for t in result.stderr.strip().splitlines() if t.strip()]
        if tail:
            parts.append(tail[-1])
    text = ": ".join(parts)
    if evidence is not None:
        text += f"; full output in {evidence / LOG_NAME}"
        for original, copy in _copied_paths(evidence):
            text = text.replace(original, copy)
    return " ".join(text.split())


_NOTE_CHARS = 160


def _first_note(diagnostics: Sequence[CompilerDiagnostic], error: CompilerDiagnostic) -> str:
    """`` <first note>`` when ``error``'s message ends with a colon (``... were found:``) and a
    note follows it; else empty."""
    if not error.message.rstrip().endswith(":") or error not in diagnostics:
        return ""
    at = list(diagnostics).index(error)
    following = diagnostics[at + 1] if at + 1 < len(diagnostics) else None
    if following is None or following.severity != "note":
        return ""
    note = " ".join(following.message.split())
    return " " + (note if len(note) <= _NOTE_CHARS else note[: _NOTE_CHARS - 3] + "...")


LOG_NAME = "iree-compile.log"
_COPIES = "copies.txt"


def keep_evidence(result: CompileResult, payload: Path, options: CompileOptions) -> Path:
    """Writes the evidence of a failed run to a new :func:`failure_dir`: ``iree-compile.log``
    (the whole stderr), ``command.sh`` (the command, with the copies' paths, under the same
    memory cap) and copies of every file or directory a ``--flag=PATH`` names (rendered
    scripts and executable dumps live in temporary directories that vanish on return)."""
    where = failure_dir()
    atomic_write(where / LOG_NAME, result.stderr)
    copies: list[tuple[str, str]] = []
    copied: set[str] = set()
    used: set[str] = {LOG_NAME, _COPIES, "command.sh"}
    for flag in result.command[2:]:
        if not flag.startswith("--") or "=" not in flag:
            continue
        value = flag.split("=", 1)[1]
        source = Path(value)
        if not value or value in copied or not (source.is_file() or source.is_dir()):
            continue
        name = source.name
        n = 1
        while name in used:
            n += 1
            name = f"{source.stem}.{n}{source.suffix}"
        used.add(name)
        if source.is_dir():
            shutil.copytree(source, where / name, symlinks=True)
        else:
            shutil.copy2(source, where / name)
        copies.append((value, str(where / name)))
        copied.add(value)
    command = list(result.command)
    if len(command) >= 2 and command[-2] == "-o":
        command[-1] = str(where / "output.vmfb") if command[-1] != os.devnull else os.devnull
    rewritten = []
    for arg in command:
        for original, copy in copies:
            if arg.endswith("=" + original):
                arg = arg[: -len(original)] + copy
        rewritten.append(arg)
    rewritten[1] = str(payload.resolve())
    cap_kib = int(options.memory_gb * (1 << 20))
    atomic_write(where / "command.sh", f"#!/bin/sh\nulimit -v {cap_kib}\n{shlex.join(rewritten)}\n")
    atomic_write(where / _COPIES, "".join(f"{a}\t{b}\n" for a, b in copies))
    return where


def _copied_paths(evidence: Path) -> list[tuple[str, str]]:
    try:
        lines = (evidence / _COPIES).read_text().splitlines()
    except OSError:
        return []
    pairs = [tuple(line.split("\t", 1)) for line in lines if "\t" in line]
    return sorted(((a, b) for a, b in pairs), key=lambda p: -len(p[0]))


__all__ = [
    "CompileFailed",
    "CompileResult",
    "CompilerDiagnostic",
    "parse_diagnostics",
    "run_iree_compile",
]
