"""A dynamic-batch tuning spec (issue 38): ``dims_equal %m, [-1]`` imports fully typed
(``ContractionMatch(m=[-1])``, a ``CpuLowering``) and gives the ``?x1024x1280`` matmul
dispatch (``matmul_Dx1024x1280``) the original's configuration, one IREE's default does not
give it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl.importer import read_file
from tdsl.model.lowering import CpuLowering
from tdsl.model.matchers import ContractionMatch

ROOT = Path(__file__).resolve().parent.parent.parent
SPEC = ROOT / "examples" / "specs" / "dynamic_batch_tuning_spec_cpu.mlir"
PAYLOAD = ROOT / "tests" / "payloads" / "import" / "matmul_Dx1024x1280_f32.mlir"


def test_a_dynamic_batch_spec_imports_fully_typed() -> None:
    imported = read_file(SPEC)
    assert imported.raw == [] and imported.target == "cpu"
    (rule,) = imported.strategy_set.rules
    assert isinstance(rule.match, ContractionMatch) and isinstance(rule.strategy, CpuLowering)
    assert (rule.match.m, rule.match.n, rule.match.k, rule.match.operand_layout) == (
        ((-1,),),
        ((1024,),),
        ((1280,),),
        "mk_kn",
    )


@pytest.mark.compile
def test_a_dynamic_batch_spec_configures_the_dynamic_dispatch_like_the_original() -> None:
    from tdsl.importer.check import compare, configured

    imported = read_file(SPEC)
    comparison = compare(imported, PAYLOAD)
    assert comparison.same, "\n".join(comparison.differences())
    assert any(c.dispatch.endswith("matmul_Dx1024x1280_f32") and c.op == "linalg.matmul" for c in comparison.original)
    assert configured(PAYLOAD, imported.strategy_set.target("cpu").compile_flags()) != comparison.original
