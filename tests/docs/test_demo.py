"""The README's demo command runs to completion: every example compiles with its strategies
for each of its targets with every rule applied, and every CPU run matches its references,
IREE's default build among them. (It is the end-to-end test of the examples:
tests/compiler/test_compile_e2e.py covers the test cases.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cases import example_dirs

ROOT = Path(__file__).resolve().parent.parent.parent
LIBRARY_EXAMPLES = {"cpu_auto"}
"""Examples that use a whole library set (rules for every element type and layout): their
payloads exercise a subset, and tests/strategies/test_cpu_strategies.py checks which rules apply."""


@pytest.mark.compile
def test_demo_succeeds() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.rstrip().endswith("all CPU numbers match")
    assert "-> FAIL" not in proc.stdout and "gfx942: rendered" in proc.stdout
    blocks = {block.split(":", 1)[0]: block for block in re.split(r"^== ", proc.stdout, flags=re.M)[1:]}
    assert sorted(blocks) == [e.name for e in example_dirs()], sorted(blocks)
    for name, block in blocks.items():
        counts = re.findall(r"^    (\d+) of (\d+) rules applied$", block, flags=re.M)
        targets = re.findall(r"^  (\w+): rendered ", block, flags=re.M)
        assert counts and len(counts) == len(targets), block
        assert all(int(applied) >= 1 for applied, _ in counts), block
        if name not in LIBRARY_EXAMPLES:
            assert all(applied == total for applied, total in counts), block
        if "cpu" in targets:
            assert re.search(r"^  cpu run \S+: vs iree-default .* -> ok$", block, flags=re.M), block
