"""The README's demo command runs to completion: every example compiles with its strategies
for each of its targets, and every CPU run matches its references."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.compile
def test_demo_succeeds() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.rstrip().endswith("all CPU numbers match")
    assert "-> FAIL" not in proc.stdout and "gfx942: rendered" in proc.stdout
