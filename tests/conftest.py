"""Shared test setup: the tests directory is importable (cases.py); the evidence folders
of expected compile failures go to the test's tmp_path, not the system temp dir."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _failure_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_FAILURE_DIR", str(tmp_path / "failures"))
