"""auto()'s program knobs are optional: where IREE fails with them (IREE 3.13's data tiling
cannot encode an i1 mask that is a graph input; tdsl stores constant masks as u8), every command builds without them and says so; a knob the user set
stays an error naming how to turn it off; reports show the knobs in force."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save
from tdsl import StrategySet, compile
from tdsl.cli import main
from tdsl.compiler.iree_compile import CompileFailed
from tdsl.compiler.ops import list_dispatches
from tdsl.strategies.cpu import auto
from tdsl.targets import CpuTarget

pytestmark = pytest.mark.compile


@pytest.fixture(autouse=True)
def _failure_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_FAILURE_DIR", str(tmp_path_factory.mktemp("failures")))


@pytest.fixture(scope="module")
def masked_attention(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """softmax(where(bool mask, q @ k, -inf)) @ v, the mask a graph input (a padding mask
    passed by the caller)."""
    ninf = numpy_helper.from_array(np.array(-np.inf, dtype=np.float32), "ninf")
    nodes = [
        helper.make_node("MatMul", ["q", "k"], ["s"]),
        helper.make_node("Constant", [], ["ninf"], value=ninf),
        helper.make_node("Where", ["mask", "s", "ninf"], ["m"]),
        helper.make_node("Softmax", ["m"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["out"]),
    ]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "masked_attention",
        [
            helper.make_tensor_value_info("q", f32, [2, 4, 8]),
            helper.make_tensor_value_info("k", f32, [2, 8, 6]),
            helper.make_tensor_value_info("v", f32, [2, 6, 8]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, [4, 6]),
        ],
        [helper.make_tensor_value_info("out", f32, [2, 4, 8])],
    )
    path = tmp_path_factory.mktemp("masked") / "model.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _mlir(masked_attention: Path) -> Path:
    from tdsl.programs.load import load_program

    return load_program(masked_attention).mlir_path


def test_auto_builds_without_its_knobs_where_iree_fails_with_them(masked_attention: Path, tmp_path: Path) -> None:
    report = compile(_mlir(masked_attention), auto(isa="avx2"), "cpu", tmp_path / "m.vmfb")
    assert report.output is not None and report.output.is_file()
    [note] = report.notes
    assert note.startswith("built without ") and "data tiling" in note and "auto(), AVX2" in note
    assert "'linalg.pack' op expected padding_value" in note  # IREE's error, as it was
    assert report.knobs == ()  # what was built: IREE's defaults
    assert "program: IREE's defaults" in report.text()
    data = report.to_json()
    assert data["program_knobs"] == [] and data["notes"] == [note]


def test_a_knob_the_user_set_stays_an_error_naming_how_to_turn_it_off(masked_attention: Path) -> None:
    mine = StrategySet(name="mine", targets=[CpuTarget(data_tiling=True)], rules=[])
    with pytest.raises(
        CompileFailed,
        match=r"data tiling on \(turn off: data_tiling=False or --iree-flag=--iree-opt-data-tiling=false\)",
    ):
        compile(_mlir(masked_attention), mine, "cpu")


def test_ops_lists_first_and_its_coverage_build_falls_back(masked_attention: Path) -> None:
    listing = list_dispatches(_mlir(masked_attention), "cpu", ready=auto(isa="avx2"))
    assert listing.dispatches
    [note] = listing.notes
    assert note.startswith("coverage of cpu_auto: built without ")


def test_cli_reports_program_knobs_with_their_origin(
    masked_attention: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compile", str(masked_attention), "--strategies", "auto()", "--target", "cpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"] and "data tiling" in data["notes"][0]
    assert main(["run", str(masked_attention), "--strategies", "auto()", "-q"]) == 0
    out = capsys.readouterr().out
    assert "note: built without" in out and "vs onnxruntime" in out


def test_cli_says_which_knobs_a_build_had(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = tmp_path / "mm.mlir"
    payload.write_text(
        "func.func @mm(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
        "  %z = arith.constant 0.0 : f32\n"
        "  %e = tensor.empty() : tensor<64x64xf32>\n"
        "  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>\n"
        "  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>\n"
        "  return %r : tensor<64x64xf32>\n"
        "}\n"
    )
    assert main(["compile", str(payload), "--strategies", "auto()", "--target", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "program: " in out and "data tiling on (auto(), " in out and "--iree-opt-data-tiling" in out
    assert "IREE's default pipeline)" not in out  # the build is not IREE default's


def test_auto_spec_needs_a_target_with_a_ready_set(masked_attention: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(masked_attention), "--strategies", "auto()", "--target", "gfx942"]) == 2
    assert "--strategies auto(): expected a target whose kind has a ready set" in capsys.readouterr().err
