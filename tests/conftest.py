"""Shared test setup: the tests directory is importable (cases.py); the evidence folders
of expected compile failures go to the test's tmp_path, not the system temp dir; Ctrl-C
raises KeyboardInterrupt whatever the run inherited."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _failure_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_FAILURE_DIR", str(tmp_path / "failures"))


@pytest.fixture(autouse=True)
def _ctrl_c_interrupts() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during each test, as in a terminal: the tests of
    Ctrl-C send it to this process, and a run started as a shell's background job inherits
    it ignored (Python then installs no handler, and those tests would wait forever)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
