"""The real-model section of docs/ runs as written (see test_readme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import SLOW_MODELS, play, sections


@pytest.mark.compile
@pytest.mark.parametrize(("page", "heading"), SLOW_MODELS, ids=["::".join(pair) for pair in SLOW_MODELS])
def test_readme_section_runs(page: str, heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert play(sections(page)[heading], tmp_path, page) >= 3
