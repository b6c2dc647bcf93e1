"""``tdsl ops`` on dynamic-shape programs (issue 38): without ``--dim`` the program is
listed with its dynamic dimensions left dynamic, each a ``-1`` in the matchers (``dims_equal``
takes -1), and a note says how to get a static build; a command that runs the program
(``ops --profile``) still refuses a dynamic dimension in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tdsl.cli import main
from tdsl.programs.load import DYNAMIC_NOTE, load_program

ROOT = Path(__file__).resolve().parent.parent.parent
MATMUL = ROOT / "tests" / "payloads" / "import" / "matmul_Dx1024x1280_f32.mlir"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path / "cache"))


def _dynamic_onnx(path: Path) -> Path:
    """A MatMul of a ``batch`` x 64 input by 64x32 weights, as exporters write a dynamic batch."""
    onnx = pytest.importorskip("onnx", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.ones((64, 32), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 32])],
        [weights],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_a_listed_program_keeps_its_dynamic_dimensions(tmp_path: Path, cache: Any) -> None:
    program = load_program(MATMUL, dynamic=True)
    assert program.notes == (DYNAMIC_NOTE,)
    assert program.functions[0].inputs[0].shape == (None, 1280)
    onnx_program = load_program(_dynamic_onnx(tmp_path / "dyn.onnx"), dynamic=True)
    assert DYNAMIC_NOTE in onnx_program.notes and onnx_program.functions[0].inputs[0].shape == (None, 64)


@pytest.mark.compile
def test_ops_lists_a_dynamic_matmul_with_minus_one(capsys: pytest.CaptureFixture[str], cache: Any) -> None:
    assert main(["ops", str(MATMUL), "--target", "cpu", "--no-ready"]) == 0
    out = capsys.readouterr().out
    assert "codegen: linalg.matmul [mnk] -1x1280xf32, 1280x1024xf32 -> -1x1024xf32" in out
    assert 'operand_layout="mk_kn", batch=[], m=[-1], n=[1024], k=[1280])' in out
    assert f"note: {DYNAMIC_NOTE}" in out


@pytest.mark.compile
def test_ops_lists_a_dynamic_batch_onnx_model(tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: Any) -> None:
    assert main(["ops", str(_dynamic_onnx(tmp_path / "dyn.onnx")), "--target", "cpu", "--no-ready"]) == 0
    out = capsys.readouterr().out
    assert "m=[-1], n=[32], k=[64]" in out and f"note: {DYNAMIC_NOTE}" in out


def test_ops_profile_still_refuses_a_dynamic_dimension(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ops", str(MATMUL), "--target", "cpu", "--profile"]) == 2
    err = capsys.readouterr().err.strip()
    assert "dynamic shapes are not supported" in err and "\n" not in err
