"""Codegen errors without a strategy location name the rule that configured their dispatch;
consumer_interchange leaves consumers that are not linalg.generic alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import (
    AllOf,
    ContractionMatch,
    CpuTarget,
    DataLayout,
    FunctionMatch,
    OpNameMatch,
    Rule,
    StrategySet,
    compile,
    render,
)
from tdsl.compiler.diagnostics import (
    CompilerDiagnostic,
    RuleName,
    locate_by_op_name,
    locate_in_dispatches,
    locate_tile_levels,
    parse_diagnostics,
    rule_names,
)
from tdsl.compiler.iree_compile import CompileFailed, CompileResult, describe_failure
from tdsl.compiler.options import CompileOptions

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
F32 = {"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32"}

CONFIGURED = """\
hal.executable public @mlp_dispatch_1 {
  hal.executable.variant public @embedded_elf_x86_64 target(#executable_target) {
    builtin.module {
      func.func @mlp_dispatch_1_matmul_128x128x512_f32() attributes {translation_info = #translation} {
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<128x128xf32>) -> tensor<128x128xf32>
        %5 = linalg.matmul {lowering_config = #config, tdsl.applied = "mm_tiles", tdsl.layout = "mm_fuse", tdsl.layout_rule = 0 : i64, tdsl.rule = 2 : i64} ins(%a, %b) outs(%4)
        return
      }
    }
  }
}
"""


def _dump(tmp_path: Path) -> Path:
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "configured_module_mlp_dispatch_1.mlir").write_text(CONFIGURED)
    (dump / "configured_module_mlp_dispatch_0.mlir").write_text(
        CONFIGURED.replace("dispatch_1", "dispatch_0").replace(", tdsl.applied", ", x").replace("tdsl.", "other.")
    )
    return dump


NAMES = {
    0: RuleName("s.rules[0]", "mm_fuse", "data_layout"),
    2: RuleName("s.rules[2]", "mm_tiles", "cpu_lowering"),
}


def test_an_error_in_a_dispatch_names_the_rules_that_configured_it(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    stderr = (
        f"{dump}/configured_module_mlp_dispatch_1.mlir:4:6: error: 'func.func' op exceeded stack allocation limit "
        "of 32768 bytes for function. Got 65536 bytes\n"
        f"{dump}/configured_module_mlp_dispatch_1.mlir:2:2: error: failed to run translation of source executable\n"
        f"{dump}/module_mlp_dispatch_0.mlir:9:3: error: large vector sizes\n"
        "<unknown>:0: error: in @mlp_dispatch_1_matmul_128x128x512_f32: something\n"
        "payload.mlir:3:4: error: elsewhere\n"
        '<unknown>:0: error: loc("mm_tiles.distribution"): bad\n'
    )
    stack, variant, other, named, payload, field = locate_in_dispatches(parse_diagnostics(stderr), dump, NAMES)
    assert stack.strategy_field == "s.rules[2]" and stack.dispatch == "mlp_dispatch_1_matmul_128x128x512_f32"
    assert stack.rules == ("s.rules[2] (mm_tiles, cpu_lowering)", "s.rules[0] (mm_fuse, data_layout)")
    assert stack.describe() == (
        "s.rules[2] (mm_tiles, cpu_lowering) and s.rules[0] (mm_fuse, data_layout) configured dispatch "
        "mlp_dispatch_1_matmul_128x128x512_f32: error: 'func.func' op exceeded stack allocation limit of 32768 "
        "bytes for function. Got 65536 bytes"
    )
    assert variant.strategy_field == "s.rules[2]"  # the variant's line precedes the function
    assert other.dispatch == "mlp_dispatch_0_matmul_128x128x512_f32" and other.strategy_field is None
    assert "IREE's default configuration: no tdsl rule applied to it" in other.describe()
    assert named.strategy_field == "s.rules[2]"  # the message names the dispatch function
    assert payload == CompilerDiagnostic("error", "elsewhere", None, "payload.mlir", 3)
    assert field.strategy_field == "mm_tiles.distribution" and field.dispatch is None


def test_the_one_line_failure_leads_with_the_rule_and_the_first_note(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    stderr = (
        f"{dump}/configured_module_mlp_dispatch_1.mlir:4:6: error: One or more operations with large vector sizes "
        "(32768 bytes) were found:\n"
        f"{dump}/configured_module_mlp_dispatch_1.mlir:5:8: note:   %cst = arith.constant dense<0.0> : vector<64x128xf32>\n"
        f"{dump}/configured_module_mlp_dispatch_1.mlir:2:2: error: failed to run translation of source executable\n"
    )
    diagnostics = locate_in_dispatches(parse_diagnostics(stderr), dump, NAMES)
    result = CompileResult(("iree-compile", "p.mlir"), 1, stderr, diagnostics, 1.0, None)
    line = describe_failure(result, Path("p.mlir"), CompileOptions(memory_gb=16.0))
    assert line == (
        "iree-compile failed (exit 1) on p.mlir: s.rules[2] (mm_tiles, cpu_lowering) and s.rules[0] (mm_fuse, "
        "data_layout) configured dispatch mlp_dispatch_1_matmul_128x128x512_f32: error: One or more operations "
        "with large vector sizes (32768 bytes) were found: %cst = arith.constant dense<0.0> : vector<64x128xf32> "
        "(and 1 more error)"
    )


@pytest.mark.compile
def test_large_vector_sizes_in_a_conv_dispatch_name_the_lowering_rule() -> None:
    conv = {
        "kind": "convolution",
        **F32,
        "batch": [2],
        "output_image": [32, 32],
        "output_channel": [64],
        "filter": [3, 3],
        "input_channel": [32],
        "strides": [1, 1],
        "dilations": [1, 1],
    }
    strategies = StrategySet.model_validate(
        {
            "name": "conv_set",
            "targets": [{"kind": "llvm-cpu", "name": "cpu", "ukernels": "none"}],
            "rules": [
                {
                    "target": "cpu",
                    "match": conv,
                    "strategy": {
                        "kind": "cpu_lowering",
                        "name": "conv_tiles",
                        "distribution": [0] * 7,
                        "cache_parallel": [0] * 7,
                        "cache_reduction": [0] * 7,
                    },
                }
            ],
        }
    )
    with pytest.raises(CompileFailed) as err:
        compile(EXAMPLES / "conv_tuning" / "payload.mlir", strategies, "cpu")
    text = str(err.value)
    assert "\n" not in text
    assert "conv_set.rules[0] (conv_tiles, cpu_lowering) configured dispatch conv_dispatch_0_" in text
    assert "large vector sizes" in text
    assert err.value.result is not None and err.value.result.errors[0].strategy_field == "conv_set.rules[0]"


@pytest.mark.compile
def test_stack_allocation_limit_names_the_lowering_rule() -> None:
    strategies = StrategySet.model_validate(
        {
            "name": "mlp_set",
            "targets": [{"kind": "llvm-cpu", "name": "cpu", "ukernels": "none"}],
            "rules": [
                {
                    "target": "cpu",
                    "match": {
                        "kind": "contraction",
                        **F32,
                        "batch": [],
                        "m": 128,
                        "n": 128,
                        "k": 512,
                        "operand_layout": "mk_kn",
                    },
                    "strategy": {
                        "kind": "cpu_lowering",
                        "name": "mm_tiles",
                        "pipeline": "Default",
                        "distribution": [0, 0, 0],
                        "vector_common_parallel": [0, 0, 0],
                        "vector_reduction": [0, 0, 2],
                    },
                }
            ],
        }
    )
    with pytest.raises(
        CompileFailed,
        match=r"mlp_set\.rules\[0\] \(mm_tiles, cpu_lowering\) configured dispatch "
        r"mlp_dispatch_1_matmul_128x128x512_f32: error: 'func.func' op exceeded stack allocation limit",
    ):
        compile(EXAMPLES / "mlp" / "payload.mlir", strategies, "cpu")


def _consumer_interchange_set(name: str, match: OpNameMatch | ContractionMatch, permutation: list[int]) -> StrategySet:
    return StrategySet(
        name=name,
        targets=[CpuTarget()],
        rules=[
            Rule(
                target="cpu",
                match=match,
                strategy=DataLayout(name=f"{name}_fuse", generalize=True, consumer_interchange=permutation),
            )
        ],
    )


def test_consumer_interchange_runs_after_the_walk_on_generic_consumers_only() -> None:
    text = render(_consumer_interchange_set("ci", OpNameMatch(names="linalg.matmul"), [1, 0]), "cpu").scripts[0].text
    action, entry = text.split("@__transform_main")
    assert "transform.structured.interchange" not in action  # not inside the foreach_match walk
    assert (
        "%tdsl_r0_ci_fuse_ops = transform.structured.match attributes {tdsl.layout_rule = 0 : i64} in %root1" in entry
    )
    assert 'transform.select "linalg.generic" in %tdsl_r0_ci_fuse_unique' in entry
    assert 'transform.sequence %tdsl_r0_ci_fuse_generics : !transform.op<"linalg.generic"> failures(suppress)' in entry
    assert "transform.structured.interchange %tdsl_r0_ci_fuse_fitting iterator_interchange = [1, 0]" in entry
    assert 'transform.annotate %tdsl_r0_ci_fuse_ops "tdsl.layout_rule"' in entry  # marked again after the rewrite


@pytest.mark.compile
def test_consumer_interchange_on_a_matmul_whose_result_is_returned_compiles() -> None:
    """The matmul's only consumer is the function's return (a hal.tensor.export by
    preprocessing): it is left alone, the rule still applies (generalize), no crash."""
    strategies = _consumer_interchange_set("ci", OpNameMatch(names="linalg.matmul"), [1, 0])
    report = compile(EXAMPLES / "matmul_pack" / "payload.mlir", strategies, "cpu")
    (dispatch,) = report.dispatches
    assert dispatch.layout_strategies == ("ci_fuse",)
    (rule,) = report.rules
    assert rule.applied and rule.functions == ("matmul",)


@pytest.mark.compile
def test_consumer_interchange_leaves_a_generic_consumer_with_another_loop_count_alone() -> None:
    """bert_heads' consumer is a 3-loop linalg.generic: a 2-entry permutation does not fit it.
    The consumer is left as it is instead of failing the action, which crashed IREE 3.13
    while it printed the diagnostic (IREE then interchanges the transposed consumer itself)."""
    match = ContractionMatch(**F32, batch=[], m=128, n=768, k=768)
    strategies = StrategySet(
        name="ci",
        targets=[CpuTarget()],
        rules=[
            Rule(
                target="cpu",
                match=match,
                strategy=DataLayout(
                    name="ci_fuse", generalize=True, propagate_reshapes=True, consumer_interchange=[1, 0]
                ),
            )
        ],
    )
    report = compile(EXAMPLES / "bert_heads" / "payload.mlir", strategies, "cpu")
    assert report.rules[0].applied and report.result.ok


@pytest.mark.compile
def test_deferred_layout_work_of_a_rule_scoped_to_a_missing_function_is_a_no_op() -> None:
    """The deferred steps match the marked ops in the payload root, not in the (here empty)
    scope: transform.structured.match needs exactly one op to look in."""
    match = AllOf(matchers=[FunctionMatch(function="main"), OpNameMatch(names="linalg.matmul")])
    strategies = StrategySet(
        name="sc",
        targets=[CpuTarget()],
        rules=[
            Rule(
                target="cpu",
                match=match,
                strategy=DataLayout(
                    name="sc_fuse", generalize=True, propagate_reshapes=True, consumer_interchange=[1, 0, 2]
                ),
            )
        ],
    )
    text = render(strategies, "cpu").scripts[0].text
    assert "transform.structured.match attributes {tdsl.layout_rule = 0 : i64} in %root :" in text
    report = compile(EXAMPLES / "bert_heads" / "payload.mlir", strategies, "cpu")
    assert not report.rules[0].applied


TILE_LEVEL_ERROR = (
    "/tmp/x/dump/module_conv_dispatch_0.mlir:18:8: error: 'linalg.generic' op expected only parallel dims to be set "
    "in the distribution tiling level, but tile size at index (6) was also set"
)


def test_a_tile_level_error_names_the_level_and_loop_of_the_rule_that_set_it() -> None:
    """Where only the payload knows a convolution's reduction loops, IREE's refusal of a tile
    names the strategy field that set it, not a dump file."""
    conv = {"kind": "convolution", **F32}
    data = {
        "name": "s",
        "targets": [{"kind": "llvm-cpu", "name": "cpu"}],
        "rules": [
            {"target": "cpu", "match": conv, "strategy": {"kind": "cpu_lowering", "name": "a", "distribution": [8, 8]}},
            {
                "target": "cpu",
                "match": conv,
                "strategy": {"kind": "cpu_lowering", "name": "c0", "distribution": [1] * 7},
            },
        ],
    }
    sset = StrategySet.model_validate(data)
    names = rule_names("s", [(i, r.strategy.name, r.strategy.kind) for i, r in sset.rules_for("cpu")])
    strategies = {i: r.strategy for i, r in sset.rules_for("cpu")}
    (found,) = locate_tile_levels(parse_diagnostics(TILE_LEVEL_ERROR), names, strategies)
    assert found.strategy_field == "c0.distribution[6]" and found.rules == ("s.rules[1] (c0, cpu_lowering)",)
    assert found.describe().startswith("strategy field c0.distribution[6]: error: 'linalg.generic' op expected only")
    assert found.message.endswith("(loop 6 is a reduction loop of the matched op: set distribution[6] to 0)")
    other = parse_diagnostics("/tmp/x/dump/module_a.mlir:3:1: error: something else")
    assert locate_tile_levels(other, names, strategies) == tuple(other)


@pytest.mark.compile
@pytest.mark.parametrize("kind", ["cpu_lowering", "graph_cpu_lowering"])
def test_a_convolution_distribution_tile_on_a_reduction_loop_names_the_field(kind: str) -> None:
    conv = {"kind": "convolution", **F32, "batch": [2], "output_image": [32, 32], "output_channel": [64]}
    strategy = {"kind": kind, "name": "c0", "distribution": [1, 8, 32, 64, 0, 0, 8]}
    data = {
        "name": "s",
        "targets": [{"kind": "llvm-cpu", "name": "cpu", "ukernels": "none"}],
        "rules": [{"target": "cpu", "match": conv, "strategy": strategy}],
    }
    with pytest.raises(CompileFailed) as caught:
        compile(EXAMPLES / "conv_tuning" / "payload.mlir", StrategySet.model_validate(data), "cpu")
    assert "strategy field c0.distribution[6]: error:" in str(caught.value).splitlines()[0]


def test_an_error_on_an_op_before_configuration_names_the_rule_whose_matcher_names_it() -> None:
    """'multiple ops within dispatch trying to set the translation info': a matcher that
    selects linalg.fill configures every fill of a softmax dispatch."""
    text = (
        "/tmp/x/dump/module_main_dispatch_1.mlir:14:8: error: 'linalg.fill' op multiple ops within dispatch "
        "trying to set the translation info"
    )
    names = rule_names("fuzz", [(0, "cpu1", "cpu_lowering"), (1, "cpu0", "cpu_lowering")])
    op_names = {0: ("linalg.transpose",), 1: ("linalg.fill",)}
    (found,) = locate_by_op_name(parse_diagnostics(text), names, op_names)
    assert found.strategy_field == "fuzz.rules[1].match" and found.rules == ("fuzz.rules[1] (cpu0, cpu_lowering)",)
    assert found.message.endswith("(the rule's matcher selects linalg.fill; narrow it to the op it is meant for)")
    assert locate_by_op_name(parse_diagnostics(text), names, {0: ("linalg.transpose",)})[0].strategy_field is None


@pytest.mark.compile
def test_a_matcher_of_every_fill_in_a_softmax_dispatch_names_the_rule() -> None:
    data = {
        "name": "fuzz",
        "targets": [{"kind": "llvm-cpu", "name": "cpu", "ukernels": "none"}],
        "rules": [
            {
                "target": "cpu",
                "match": {"kind": "op_name", "names": ["linalg.fill"]},
                "strategy": {"kind": "cpu_lowering", "name": "cpu0", "distribution": [32, 64, 0]},
            }
        ],
    }
    payload = ROOT / "tests" / "payloads" / "fuzz" / "masked_scores_i8.mlir"
    with pytest.raises(CompileFailed) as caught:
        compile(payload, StrategySet.model_validate(data), "cpu")
    assert "strategy field fuzz.rules[0].match: error: 'linalg.fill' op multiple ops" in str(caught.value)
