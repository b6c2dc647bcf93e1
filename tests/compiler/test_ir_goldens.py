"""Goldens of strategy outputs: the IR after each phase, and dispatch summaries.

Regenerate with ``make goldens`` and read the diff before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import example_dirs, example_strategy
from tdsl import StrategySet, load

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack"
EXAMPLES = [(e.name, e) for e in example_dirs()]

pytestmark = pytest.mark.compile


def _pinned_cpu(path: Path) -> StrategySet:
    """The example's set with an explicit CPU (znver4) instead of 'host', so that IREE's own
    choices in the configured IR do not depend on the machine running the tests."""
    data = load(path).model_dump(mode="json")
    for target in data["targets"]:
        if target["kind"] == "llvm-cpu":
            target["cpu"] = "znver4"
    pinned: StrategySet = StrategySet.model_validate(data)
    return pinned


@pytest.mark.parametrize("phase", ["preprocessing", "dispatch-creation", "executable-configurations"])
def test_mmt4d_packing_ir_per_phase(golden, phase: str) -> None:
    text = golden.check_ir(
        PACK / "payload.mlir",
        _pinned_cpu(PACK / "strategy.py"),
        "cpu",
        phase,
        f"../goldens/ir/matmul_pack.cpu.{phase}.mlir",
    )
    golden.filecheck(text, "CHECK: linalg.pack\nCHECK: linalg.mmt4d\nCHECK: linalg.unpack")


def test_interpreter_mode_matches_the_packed_form(golden) -> None:
    text = golden.check_ir(
        PACK / "payload.mlir",
        PACK / "strategy.py",
        "cpu",
        "preprocessing",
        "../goldens/ir/matmul_pack.cpu.interpreter.mlir",
        mode="interpreter",
    )
    golden.filecheck(
        text,
        "CHECK: func.func @matmul\n"
        "CHECK: linalg.pack %arg0 inner_dims_pos = [0, 1] inner_tiles = [8, 1]\n"
        "CHECK: linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 1]\n"
        'CHECK: linalg.mmt4d {{.*}}tdsl.layout = "mmt4d_8x32x1"\n'
        "CHECK: linalg.unpack",
    )


@pytest.mark.parametrize(
    ("name", "example", "target"),
    [
        (n, e, t.name)
        for n, e in EXAMPLES
        for t in load(example_strategy(e)).targets
        if load(example_strategy(e)).rules_for(t.name)
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_dispatch_summaries(golden, name: str, example: Path, target: str) -> None:
    golden.check_dispatches(
        example / "payload.mlir", example_strategy(example), target, f"../goldens/dispatches/{name}.{target}.txt"
    )
