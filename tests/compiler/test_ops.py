"""The op listing: every dispatch with its launches, root op at codegen and at the graph
level, loop roles, and matchers that select exactly that op (proved by compiling rules that
use them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tdsl import AmdGpuTarget, CpuTarget, DataLayout, PackGreedily, PackTranspose, Rule, StrategySet, compile, load
from tdsl.compiler.ops import list_dispatches, python_source
from tdsl.strategies.gpu.chooser import choose_contraction
from tdsl.strategies.gpu.problems import Contraction

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
pytestmark = pytest.mark.compile

REPEATED = """\
func.func @twice(%x: tensor<64x128xf32>, %w: tensor<128x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %a = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %b = linalg.matmul ins(%a, %w : tensor<64x128xf32>, tensor<128x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %b : tensor<64x128xf32>
}
"""


def _listing(payload: Path, target: CpuTarget | AmdGpuTarget, **kwargs: object) -> str:
    text = list_dispatches(payload, target, **kwargs).text()  # type: ignore[arg-type]
    return text.replace(str(payload), payload.name)


def test_listing_golden_cpu_and_gfx942(golden) -> None:
    text = "\n".join(
        [
            _listing(EXAMPLES / "mlp" / "payload.mlir", CpuTarget(cpu="znver4")),
            _listing(EXAMPLES / "mlp" / "payload.mlir", AmdGpuTarget()),
            _listing(EXAMPLES / "conv1x1_gpu" / "payload.mlir", AmdGpuTarget()),
            _listing(EXAMPLES / "conv_tuning" / "payload.mlir", AmdGpuTarget()),
        ]
    )
    golden.check(text + "\n", "../goldens/ops/listings.txt")


def test_launches_count_calls_not_executables(tmp_path: Path) -> None:
    payload = tmp_path / "twice.mlir"
    payload.write_text(REPEATED)
    ops = list_dispatches(payload, CpuTarget())
    assert len(ops.dispatches) == 1 and ops.launches == 2 and ops.dispatches[0].launches == 2
    assert ops.to_json()["launches"] == 2 and ops.to_json()["executables"] == 1
    json.dumps(ops.to_json())


def test_ready_rules_that_cover_a_dispatch_are_named() -> None:
    strategies = load(EXAMPLES / "cpu_auto" / "strategy.py")
    ops = list_dispatches(EXAMPLES / "cpu_auto" / "payload.mlir", strategies.target("cpu"), ready=strategies)
    covered = {d.name.split("_dispatch")[0]: d.covered_by for d in ops.dispatches}
    assert covered["bmm"] == () and covered["odd"] and covered["mv"]
    assert any("mmt4d" in name for name in covered["odd"])


def test_graph_matchers_select_exactly_their_op(tmp_path: Path) -> None:
    """One generalize rule per graph-level matcher: each applies to its own op only."""
    payload = EXAMPLES / "cpu_auto" / "payload.mlir"
    ops = list_dispatches(payload, CpuTarget())
    rules = [
        Rule(target="cpu", match=d.graph_matcher, strategy=DataLayout(name=f"g{i}", generalize=True))
        for i, d in enumerate(ops.dispatches)
        if d.graph_matcher is not None
    ]
    assert len(rules) == len(ops.dispatches) == 6
    report = compile(payload, StrategySet(name="each", targets=[CpuTarget()], rules=rules), "cpu")
    # each payload function holds one matmul: a matcher that selected more would name more functions
    for rule, dispatch in zip(report.rules, ops.dispatches):
        assert rule.functions == (dispatch.name.split("_dispatch")[0],), rule


def test_matchers_tell_a_transposed_result_from_a_plain_matmul() -> None:
    """Same m, n, k: the plain matmul's matcher pins operand_layout, the transposed-result
    contraction's pins its maps, and each rule applies to its own function only."""
    payload = ROOT / "tests" / "payloads" / "cpu" / "transposed_output.mlir"
    ops = list_dispatches(payload, CpuTarget())
    matchers = {d.name.split("_dispatch")[0]: d.graph_matcher for d in ops.dispatches}
    assert 'operand_layout="mk_kn"' in python_source(matchers["plain"])  # type: ignore[arg-type]
    assert "(d1, d0)" in python_source(matchers["tout"])  # type: ignore[arg-type]
    rules = [
        Rule(target="cpu", match=m, strategy=DataLayout(name=f"g_{f}", generalize=True))
        for f, m in matchers.items()
        if m is not None
    ]
    report = compile(payload, StrategySet(name="each", targets=[CpuTarget()], rules=rules), "cpu")
    assert sorted(r.functions for r in report.rules) == [("plain",), ("tout",)]


def test_codegen_matchers_select_exactly_their_op_on_gfx942() -> None:
    payload = EXAMPLES / "mlp" / "payload.mlir"
    ops = list_dispatches(payload, AmdGpuTarget())
    rules = []
    for i, d in enumerate(ops.dispatches):
        assert d.root is not None and d.codegen_matcher is not None
        problem = Contraction(
            batch=(),
            m=d.root.sizes("m")[0],
            n=d.root.sizes("n")[0],
            k=d.root.sizes("k")[0],
            lhs_type="f32",
            rhs_type="f32",
            output_type="f32",
        )
        rules.append(Rule(target="gfx942", match=d.codegen_matcher, strategy=choose_contraction(problem, f"c{i}")))
    report = compile(payload, StrategySet(name="each", targets=[AmdGpuTarget()], rules=rules), "gfx942")
    assert [r.dispatches for r in report.rules] == [(d.name,) for d in ops.dispatches]


def test_matchers_print_as_python_that_builds_them() -> None:
    ops = list_dispatches(EXAMPLES / "conv1x1_gpu" / "payload.mlir", AmdGpuTarget())
    import tdsl

    for d in ops.dispatches:
        for matcher in (d.codegen_matcher, d.graph_matcher):
            assert matcher is not None
            source = python_source(matcher)
            assert eval(source, vars(tdsl)) == matcher, source  # noqa: S307 - our own printer's output


PADDED_CONV = """\
func.func @padded(%x: tensor<1x16x400xf32>, %w: tensor<64x16x5xf32>) -> tensor<1x64x400xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2] high[0, 0, 2] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<1x16x400xf32> to tensor<1x16x404xf32> loc("conv0")
  %e = tensor.empty() : tensor<1x64x400xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x400xf32>) -> tensor<1x64x400xf32> loc("conv0")
  %c = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
    ins(%p, %w : tensor<1x16x404xf32>, tensor<64x16x5xf32>) outs(%f : tensor<1x64x400xf32>) -> tensor<1x64x400xf32> loc("conv0")
  return %c : tensor<1x64x400xf32>
}
"""


def test_a_pad_copy_dispatch_is_not_given_its_convolution(tmp_path: Path) -> None:
    """An ONNX Conv with padding imports to a pad and a convolution at one source site (the
    node's name); IREE makes the pad a copy dispatch of its own. That dispatch lists no
    graph-level op, so no convolution rule or tuning job is aimed at it; the convolution's
    own dispatch keeps it."""
    payload = tmp_path / "padded.mlir"
    payload.write_text(PADDED_CONV)
    ops = list_dispatches(payload, CpuTarget())
    graph = {d.name: d.graph_op.name if d.graph_op else None for d in ops.dispatches}
    assert len(graph) == 2 and set(graph.values()) == {"linalg.conv_1d_ncw_fcw", None}, graph
    [copy] = [d for d in ops.dispatches if d.graph_op is None]
    assert copy.root is not None and copy.root.kind == "other" and copy.graph_matcher is None


ONE_SITE_TWO_MATMULS = """\
func.func @cell(%x: tensor<1x32xf32>, %h: tensor<1x64xf32>, %wx: tensor<32x64xf32>, %wh: tensor<64x64xf32>) -> tensor<1x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32> loc("gru0")
  %a = linalg.matmul ins(%x, %wx : tensor<1x32xf32>, tensor<32x64xf32>) outs(%f : tensor<1x64xf32>) -> tensor<1x64xf32> loc("gru0")
  %b = linalg.matmul ins(%h, %wh : tensor<1x64xf32>, tensor<64x64xf32>) outs(%f : tensor<1x64xf32>) -> tensor<1x64xf32> loc("gru0")
  %s = arith.addf %a, %b : tensor<1x64xf32>
  %t = math.tanh %s : tensor<1x64xf32>
  return %t : tensor<1x64xf32>
}
"""


def test_ops_of_one_source_site_go_to_the_dispatch_of_their_size(tmp_path: Path) -> None:
    """An ONNX GRU or LSTM node imports to several matmuls at one source site (the node's
    name): each dispatch lists the graph-level matmul of its own size, and its graph
    matcher pins that size."""
    payload = tmp_path / "cell.mlir"
    payload.write_text(ONE_SITE_TWO_MATMULS)
    ops = list_dispatches(payload, CpuTarget())
    ks = sorted(
        (tuple(d.root.sizes("k")), tuple(d.graph_op.sizes("k")))
        for d in ops.dispatches
        if d.root and d.root.kind == "contraction" and d.graph_op
    )
    assert ks == [((32,), (32,)), ((64,), (64,))], ks


ZERO_POINT_CONV = """
func.func @conv_integer(%x: tensor<3x128x128xi8>, %w: tensor<192x3x16x16xi8>, %zp: i32, %acc: tensor<192x8x8xi32>) -> tensor<192x8x8xi32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 * 16 + d4, d2 * 16 + d5)>,
                                        affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d4, d5)>,
                                        affine_map<(d0, d1, d2, d3, d4, d5) -> ()>,
                                        affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zp : tensor<3x128x128xi8>, tensor<192x3x16x16xi8>, i32) outs(%acc : tensor<192x8x8xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i32, %o: i32):
    %ae = arith.extsi %a : i8 to i32
    %as = arith.subi %ae, %z : i32
    %be = arith.extsi %b : i8 to i32
    %m = arith.muli %as, %be : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<192x8x8xi32>
  return %r : tensor<192x8x8xi32>
}
"""


def test_an_op_linalg_calls_a_convolution_but_cannot_measure_is_other() -> None:
    """A dynamically quantized ViT's patch embedding (ONNX ConvInteger with a zero point)
    reaches codegen as a generic with a scalar zero-point input: linalg's convolution check
    accepts it, its dimension inference returns nothing. The op listing reads it as
    "other" (it crashed there)."""
    from tdsl.bindings import linalg_ops

    [op] = linalg_ops(ZERO_POINT_CONV)
    assert (op.kind, op.roles) == ("other", {}) and op.loop_sizes == (192, 8, 8, 3, 16, 16)


BROADCAST_BATCH_MATMUL = ROOT / "tests" / "payloads" / "cpu" / "broadcast_batch_matmul.mlir"


def test_fold_batch_matmuls_gives_graph_level_strategies_the_plain_matmul(tmp_path: Path) -> None:
    """A batch matmul whose RHS (a constant weight) is broadcast over the batch
    (nn.MultiheadAttention's input projection) is a batch matmul at the graph level, which IREE rebuilds as a matmul only
    after the graph-level strategies. With ``fold_batch_matmuls`` IREE rebuilds it first:
    the listing's graph level shows the matmul, and a panel layout on its graph matcher
    applies. The target's preprocessing passes share one pipeline flag."""
    payload = BROADCAST_BATCH_MATMUL
    target = CpuTarget(fold_batch_matmuls=True)
    [plain] = list_dispatches(payload, CpuTarget()).dispatches
    [folded] = list_dispatches(payload, target).dispatches
    assert plain.graph_op is not None and plain.graph_op.name == "linalg.batch_matmul"
    assert (
        folded.graph_op is not None and folded.graph_op.name == "linalg.matmul" and folded.graph_op.sizes("m") == [40]
    )
    layout = DataLayout(
        name="panels",
        pack=PackGreedily(matmul_packed_sizes=[0, 8, 0]),
        pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
        lower_unpack=True,
    )
    report = compile(
        payload,
        StrategySet(
            name="p", targets=[target], rules=[Rule(target="cpu", match=folded.graph_matcher, strategy=layout)]
        ),
        "cpu",
    )
    assert report.rules[0].dispatches == ("bcast_dispatch_0_matmul_like_40x12x8x48_f32",)
    both = [
        f
        for f in CpuTarget(channels_last_convs=True, fold_batch_matmuls=True).compile_flags()
        if f.startswith("--iree-preprocessing-pass-pipeline")
    ]
    assert both == [
        "--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last,iree-global-opt-convert-batch-matmul-to-matmul))"
    ]
