"""CPU fusion strategies: BERT's head split fused into one dispatch, and packing programs
whose transpose feeds a pack and is also returned (they must compile and stay correct)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tdsl import ConsumerMatch, CpuTarget, DataLayout, StrategyError
from tdsl import run
from tdsl.iree.iree_compile import run_iree_compile
from tdsl import load
from tdsl.strategies.cpu import auto, head_split_fusion

ROOT = Path(__file__).resolve().parent.parent
HEADS = ROOT / "examples" / "bert_heads"
PAYLOADS = ROOT / "tests" / "payloads" / "cpu"

pytestmark = pytest.mark.compile


def _default_dispatch_count(payload: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "dc.mlir"
        run_iree_compile(payload, [*CpuTarget().compile_flags(), "--compile-to=dispatch-creation"], out)
        return out.read_text().count("flow.dispatch.workgroups")


def test_head_split_fuses_into_one_dispatch_with_unchanged_numerics() -> None:
    assert _default_dispatch_count(HEADS / "payload.mlir") == 2
    report = run(HEADS / "payload.mlir", load(HEADS / "strategy.py"))
    assert report.ok, report.text()
    (dispatch,) = report.compile_report.dispatches
    assert dispatch.compute_ops == ("linalg.generic", "linalg.generic")
    assert dispatch.layout_strategies + dispatch.applied_strategies == ("q_proj_fuse", "q_proj_tiles")


def test_a_2d_transposed_consumer_is_already_fused_by_iree() -> None:
    """Why head_split_fusion targets the reshape: IREE 3.13 interchanges 2-D transposed
    consumers itself, so matmul + transposed add is one dispatch without any strategy."""
    assert _default_dispatch_count(PAYLOADS / "mm_transposed_add.mlir") == 1


def test_packing_keeps_programs_with_a_multi_use_transpose_compiling_and_correct(golden) -> None:
    payload = PAYLOADS / "transpose_multi_use.mlir"
    strategies = auto(isa="avx2", pack_matmuls=True)
    report = run(payload, strategies)
    assert report.ok, report.text()
    applied = {f for rule in report.compile_report.rules for f in rule.functions}
    assert applied == {"transposed_rhs_also_returned", "transposed_lhs_also_returned", "named_transpose_also_returned"}
    golden.check_dispatches(payload, strategies, "cpu", "goldens/dispatches/cpu_transpose_multi_use.cpu.txt")


def test_head_split_rules_name_their_fields() -> None:
    rules = head_split_fusion("q", "avx512", m=128, heads=[12, 64], k=768, consumer_interchange=[1, 0, 2])
    lowering = rules[1].strategy
    assert lowering.vector_common_parallel == (8, 1, 32, 0)  # type: ignore[union-attr]
    with pytest.raises(StrategyError, match="fuse.generalize: expected True when propagate_reshapes is set"):
        DataLayout(name="fuse", propagate_reshapes=True)
    with pytest.raises(StrategyError, match="consumer_interchange: expected no 'pack' in the same strategy"):
        DataLayout.model_validate({"name": "fuse", "consumer_interchange": [1, 0], "pack": {"kind": "pack", "packed_sizes": [8, 8, 1]}})


def test_bias_relu_epilogues_ride_with_the_unpack_and_stay_correct(golden) -> None:
    """IREE 3.13 never puts a graph-level mmt4d and a consumer in one dispatch, so the
    epilogue fuses with the unpack (which reads the packed result anyway); the conv's
    epilogue stays in the im2col matmul's dispatch."""
    payload = PAYLOADS / "epilogues.mlir"
    strategies = auto(isa="avx2", pack_matmuls=True)
    report = run(payload, strategies)
    assert report.ok, report.text()
    lines = golden.check_dispatches(payload, strategies, "cpu", "goldens/dispatches/cpu_epilogues.cpu.txt")
    assert any("unpack_elementwise" in line and "linalg.unpack + linalg.generic" in line for line in lines)


def test_head_split_rule_leaves_a_same_shape_matmul_without_reshape_alone() -> None:
    """BERT's output projection has the Q projection's shape but no head split: the
    ConsumerMatch keeps the fusion rule off it (else the consumer interchange would hit
    func.return)."""
    report = run(PAYLOADS / "out_proj.mlir", load(HEADS / "strategy.py"))
    assert report.ok, report.text()
    assert [rule.applied for rule in report.compile_report.rules] == [False, False]
    with pytest.raises(StrategyError, match="names: expected at least one operation name"):
        ConsumerMatch(names=[])
