"""Every Python snippet and every `tdsl` command of the README and the docs/ pages runs,
section by section, in order, in a scratch directory that holds a copy of the examples. The
slow sections (real models, tuning) are in test_readme_models.py, so a parallel run can
spread them."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import SLOW, all_sections, play, sections

FAST = [pair for pair in all_sections() if pair not in SLOW]


def test_the_docs_have_runnable_sections_and_every_one_is_played() -> None:
    found = all_sections()
    assert all(pair in found for pair in SLOW)
    assert ("README.md", "## Five-minute tutorial: a first strategy") in found
    assert {page for page, _ in found} >= {"README.md", "docs/commands.md", "docs/import.md", "docs/tuning.md"}
    assert sum(len(sections(page)[heading]) for page, heading in found) >= 15


@pytest.mark.compile
@pytest.mark.parametrize(("page", "heading"), FAST, ids=["::".join(pair) for pair in FAST])
def test_readme_section_runs(page: str, heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert play(sections(page)[heading], tmp_path, page) >= 1
    if heading.startswith("## Five-minute tutorial"):
        assert (tmp_path / "mm.vmfb").is_file()
