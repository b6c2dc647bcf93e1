"""pytest plugin shipped with tdsl: whole-file goldens with one update command.

Registered through the ``pytest11`` entry point, so any test suite with tdsl installed
gets the ``--update-goldens`` option and the ``golden`` fixture::

    def test_my_strategy(golden):
        rendered = tdsl.render(my_set, "cpu")
        golden.check(rendered.script("preprocessing").text, "goldens/my_set.cpu.mlir")

On mismatch the test fails with a unified diff and the command that rewrites the
goldens (``pytest --update-goldens``); with that option the file is (re)written and the
test passes. Paths are relative to the test file's directory.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from .files import atomic_write

UPDATE_OPTION = "--update-goldens"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        UPDATE_OPTION,
        action="store_true",
        default=False,
        help="rewrite golden files from the current output instead of comparing",
    )


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


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """A :class:`Golden` rooted at the requesting test file's directory."""
    return Golden(
        Path(str(request.path)).parent,
        bool(request.config.getoption(UPDATE_OPTION)),
        request.node.nodeid,
    )
