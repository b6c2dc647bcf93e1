"""``tdsl import`` of a hand-written lowering sequence (IREE's
tests/transform_dialect/cpu/matmul_codegen_default_spec.mlir, kept with its IREE 3.13 changes
as examples/specs/iree_matmul_codegen_default_spec.mlir):

* the sequence's first ``structured.match`` of the root op by name is the root, not a
  producer to fuse; it imports as a ``Codegen`` with one forall level, no fusion, no
  vectorization, no cleanup and no vector lowering (``vector_lowering=None``), as the
  original runs none of them;
* the compile test compares the lowered code of the dispatch (``executable-targets``,
  line by line) of the original and of the import's render, and that a different tile size
  changes it (the check can fail).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tdsl import render
from tdsl.importer import read_file
from tdsl.importer.check import compare
from tdsl.model.codegen import Codegen, TileUsingForall
from tdsl.model.matchers import OpNameMatch

ROOT = Path(__file__).resolve().parent.parent.parent
SPEC = ROOT / "examples" / "specs" / "iree_matmul_codegen_default_spec.mlir"
PAYLOAD = ROOT / "tests" / "payloads" / "import" / "mm_64x48x32_f32.mlir"


def test_the_sequence_imports_as_a_codegen_without_the_steps_it_does_not_run() -> None:
    imported = read_file(SPEC)
    assert imported.injection == "codegen_library" and imported.target == "cpu"
    (rule,) = imported.strategy_set.rules
    assert rule.match == OpNameMatch(names=("linalg.matmul",))
    strategy = rule.strategy
    assert isinstance(strategy, Codegen)
    assert strategy.root == "linalg.matmul"
    assert strategy.tiling == (TileUsingForall(tile_sizes=(2,), mapping=("block_x",)),)
    assert strategy.fusion == () and strategy.cleanup == () and not strategy.vectorize
    assert strategy.vector_lowering is None
    script = render(imported.strategy_set, "cpu").scripts[0].text
    assert "transform.apply_cse" not in script and "lower_contraction" not in script
    assert "#iree_codegen.no_pipeline" in script


@pytest.mark.compile
def test_the_lowered_dispatch_is_the_originals() -> None:
    imported = read_file(SPEC)
    comparison = compare(imported, PAYLOAD)
    assert comparison.same, "\n".join(comparison.differences())
    assert any("llvm.func" in entry.op for entry in comparison.original)  # the code, lowered
    (rule,) = imported.strategy_set.rules
    assert isinstance(rule.strategy, Codegen)
    retiled = rule.strategy.model_copy(update={"tiling": (TileUsingForall(tile_sizes=(4,), mapping=("block_x",)),)})
    changed = imported.strategy_set.model_copy(update={"rules": (rule.model_copy(update={"strategy": retiled}),)})
    other = compare(replace(imported, strategy_set=changed), PAYLOAD)
    assert not other.same and other.differences()
