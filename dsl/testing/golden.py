"""Whole-file goldens: compare text with a golden file, or rewrite it under ``--update-goldens``.

:class:`Golden` is what the ``golden`` fixture of :mod:`tdsl.testing.pytest_plugin` hands a
test. On mismatch the test fails with a unified diff and the command that rewrites the
goldens; paths are relative to the test file's directory.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ..compiler.compile import compile
from ..compiler.phases import ir_after
from ..files import atomic_write
from ..sets.strategy_set import StrategySet

UPDATE_OPTION = "--update-goldens"


class Golden:
    """Compares text with a golden file (or rewrites it under ``--update-goldens``)."""

    def __init__(self, base: Path, update: bool, nodeid: str):
        self.base = base
        self.update = update
        self.nodeid = nodeid

    def path(self, relative: str | Path) -> Path:
        return self.base / relative

    def check(self, actual: str, relative: str | Path) -> None:
        path = self.path(relative)
        if self.update:
            if not path.exists() or path.read_text() != actual:
                atomic_write(path, actual)
            return
        if not path.exists():
            pytest.fail(
                f"golden {path} does not exist; create it with:\n  pytest {self.nodeid.split('::')[0]} {UPDATE_OPTION}",
                pytrace=False,
            )
        expected = path.read_text()
        if expected != actual:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    actual.splitlines(keepends=True),
                    fromfile=f"{path} (golden)",
                    tofile="actual",
                )
            )
            pytest.fail(
                f"output differs from golden {path}:\n{diff}\n"
                f"If the change is intended, update the goldens with:\n"
                f"  pytest {self.nodeid.split('::')[0]} {UPDATE_OPTION}\n"
                "and read the diff before committing.",
                pytrace=False,
            )

    def check_ir(
        self,
        payload: str | Path,
        strategies: StrategySet | str | Path,
        target: str,
        phase: str,
        relative: str | Path,
        mode: str = "compile",
    ) -> str:
        """Golden of the normalized IR after ``phase`` (see :func:`tdsl.ir.ir_after`)."""
        text = ir_after(self._here(payload), strategies, target, phase, mode)
        self.check(text, relative)
        return text

    def check_dispatches(
        self, payload: str | Path, strategies: StrategySet | str | Path, target: str, relative: str | Path
    ) -> list[str]:
        """Golden of the dispatch summary: a line with the executables and launches per call,
        then one line per dispatch with its launches per call, compute ops, pipeline and the
        tdsl strategies applied to it. Fails, before comparing, when a launch names no
        dispatch of the dump (the per-dispatch counts would not add up to the total)."""
        report = compile(self._here(payload), strategies, target)
        counts = report.launch_counts
        unmapped = counts.unmapped(d.name for d in report.dispatches) if counts is not None else {"(no statistics)": 0}
        if unmapped:
            pytest.fail(f"launches of {payload} that name no dispatch of its dump: {unmapped}", pytrace=False)
        lines = [d.line() for d in report.dispatches]
        self.check(report.counts() + "\n" + "\n".join(lines) + "\n", relative)
        return lines

    def filecheck(self, text: str, checks: str, *flags: str) -> None:
        """Runs FileCheck (the ``filecheck`` package, a dependency of tdsl) with ``checks``
        over ``text``; ``flags`` go to it (``--check-prefix=MINE``, ...). A failure names
        the check line that failed and shows the input around the position FileCheck
        searched from, with line numbers."""
        if importlib.util.find_spec("filecheck") is None:
            pytest.fail("golden.filecheck needs the filecheck package: pip install filecheck", pytrace=False)
        with tempfile.TemporaryDirectory(prefix="tdsl-filecheck-") as tmp:
            check_file = Path(tmp) / "checks"
            check_file.write_text(checks if checks.endswith("\n") else checks + "\n")
            proc = subprocess.run(
                [sys.executable, "-m", "filecheck", *flags, str(check_file)],
                input=text,
                capture_output=True,
                text=True,
            )
        if proc.returncode != 0:
            pytest.fail(filecheck_failure(proc.stdout + proc.stderr, text, checks), pytrace=False)

    def _here(self, path: str | Path) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() or candidate.exists() else self.base / candidate


_CHECK_ERROR = re.compile(r"^\S*?:(?P<line>\d+): (?P<kind>error|note|warning): (?P<message>.*)$", re.M)
_POSITION = re.compile(r"<stdin>:(?P<line>\d+):(?P<column>\d+)")
CONTEXT_LINES = 3


def filecheck_failure(output: str, text: str, checks: str) -> str:
    """A FileCheck failure a person can act on: the check line that failed (its number and
    text), FileCheck's message, and the input around the position it searched from, with
    line numbers and a marker (FileCheck's own output names temporary files and prints
    one input line)."""
    check_lines = checks.splitlines()
    input_lines = text.splitlines()
    parts = ["FileCheck failed"]
    error = _CHECK_ERROR.search(output)
    if error is not None:
        number = int(error.group("line"))
        check = check_lines[number - 1].strip() if 0 < number <= len(check_lines) else "?"
        parts[0] += f" at check line {number}: {check}"
        parts.append(f"  {error.group('kind')}: {error.group('message')}")
    else:
        parts.append("  " + "\n  ".join(output.strip().splitlines()))
    position = _POSITION.search(output)
    if position is not None and input_lines:
        row = _input_row(int(position.group("line")), output[position.end() :], input_lines)
        lo, hi = max(0, row - CONTEXT_LINES), min(len(input_lines), row + CONTEXT_LINES + 1)
        parts.append(f"  input around line {row + 1} (where FileCheck searched from; {len(input_lines)} lines in all):")
        width = len(str(hi))
        for i in range(lo, hi):
            marker = ">" if i == row else " "
            parts.append(f"  {marker} {i + 1:>{width}} | {input_lines[i]}")
    return "\n".join(parts)


def _input_row(reported: int, after: str, lines: list[str]) -> int:
    """The 0-based input line FileCheck's position names (the filecheck package counts
    lines from 0; the line it prints next tells when that is off by one)."""
    shown = after.lstrip("\n").splitlines()[0] if after.strip() else None
    for candidate in (reported, reported - 1, reported + 1):
        if 0 <= candidate < len(lines) and shown is not None and lines[candidate] == shown:
            return candidate
    return min(max(reported, 0), len(lines) - 1)
