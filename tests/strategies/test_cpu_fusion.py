"""CPU fusion strategies: BERT's head split fused into one dispatch (hand-written and as
exporters write it), and packing programs whose transpose feeds a pack and is also
returned (they must compile and stay correct)."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from tdsl import (
    ConsumerMatch,
    ContractionMatch,
    CpuTarget,
    DataLayout,
    Rule,
    StrategyError,
    StrategySet,
    combine,
    compile,
    load,
    render,
    run,
)
from tdsl.compiler.iree_compile import run_iree_compile
from tdsl.strategies.cpu import auto, head_split_fusion
from tdsl.strategies.cpu.fusion import HEAD_FUSION, HeadLayout, head_transpose_fusion

ROOT = Path(__file__).resolve().parent.parent.parent
HEADS = ROOT / "examples" / "bert_heads"
PAYLOADS = ROOT / "tests" / "payloads" / "cpu"
EXPORTED = PAYLOADS / "exported_heads.mlir"
BERT = ROOT / "examples" / "models" / "bert"

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
    golden.check_dispatches(payload, strategies, "cpu", "../goldens/dispatches/cpu_transpose_multi_use.cpu.txt")


def test_head_split_rules_name_their_fields() -> None:
    rules = head_split_fusion("q", "avx512", m=128, heads=[12, 64], k=768, consumer_interchange=[1, 0, 2])
    lowering = rules[1].strategy
    assert lowering.vector_common_parallel == (8, 1, 32, 0)  # type: ignore[union-attr]
    with pytest.raises(StrategyError, match="fuse.generalize: expected True when propagate_reshapes is set"):
        DataLayout(name="fuse", propagate_reshapes=True)
    with pytest.raises(StrategyError, match="consumer_interchange: expected no 'pack' in the same strategy"):
        DataLayout.model_validate(
            {"name": "fuse", "consumer_interchange": [1, 0], "pack": {"kind": "pack", "packed_sizes": [8, 8, 1]}}
        )


def test_bias_relu_epilogues_ride_with_the_unpack_and_stay_correct(golden) -> None:
    """IREE 3.13 never puts a graph-level mmt4d and a consumer in one dispatch, so the
    epilogue fuses with the unpack (which reads the packed result anyway); the conv's
    epilogue stays in the im2col matmul's dispatch."""
    payload = PAYLOADS / "epilogues.mlir"
    strategies = auto(isa="avx2", pack_matmuls=True)
    report = run(payload, strategies)
    assert report.ok, report.text()
    lines = golden.check_dispatches(payload, strategies, "cpu", "../goldens/dispatches/cpu_epilogues.cpu.txt")
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


# --- head splits as exporters write them -------------------------------------------------


def _exported(layouts: tuple[HeadLayout, ...], data_tiling: bool = False) -> StrategySet:
    base = StrategySet(name="base", targets=[CpuTarget(data_tiling=data_tiling)], rules=[])
    return combine(head_transpose_fusion(layouts=layouts, data_tiling=data_tiling), base, name="heads")


def _graph_level(
    payload: Path, strategies: StrategySet, tmp_path: Path
) -> tuple[int | None, Counter[str], Counter[str]]:
    """(launches per call, {strategy: contractions it marked}, {named contraction: count})
    of ``payload`` compiled with ``strategies``, read from the IR after preprocessing."""
    dump = tmp_path / "pre.mlir"
    report = compile(payload, strategies, "cpu", dump_ir="preprocessing", dump_ir_to=dump)
    text = dump.read_text()
    marked = Counter(re.findall(r'tdsl\.layout = "(\w+)"', text))
    named = Counter(re.findall(r"= (linalg\.(?:batch_)?matmul) ", text))
    return report.launches, marked, named


@pytest.mark.parametrize(
    ("layouts", "marked", "named", "launches"),
    [
        # Q, V and the 2-D projection ([0, 2, 1, 3], [1, 0, 2]) and K ([0, 2, 3, 1]); P.V
        # (no bias add) and the output projection (no head split) keep their batch_matmul.
        (("hsd", "hds"), {"heads_hsd4": 2, "heads_hsd3": 1, "heads_hds4": 1}, {"linalg.batch_matmul": 3}, 8),
        (("hds",), {"heads_hds4": 1}, {"linalg.batch_matmul": 5, "linalg.matmul": 1}, 11),
        (("hsd",), {"heads_hsd4": 2, "heads_hsd3": 1}, {"linalg.batch_matmul": 4}, 9),
    ],
)
def test_exported_head_splits_fuse_into_their_projections_and_nothing_else(
    tmp_path: Path, layouts: tuple[HeadLayout, ...], marked: dict[str, int], named: dict[str, int], launches: int
) -> None:
    """Each head-split chain of the selected layouts loses its own transpose dispatch; the
    rule rewrites only those chains' contractions (generalized, marked), nothing else."""
    assert compile(EXPORTED, None, "cpu").launches == 12
    found, by_rule, contractions = _graph_level(EXPORTED, _exported(layouts), tmp_path)
    assert (found, dict(by_rule), dict(contractions)) == (launches, marked, named)


def test_fused_head_splits_keep_numerics_and_compile_with_data_tiling() -> None:
    """With IREE data tiling (what auto() uses on AVX-512) the rewritten projections still
    compile, none on the untiled Default pipeline: the fused transposed-K projection stays
    data-tiled (mmt4d), a fused Q/V projection (two n dims) goes to DoubleTilingExpert."""
    for data_tiling in (False, True):
        report = run(EXPORTED, _exported(("hsd", "hds"), data_tiling))
        assert report.ok, report.text()
        pipelines = {d.name: d.pipeline for d in report.compile_report.dispatches}
        assert not any("Default" in p for p in pipelines.values()), pipelines
    assert "#iree_cpu.pipeline<Mmt4dTilingExpert>" == pipelines["attention_dispatch_1_matmul_like_64x32x64_f32"]


def test_head_transpose_fusion_on_the_exported_bert_model(tmp_path: Path) -> None:
    """examples/models/bert: 4 Q/V and 2 K projections fused (IREE default build: 39 -> 33
    launches per call); the measured default on AVX-512 fuses nothing (see HEAD_FUSION)."""
    from tdsl.programs.load import load_program

    program = load_program(BERT / "model.onnx")
    found, by_rule, contractions = _graph_level(program.mlir_path, _exported(("hsd", "hds")), tmp_path)
    assert found == 33 and compile(program.mlir_path, None, "cpu").launches == 39
    assert dict(by_rule) == {"heads_hsd4": 4, "heads_hds4": 2}
    assert contractions["linalg.batch_matmul"] == 16 - 6
    strategies = load(BERT / "strategy.py")
    assert strategies.rules == auto().rules and head_transpose_fusion(isa="avx512") == []


def test_head_transpose_fusion_rules_and_their_checks(golden) -> None:
    rules = head_transpose_fusion(layouts=["hsd", "hds"])
    assert [r.strategy.name for r in rules] == ["heads_hsd4", "heads_hsd3", "heads_hds4", "heads_hds3"]
    assert all(r.optional for r in rules) and HEAD_FUSION["avx512"].evidence
    assert head_transpose_fusion(isa="generic") == []  # not measured: nothing by default
    one = StrategySet(name="heads", targets=[CpuTarget()], rules=rules[:1])
    golden.check(render(one, "cpu").scripts[0].text, "../goldens/cpu/head_transpose_fusion.preprocessing.mlir")
    ir = golden.check_ir(
        EXPORTED,
        _exported(("hsd", "hds")),
        "cpu",
        "preprocessing",
        "../goldens/cpu/exported_heads.preprocessing.mlir",
        mode="interpreter",
    )
    assert ir.count("linalg.transpose") == 5 and ir.count("tdsl.layout = ") == 4
    with pytest.raises(StrategyError, match=r"h\.generalize: expected False when fuse_head_split is set"):
        DataLayout(name="h", fuse_head_split=True, generalize=True)
    with pytest.raises(StrategyError, match=r"h\.fuse_head_split: expected a rule whose matcher selects the transpose"):
        Rule(
            target="cpu",
            match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32"),
            strategy=DataLayout(name="h", fuse_head_split=True),
        )
