"""``tdsl run`` without strategies (IREE default against numpy / onnxruntime), a masked
attention whose outputs hold -inf, and f64 programs kept in f64 in every build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tdsl
from hypothesis import given, settings
from onnx_programs import einsum_f64, einsum_forms
from tdsl.cli import main
from tdsl.errors import RunFailed
from tdsl.programs.precision import F64_NOTE, KEEP_F64
from tdsl.strategies.cpu import auto

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul_pack" / "payload.mlir"
ATTENTION = (
    ROOT
    / "tests"
    / "payloads"
    / "onnx"
    / "numerics"
    / "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal_expanded"
)
ADD = """func.func @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %r = arith.addf %a, %b : tensor<8xf32>
  return %r : tensor<8xf32>
}
"""
AUTO = "from tdsl.strategies.cpu import auto\n\nstrategies = auto()\n"
MATMUL_F64 = """func.func @matmul(%a: tensor<16x32xf64>, %b: tensor<32x8xf64>) -> tensor<16x8xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<16x8xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<16x8xf64>) -> tensor<16x8xf64>
  %r = linalg.matmul ins(%a, %b : tensor<16x32xf64>, tensor<32x8xf64>) outs(%f : tensor<16x8xf64>) -> tensor<16x8xf64>
  return %r : tensor<16x8xf64>
}
"""


@pytest.mark.compile
def test_run_without_strategies_compares_iree_default_with_numpy(capsys: pytest.CaptureFixture[str]) -> None:
    report = tdsl.run(MATMUL)
    assert report.ok and report.compile_report.strategy_set is None
    assert {c.reference for f in report.functions for c in f.comparisons} == {"numpy"}
    assert "no strategies: IREE default's build compared with numpy" in report.notes
    assert main(["run", str(MATMUL)]) == 0
    assert "note: no strategies: IREE default's build compared with numpy" in capsys.readouterr().out


@pytest.mark.compile
def test_run_without_strategies_or_reference_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = tmp_path / "add.mlir"
    payload.write_text(ADD)
    assert main(["run", str(payload)]) == 0
    out = capsys.readouterr().out
    assert "no strategies and no reference: IREE default's build ran, nothing compared" in out


def test_run_help_says_what_it_compares_without_strategies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Without --strategies, compile with IREE's default pipeline only" in help_text
    assert "without it, IREE's default build is compared with onnxruntime" in help_text


@pytest.mark.compile
def test_masked_attention_with_inf_outputs_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The ONNX node test's scores output holds -inf where the causal mask masks; the build and
    onnxruntime agree there (exit 0), with and without the ready strategies."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    data = ATTENTION / "test_data_set_0"
    inputs = [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(data.glob("input_*.pb"))]
    scores = numpy_helper.to_array(onnx.load_tensor(str(data / "output_3.pb")))
    assert np.isneginf(scores).any()
    report = tdsl.run(ATTENTION / "model.onnx", inputs=inputs)
    assert report.ok and all(not c.mismatched for f in report.functions for c in f.comparisons)
    assert {c.reference for f in report.functions for c in f.comparisons} == {"onnxruntime"}
    strategy = tmp_path / "auto.py"
    strategy.write_text(AUTO)
    assert main(["run", str(ATTENTION / "model.onnx"), "--strategies", str(strategy)]) == 0
    assert "FAIL" not in capsys.readouterr().out


@pytest.mark.compile
def test_an_f64_model_keeps_f64(tmp_path: Path) -> None:
    """An f64 Einsum runs against onnxruntime at f64's tolerance; the report and a note say the
    flag was passed; the user's own flag wins (then the module wants f32 buffers)."""
    onnx = pytest.importorskip("onnx")
    model, _ = einsum_f64("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], (2, 3, 5))
    path = tmp_path / "einsum_f64.onnx"
    onnx.save(model, path)
    report = tdsl.run(path)
    assert report.ok and F64_NOTE in report.notes
    assert report.compile_report.result.program_flags == (KEEP_F64,)
    assert "program: --iree-input-demote-f64-to-f32=false (f64 kept" in report.compile_report.text()
    [check] = report.functions
    assert [(c.reference, c.tolerance) for c in check.comparisons] == [("onnxruntime", 1e-10)]
    with pytest.raises(RunFailed, match="OUT_OF_RANGE"):
        tdsl.run(path, extra_flags=["--iree-input-demote-f64-to-f32=true"])


@pytest.mark.compile
def test_every_build_of_an_f64_program_keeps_f64(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """compile (a path, no program loaded), run with strategies (both builds) and bench."""
    payload = tmp_path / "matmul_f64.mlir"
    payload.write_text(MATMUL_F64)
    report = tdsl.compile(payload, None, "cpu")
    assert report.result.program_flags == (KEEP_F64,) and report.to_json()["program_flags"] == [KEEP_F64]
    run = tdsl.run(payload, auto())
    assert run.ok and {c.reference for f in run.functions for c in f.comparisons} == {"iree-default", "numpy"}
    assert F64_NOTE in run.notes
    strategy = tmp_path / "auto.py"
    strategy.write_text(AUTO)
    assert main(["bench", str(payload), "--strategies", str(strategy), "--repetitions", "1", "--min-time", "0.01"]) == 0
    assert F64_NOTE in " ".join(capsys.readouterr().out.split())


@pytest.mark.compile
@settings(max_examples=4, deadline=None)
@given(einsum_forms())
def test_drawn_f64_einsums_match_onnxruntime(form: tuple[str, list[tuple[int, ...]], tuple[int, ...]]) -> None:
    import tempfile

    onnx = pytest.importorskip("onnx")
    equation, shapes, out = form
    model, _ = einsum_f64(equation, shapes, out)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "einsum.onnx"
        onnx.save(model, path)
        report = tdsl.run(path)
    assert report.ok and report.compile_report.result.program_flags == (KEEP_F64,)
    assert {(c.reference, c.tolerance) for f in report.functions for c in f.comparisons} == {("onnxruntime", 1e-10)}
