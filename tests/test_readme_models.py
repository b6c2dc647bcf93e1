"""The README's real-model and tuning sections run as written (see test_readme.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readme_blocks import SLOW, play, sections


@pytest.mark.compile
@pytest.mark.parametrize("heading", SLOW)
def test_readme_section_runs(heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert play(sections()[heading], tmp_path) >= 3
