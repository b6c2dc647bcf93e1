"""Ready-library rules (``Rule.optional``) in compile reports: summed up in one line, never
a ``--strict`` error (user rules still are), and the warning for an op that a graph-level
rule sent to llvm-cpu's untiled Default pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import ContractionMatch, CpuTarget, Rule, StrategySet, combine, compile
from tdsl.errors import StrategyNotApplied
from tdsl.strategies.cpu import auto, inner_tile, mmt4d_layout

ROOT = Path(__file__).resolve().parent.parent.parent
AUTO = ROOT / "examples" / "cpu_auto" / "payload.mlir"
BATCH1 = ROOT / "tests" / "payloads" / "cpu" / "batch1_matmul.mlir"


def _user_rule(batch: int, specialize: bool = False, match: ContractionMatch | None = None) -> Rule:
    layout = mmt4d_layout(f"b{batch}_pack", inner_tile("avx2", "f32", "f32", "f32"), batch=True)
    return Rule(
        target="cpu",
        match=match or ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[batch]),
        strategy=layout.model_copy(update={"specialize": specialize}),
    )


@pytest.mark.compile
def test_strict_ignores_ready_rules_but_not_user_rules() -> None:
    ready = auto(isa="avx2", pack_matmuls=True)
    report = compile(AUTO, ready, "cpu", strict=True)
    unmatched = report.unmatched
    assert unmatched and all(r.optional for r in unmatched)
    short = report.warnings(verbose=False)
    assert len([w for w in short if "ready-library rules found no such op" in w]) == 1
    assert len(report.warnings(verbose=True)) == len(unmatched)
    assert all("(ready-library rule)" in w for w in report.warnings(verbose=True))
    text = report.text(verbose=False)
    assert f"{len(unmatched)} more rules matched nothing" in text
    mine = combine([_user_rule(7)], ready, name="mine")
    with pytest.raises(StrategyNotApplied, match=r"--strict: rule 0 \(b7_pack\) matched nothing"):
        compile(AUTO, mine, "cpu", strict=True)


@pytest.mark.compile
def test_op_left_on_the_default_pipeline_is_warned() -> None:
    """A packed batch matmul that is specialized becomes linalg.contract on the Default
    pipeline (27-30x slower): the report says so; mmt4d_layout(batch=True) does not
    specialize, and its generic reaches DoubleTilingExpert: no warning."""
    # specialize needs a matcher that fixes the loops and the operands' layout
    fixed = ContractionMatch(
        lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[128], n=[384], k=[256], operand_layout="mk_kn"
    )
    strategies = StrategySet(
        name="b1", targets=[CpuTarget(ukernels="none")], rules=[_user_rule(1, specialize=True, match=fixed)]
    )
    report = compile(BATCH1, strategies, "cpu")
    warned = report.unintended_pipelines()
    assert (
        len(warned) == 1
        and "rule 0 (b1_pack)" in warned[0]
        and "linalg.contract on IREE's Default pipeline" in warned[0]
    )
    assert warned[0] in report.warnings(verbose=False)
    clean = compile(AUTO, StrategySet(name="b3", targets=[CpuTarget(ukernels="none")], rules=[_user_rule(3)]), "cpu")
    assert clean.rules[0].applied and not clean.unintended_pipelines()


@pytest.mark.compile
def test_ops_emit_keeps_ready_rules_optional(tmp_path: Path) -> None:
    """`tdsl ops --emit` on CPU writes the ready set's rules with ``optional=True``, and names
    the path that takes the dispatches no ready rule covers."""
    from tdsl import load
    from tdsl.cli import main

    emitted = tmp_path / "emitted.py"
    strategy = ROOT / "examples" / "cpu_auto" / "strategy.py"
    assert main(["ops", str(AUTO), "--target", "cpu", "--strategies", str(strategy), "--emit", str(emitted), "-q"]) == 0
    loaded = load(emitted)
    assert loaded.rules and all(rule.optional for rule in loaded.rules)
    dt = tmp_path / "dt.py"
    assert main(["ops", str(AUTO), "--target", "cpu", "--emit", str(dt), "-q"]) == 0
    assert "no ready rule applies (IREE's data tiling path)" in dt.read_text()
