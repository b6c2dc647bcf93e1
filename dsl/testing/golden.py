"""Whole-file goldens: compare text with a golden file, or rewrite it under ``--update-goldens``.

:class:`Golden` is what the ``golden`` fixture of :mod:`tdsl.testing.pytest_plugin` hands a
test. On mismatch the test fails with a unified diff and the command that rewrites the
goldens; paths are relative to the test file's directory.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ..files import atomic_write
from ..iree.compile import compile
from ..iree.phases import ir_after
from ..spec.strategy_set import StrategySet

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
                f"golden {path} does not exist; create it with:\n"
                f"  pytest {self.nodeid.split('::')[0]} {UPDATE_OPTION}",
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
        """Golden of the dispatch summary: one line per dispatch with its compute ops,
        pipeline and the tdsl strategies applied to it."""
        report = compile(self._here(payload), strategies, target)
        lines = [d.line() for d in report.dispatches]
        self.check(f"{len(lines)} dispatches\n" + "\n".join(lines) + "\n", relative)
        return lines

    def filecheck(self, text: str, checks: str) -> None:
        """Runs the ``filecheck`` package's FileCheck with ``checks`` over ``text``."""
        with tempfile.TemporaryDirectory(prefix="tdsl-filecheck-") as tmp:
            check_file = Path(tmp) / "checks.txt"
            check_file.write_text(checks if checks.endswith("\n") else checks + "\n")
            tool = Path(sys.executable).parent / "filecheck"
            proc = subprocess.run(
                [str(tool) if tool.exists() else "filecheck", str(check_file)],
                input=text,
                capture_output=True,
                text=True,
            )
        if proc.returncode != 0:
            pytest.fail(f"FileCheck failed:\n{proc.stdout}{proc.stderr}", pytrace=False)

    def _here(self, path: str | Path) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() or candidate.exists() else self.base / candidate
