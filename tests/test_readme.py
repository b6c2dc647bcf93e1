"""Every Python snippet and every `tdsl` command of the README runs, section by section, in
order, in a scratch directory that holds a copy of the examples. The slow sections (real
models, tuning) are in test_readme_models.py, so a parallel run can spread them."""

from __future__ import annotations

from pathlib import Path

import pytest

from readme_blocks import SLOW, play, sections


def test_the_readme_has_runnable_sections_and_every_one_is_played() -> None:
    found = sections()
    assert len(found) >= 5 and all(h in found for h in SLOW)
    assert sum(len(blocks) for blocks in found.values()) >= 7


@pytest.mark.compile
@pytest.mark.parametrize("heading", [h for h in sections() if h not in SLOW])
def test_readme_section_runs(heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert play(sections()[heading], tmp_path) >= 1
    if heading.startswith("## Five-minute tutorial"):
        assert (tmp_path / "mm.vmfb").is_file()
