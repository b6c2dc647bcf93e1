"""Shared test setup: the tests directory is importable (cases.py); the evidence folders
of expected compile failures go to the test's tmp_path, not the system temp dir; Ctrl-C
raises KeyboardInterrupt whatever the run inherited; the longest test files run first."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


LONGEST_FIRST = (
    "tests/tune/",
    "tests/docs/",
    "tests/programs/test_parameters.py",
    "tests/strategies/test_quantized.py",
    "tests/compiler/test_payload_rewrites.py",
    "tests/strategies/test_cpu_strategies.py",
    "tests/strategies/test_cpu_fusion.py",
    "tests/package/",
)
"""The test files that take longest (``make test``'s ``--durations``; 40-95 s each on two
cores), started first: ``pytest-xdist`` hands whole files to its workers in collection
order, and one of these collected last (``tests/tune/`` sorts late) kept one worker busy
for minutes after the other had finished."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The items of :data:`LONGEST_FIRST` first, in that order; every file keeps its own order."""

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if path.startswith(prefix)), len(LONGEST_FIRST))

    items.sort(key=rank)


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
