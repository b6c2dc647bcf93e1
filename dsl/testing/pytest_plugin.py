"""pytest plugin shipped with tdsl: whole-file goldens with one update command.

Registered through the ``pytest11`` entry point, so any test suite with tdsl installed
gets the ``--update-goldens`` option and the ``golden`` fixture::

    def test_my_strategy(golden):
        rendered = tdsl.render(my_set, "cpu")
        golden.check(rendered.script("preprocessing").text, "goldens/my_set.cpu.mlir")
        # IR after a phase, normalized (locations and host target attributes elided):
        golden.check_ir("payload.mlir", my_set, "cpu", "dispatch-creation", "goldens/my.ir.mlir")
        # how many dispatches and their root ops (fusion strategies are judged by it):
        golden.check_dispatches("payload.mlir", my_set, "cpu", "goldens/my.dispatches.txt")
        # properties that must hold whatever the formatting (the filecheck package):
        golden.filecheck(text, "CHECK: linalg.mmt4d")

On mismatch the test fails with a unified diff and the command that rewrites the
goldens (``pytest --update-goldens``); with that option the file is (re)written and the
test passes. Paths are relative to the test file's directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .golden import UPDATE_OPTION, Golden


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        UPDATE_OPTION,
        action="store_true",
        default=False,
        help="rewrite golden files from the current output instead of comparing",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """A :class:`Golden` rooted at the requesting test file's directory."""
    return Golden(
        Path(str(request.path)).parent,
        bool(request.config.getoption(UPDATE_OPTION)),
        request.node.nodeid,
    )
