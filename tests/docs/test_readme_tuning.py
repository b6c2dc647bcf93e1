"""The tuning section of docs/ runs as written (see test_readme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import SLOW_TUNING, play, sections


@pytest.mark.compile
@pytest.mark.parametrize(("page", "heading"), SLOW_TUNING, ids=["::".join(pair) for pair in SLOW_TUNING])
def test_readme_section_runs(page: str, heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert play(sections(page)[heading], tmp_path, page) >= 3
