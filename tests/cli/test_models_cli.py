"""Frontend programs in every command: .onnx models (imported with iree-import-onnx, weights
drawn from a seed) through `tdsl ops`, `ops --emit`, `run` (with onnxruntime as a
reference) and `bench` (with onnxruntime timed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tdsl import load
from tdsl.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
MODELS = ROOT / "examples" / "models"
CPU_AUTO = ROOT / "examples" / "cpu_auto" / "strategy.py"
pytestmark = pytest.mark.compile


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "onnx-cache"))


def test_ops_lists_launches_and_matchers_of_an_onnx_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ops", str(MODELS / "gpt2_block" / "model.onnx"), "--target", "cpu", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    # every executable runs per call or, a weight packed by data tiling, once at load
    assert listing["launches"] + listing["launches_at_load"] >= listing["executables"] > 5
    contractions = [d for d in listing["dispatches"] if d["root"] and d["root"]["kind"] == "contraction"]
    assert contractions and all(d["codegen_matcher"]["kind"] == "contraction" for d in contractions)
    # ONNX MatMul of a 3-D activation by a 2-D weight: a batch-1 batch_matmul at the graph level
    assert any(
        d["graph_op"] and d["graph_op"]["op"] == "linalg.batch_matmul" and d["graph_op"]["roles"]["batch"] == [1]
        for d in contractions
    )


def test_ops_emit_covers_every_contraction_on_gfx942(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ops --emit` writes the rules of the committed examples/models/bert/gfx942.py, whose
    strict gfx942 compile applies to every contraction and convolution dispatch
    (tests/strategies/test_model_examples.py); `ops --emit` then `compile --strict --json`
    through the CLI is tests/strategies/test_ops_emit_gpu.py on resnet."""
    model = MODELS / "bert" / "model.onnx"
    emitted = tmp_path / "bert_gfx942.py"
    assert main(["ops", str(model), "--target", "gfx942", "--emit", str(emitted), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    strategies = load(emitted)
    assert strategies.rules == load(MODELS / "bert" / "gfx942.py").rules
    contractions = {d["dispatch"] for d in listing["dispatches"] if d["root"] and d["root"]["kind"] == "contraction"}
    assert contractions and len(strategies.rules) < len(contractions)  # ops of one shape share a rule


def test_run_an_onnx_model_against_onnxruntime(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(MODELS / "gpt2_block" / "model.onnx"), "--strategies", str(CPU_AUTO), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    references = {c["reference"] for f in report["functions"] for c in f["comparisons"]}
    assert {"iree-default", "onnxruntime"} <= references and report["ok"]
    assert any("drawn from seed" in note for note in report["notes"])


def test_bench_an_onnx_model_times_the_peer_runtimes(capsys: pytest.CaptureFixture[str]) -> None:
    from tdsl.measure.peers import installed_peers

    args = [
        "bench",
        str(MODELS / "resnet" / "model.onnx"),
        "--strategies",
        str(CPU_AUTO),
        "--compare",
        "again=" + str(CPU_AUTO),
        "--repetitions",
        "1",
        "--min-time",
        "0.01",
        "--no-numpy",
        "--json",
    ]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    peers = set(installed_peers())
    assert "onnxruntime" in peers
    variants = {"strategy", "again", "iree-default", "iree-data-tiling"}
    assert {r["variant"] for r in report["rows"]} == variants | peers
    [verdict] = report["peers"]
    faster = min((r for r in report["rows"] if r["variant"] in peers), key=lambda r: r["median_ms"])
    assert verdict["faster_peer"] == faster["variant"] and verdict["threads"] == 1
    strategy = next(r for r in report["rows"] if r["variant"] == "strategy")
    assert verdict["speedup_of_strategy"] == pytest.approx(faster["median_ms"] / strategy["median_ms"])
    # GFLOP/s of a frontend program: its convolutions and Gemm, counted on IREE's linalg form
    # of the model, agree with the ONNX graph's own shapes.
    flops = _onnx_flops(MODELS / "resnet" / "model.onnx")
    for row in report["rows"]:
        assert row["gflops"] == pytest.approx(flops / (row["median_ms"] * 1e-3) / 1e9, rel=1e-6)


def _onnx_flops(path: Path) -> float:
    """2 x multiply-adds of the model's Conv, Gemm and MatMul nodes, from ONNX shape inference."""
    import math

    import onnx

    model = onnx.shape_inference.infer_shapes(onnx.load(str(path), load_external_data=False))
    shapes = {i.name: list(i.dims) for i in model.graph.initializer}
    for v in [*model.graph.value_info, *model.graph.input, *model.graph.output]:
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    total = 0.0
    for node in model.graph.node:
        if node.op_type == "Conv":
            weight, out = shapes[node.input[1]], shapes[node.output[0]]
            total += 2.0 * math.prod(out) * math.prod(weight[1:])  # per output: C_in / group x kernel
        elif node.op_type in ("Gemm", "MatMul"):
            a, out = shapes[node.input[0]], shapes[node.output[0]]
            trans_a = any(attr.name == "transA" and attr.i for attr in node.attribute)
            total += 2.0 * math.prod(out) * (a[-2] if trans_a else a[-1])
    assert total > 0
    return total
