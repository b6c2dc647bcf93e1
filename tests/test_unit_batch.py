"""A batch-1 batch_matmul (ONNX MatMul of a 3-D activation by a 2-D weight) is a matmul:
``batch=[1]`` selects it, ``batch={"one_of": [[], [1]]}`` selects it and the plain matmul
alike, and neither selects a real batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tdsl import ContractionMatch, CpuTarget, DataLayout, Rule, StrategySet, compile

PAYLOAD = Path(__file__).resolve().parent / "payloads" / "cpu" / "unit_batch.mlir"


@pytest.mark.compile
@pytest.mark.parametrize(("batch", "functions"), [([1], ("bmm",)), ([], ("mm",)), ({"one_of": [[], [1]]}, ("bmm", "mm"))])
def test_unit_batch_is_matched_either_way(batch: object, functions: tuple[str, ...]) -> None:
    match = ContractionMatch.model_validate({"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32", "batch": batch, "m": 128, "n": 384, "k": 256})
    strategies = StrategySet(name="unit", targets=[CpuTarget()], rules=[Rule(target="cpu", match=match, strategy=DataLayout(name="g", generalize=True))])
    report = compile(PAYLOAD, strategies, "cpu")
    assert tuple(sorted(report.rules[0].functions)) == functions
