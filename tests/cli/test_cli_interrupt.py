"""Ctrl-C at any moment of a ``tdsl`` process is one line, ``tdsl: interrupted``, and exit
130: while tdsl is importing, while a command parses its arguments, while iree-compile
runs. Each case starts the console script's module (``tdsl_entry``) in its own process
group and sends SIGINT to the whole group, as a terminal's Ctrl-C does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
MLP = ROOT / "examples" / "mlp"
# The child says "ready" on stderr once the console script's module is imported (before it,
# Python's own startup: site, .pth hooks), then runs the console script.
CHILD = "import sys, tdsl_entry; sys.stderr.write('ready\\n'); sys.stderr.flush(); sys.exit(tdsl_entry.main())"
COMPILE = ["compile", str(MLP / "payload.mlir"), "--strategies", str(MLP / "strategy.py"), "--target", "cpu", "-q"]


def _start(args: list[str], tmp_path: Path) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args, "-o", str(tmp_path / "out.vmfb")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "TDSL_FAILURE_DIR": str(tmp_path)},
    )
    assert child.stderr is not None and child.stderr.readline() == b"ready\n"
    return child


def _interrupted(child: subprocess.Popen[bytes], tmp_path: Path) -> None:
    os.killpg(child.pid, signal.SIGINT)
    _out, err = child.communicate(timeout=120)
    assert (child.returncode, err.decode()) == (130, "tdsl: interrupted\n")
    assert not (tmp_path / "out.vmfb").exists()


@pytest.mark.parametrize("delay", [0.0, 0.2, 0.6, 1.2])
def test_ctrl_c_while_importing_is_one_line_and_130(tmp_path: Path, delay: float) -> None:
    """Importing tdsl takes about a second or more: these delays land in the import (a late
    one in the command; both must end the same way)."""
    child = _start(COMPILE, tmp_path)
    time.sleep(delay)
    _interrupted(child, tmp_path)


def _children(pid: int) -> list[str]:
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += (task / "children").read_text().split()
    return found


@pytest.mark.compile
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
def test_ctrl_c_during_a_compile_is_one_line_and_130(tmp_path: Path) -> None:
    child = _start(COMPILE, tmp_path)
    deadline = time.monotonic() + 120
    while not _children(child.pid):
        assert child.poll() is None and time.monotonic() < deadline, "iree-compile never started"
        time.sleep(0.02)
    _interrupted(child, tmp_path)
