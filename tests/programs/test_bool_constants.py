"""Boolean constants stored as u8 at import: the rewrite over drawn masks (no compiler), and
IREE 3.13's data tiling on masked attention scores and on the GPT-2 export once it is made."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tdsl
from hypothesis import given, settings
from hypothesis import strategies as st
from tdsl.measure.numerics import RunReport
from tdsl.programs.onnx_import import import_fixes
from tdsl.strategies.cpu import auto

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _model(nodes: list[object], inputs: list[object], output: object, initializers: list[object]) -> object:
    graph = helper.make_graph(nodes, "masked", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


@st.composite
def masked_selects(draw: st.DrawFn) -> tuple[object, dict[str, np.ndarray], bool]:
    """``Where(And(mask, bool(valid)), x, -inf)`` of a drawn rank and shape; the constant
    mask (broadcast over leading dimensions) an initializer or a ``Constant`` node, stored as raw
    bytes or as ``int32_data``."""
    shape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    mask_rank = draw(st.integers(1, len(shape)))
    mask_shape = [draw(st.sampled_from([1, d])) for d in shape[-mask_rank:]]
    seed = draw(st.integers(0, 2**16))
    as_node, raw = draw(st.booleans()), draw(st.booleans())
    rng = np.random.default_rng(seed)
    values = rng.random(mask_shape) < 0.5
    # raw bytes, or one int32_data entry an element
    mask = (
        numpy_helper.from_array(values, "mask")
        if raw
        else helper.make_tensor("mask", TensorProto.BOOL, mask_shape, values.ravel().tolist())
    )
    nodes = [helper.make_node("Constant", [], ["mask"], value=mask)] if as_node else []
    nodes += [
        helper.make_node("Cast", ["valid"], ["valid_bool"], to=TensorProto.BOOL),
        helper.make_node("And", ["mask", "valid_bool"], ["keep"]),
        helper.make_node("Where", ["keep", "x", "neg"], ["y"]),
    ]
    initializers = [numpy_helper.from_array(np.array(-np.inf, np.float32), "neg")]
    model = _model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
            helper.make_tensor_value_info("valid", TensorProto.INT64, shape),
        ],
        helper.make_tensor_value_info("y", TensorProto.FLOAT, shape),
        initializers if as_node else [*initializers, mask],
    )
    feeds = {"x": rng.standard_normal(shape).astype(np.float32), "valid": rng.integers(0, 2, shape)}
    return model, feeds, int(np.prod(mask_shape)) > 1


@settings(max_examples=60, deadline=None)
@given(masked_selects())
def test_the_rewritten_graph_selects_the_same_values(case: tuple[object, dict[str, np.ndarray], bool]) -> None:
    """Every boolean constant of more than one element is u8 after the rewrite (a note names
    it), the rewritten graph is valid ONNX and its outputs equal the original's bit for bit;
    a one-element mask is left alone."""
    from onnx.reference import ReferenceEvaluator

    model, feeds, rewritten = case
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    notes = import_fixes(fixed)
    constants = [*fixed.graph.initializer, *(a.t for n in fixed.graph.node for a in n.attribute if a.name == "value")]
    bools = [t for t in constants if t.data_type == TensorProto.BOOL]
    if not rewritten:
        assert notes == [] and fixed == model
        return
    assert bools == [] and notes == [
        "1 boolean constants stored as u8 and cast to bool where read: mask "
        "(IREE 3.13's data tiling cannot encode an i1 tensor)"
    ]
    onnx.checker.check_model(fixed, full_check=True)
    [want] = ReferenceEvaluator(model).run(None, feeds)
    [got] = ReferenceEvaluator(fixed).run(None, feeds)
    assert np.array_equal(got, want)


def test_an_initializer_listed_as_an_input_stays_a_constant() -> None:
    """IR version 3 lists initializers among the inputs: the rewritten one is listed under its
    u8 name and type, so it does not become an argument."""
    mask = numpy_helper.from_array(np.eye(3, dtype=bool), "mask")
    graph = helper.make_graph(
        [helper.make_node("Not", ["mask"], ["y"])],
        "old",
        [helper.make_tensor_value_info("mask", TensorProto.BOOL, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [3, 3])],
        [mask],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 3
    assert len(import_fixes(model)) == 1
    [value] = model.graph.input
    [tensor] = model.graph.initializer
    assert value.name == tensor.name == "mask_tdsl_u8" and value.type.tensor_type.elem_type == TensorProto.UINT8
    assert [(n.op_type, list(n.input), list(n.output)) for n in model.graph.node] == [
        ("Cast", ["mask_tdsl_u8"], ["mask"]),
        ("Not", ["mask"], ["y"]),
    ]


def _masked_scores(path: Path) -> Path:
    """GPT-2's masked attention scores at odd sizes: ``Q @ K^T`` (3 heads, 24 x 40) plus
    ``Where(causal & bool(valid), 0, min)``, the causal mask a ``Constant``, then softmax."""
    causal = numpy_helper.from_array(np.tril(np.ones((24, 40), bool), k=16), "causal")
    nodes = [
        helper.make_node("Constant", [], ["causal"], value=causal),
        helper.make_node("MatMul", ["q", "k"], ["scores"]),
        helper.make_node("Cast", ["valid"], ["valid_bool"], to=TensorProto.BOOL),
        helper.make_node("And", ["causal", "valid_bool"], ["keep"]),
        helper.make_node("Where", ["keep", "zero", "lowest"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
    ]
    lowest = np.array(np.finfo(np.float32).min, np.float32)
    model = _model(
        nodes,
        [
            helper.make_tensor_value_info("q", TensorProto.FLOAT, [3, 24, 16]),
            helper.make_tensor_value_info("k", TensorProto.FLOAT, [3, 16, 40]),
            helper.make_tensor_value_info("valid", TensorProto.INT64, [1, 40]),
        ],
        helper.make_tensor_value_info("probs", TensorProto.FLOAT, [3, 24, 40]),
        [numpy_helper.from_array(np.array(0, np.float32), "zero"), numpy_helper.from_array(lowest, "lowest")],
    )
    onnx.save(model, path)
    return path


def _fell_back(report: RunReport) -> list[str]:
    return [n for n in report.compile_report.notes if "data tiling" in n]


@pytest.mark.compile
def test_data_tiling_compiles_masked_scores_and_matches_onnxruntime(tmp_path: Path) -> None:
    """auto() keeps data tiling (no note that it was dropped) on scores masked by a boolean
    constant, and the result matches IREE's default build and onnxruntime."""
    report = tdsl.run(_masked_scores(tmp_path / "masked.onnx"), auto())
    assert _fell_back(report) == [] and report.ok
    assert any(k.field == "data_tiling" for k in report.compile_report.knobs)
    compared = {c.reference for f in report.functions for c in f.comparisons}
    assert compared == {"iree-default", "onnxruntime"}


@pytest.mark.compile
def test_gpt2_runs_with_data_tiling() -> None:
    """The GPT-2 export (a 1x1x32x32 boolean causal mask) builds with auto()'s data tiling and
    matches onnxruntime."""
    report = tdsl.run(ROOT / "examples" / "models" / "gpt2" / "model.onnx", auto())
    assert _fell_back(report) == [] and report.ok
    assert any(k.field == "data_tiling" for k in report.compile_report.knobs)
    assert any(n.startswith("1 boolean constants stored as u8") for n in report.notes)
