"""The real-model and tuning sections of docs/ run as written (see test_readme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import SLOW, play, sections


@pytest.mark.compile
@pytest.mark.parametrize(("page", "heading"), SLOW, ids=["::".join(pair) for pair in SLOW])
def test_readme_section_runs(page: str, heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert play(sections(page)[heading], tmp_path, page) >= 3
