"""Quantized and integer ONNX models as frontends write them, built with the ``onnx`` helper
API (no torch, no network): the node order and initializer names of onnxruntime's
quantization tools (``quantize_static`` in QOperator format, ``quantize_dynamic``).

* :func:`qlinear_matmul`: ``QLinearMatMul`` of a quantized activation (a graph input, u8 or
  i8, 2-D or 3-D) by a constant weight (2-D, or batched: 3-D); scales and zero points are
  initializers; the quantized result is the graph output.
* :func:`static_linear`: ``QuantizeLinear -> QLinearMatMul -> DequantizeLinear`` on a float
  input (``quantize_static``) beside a float ``MatMul`` of the same input left unquantized.
* :func:`matmul_integer`: ``MatMulInteger`` of an activation input by a constant weight,
  with or without zero points (the activation's zero point a graph input).
* :func:`dynamic_linear`: ``DynamicQuantizeLinear + MatMulInteger + Cast + Mul``
  (``quantize_dynamic``: u8 activation, i8 weight) beside a float ``MatMul``.

``python tests/quantized_models.py`` writes the small models of ``SMALL`` to
``tests/payloads/onnx/``; the benchmark shapes are built the same way with other sizes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

OPSET = 17
HERE = Path(__file__).resolve().parent
PAYLOADS = HERE / "payloads" / "onnx"


def _onnx() -> Any:
    import onnx

    return onnx


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], initializers: list[Any], name: str) -> Any:
    from onnx import helper

    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tdsl-tests")
    model.ir_version = 8
    _onnx().checker.check_model(model)
    return model


def _tensor(name: str, values: np.ndarray) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(values), name)


def _quantized(rng: np.random.Generator, dtype: Any, shape: Sequence[int]) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=tuple(shape), endpoint=True).astype(dtype)


def _zero_point(dtype: Any) -> np.ndarray:
    return np.array(128 if np.dtype(dtype) == np.uint8 else 0, dtype=dtype)


def qlinear_matmul(dtype: Any, lhs: Sequence[int], n: int, seed: int = 0, weight_batch: Sequence[int] = ()) -> Any:
    """``y = QLinearMatMul(a, a_scale, a_zero_point, W, W_scale, W_zero_point, y_scale,
    y_zero_point)``: ``a`` (``lhs`` shape, u8 or i8) an input, the rest initializers, ``W``
    of shape ``(*weight_batch, k, n)``; the output scale keeps the result mostly inside the
    type's range."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(seed)
    k = lhs[-1]
    elem = T.UINT8 if np.dtype(dtype) == np.uint8 else T.INT8
    zp = _zero_point(dtype)
    a_scale, w_scale = np.float32(0.02), np.float32(0.004)
    # a product of two values ~U(-128, 127) summed over k has spread ~ 128^2 sqrt(k/9)
    y_scale = np.float32(a_scale * w_scale * 128 * 128 * np.sqrt(k / 9.0) / 48.0)
    inits = [
        _tensor("a_scale", a_scale),
        _tensor("a_zero_point", zp),
        _tensor("W_quantized", _quantized(rng, dtype, (*weight_batch, k, n))),
        _tensor("W_scale", w_scale),
        _tensor("W_zero_point", zp),
        _tensor("y_scale", y_scale),
        _tensor("y_zero_point", zp),
    ]
    node = helper.make_node(
        "QLinearMatMul",
        ["a", "a_scale", "a_zero_point", "W_quantized", "W_scale", "W_zero_point", "y_scale", "y_zero_point"],
        ["y"],
        name="QLinearMatMul_0",
    )
    out = [*np.broadcast_shapes(tuple(lhs[:-2]), tuple(weight_batch)), lhs[-2], n]
    return _model(
        [node],
        [helper.make_tensor_value_info("a", elem, list(lhs))],
        [helper.make_tensor_value_info("y", elem, out)],
        inits,
        "qlinear_matmul",
    )


def static_linear(m: int, k: int, n: int, seed: int = 0) -> Any:
    """``quantize_static`` (QOperator, u8): ``QuantizeLinear(x) -> QLinearMatMul ->
    DequantizeLinear`` gives ``y``; the float ``MatMul(x, W_float)`` beside it gives ``z``."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(seed)
    x_scale, w_scale = np.float32(2.0 / 255), np.float32(0.008)
    y_scale = np.float32(x_scale * w_scale * 128 * 64 * np.sqrt(k / 3.0) / 48.0)
    zp = np.array(128, np.uint8)
    inits = [
        _tensor("x_zero_point", zp),
        _tensor("x_scale", x_scale),
        _tensor("W_scale", w_scale),
        _tensor("W_zero_point", zp),
        _tensor("W_quantized", _quantized(rng, np.uint8, (k, n))),
        _tensor("y_zero_point", zp),
        _tensor("y_scale", y_scale),
        _tensor("W_float", rng.uniform(-0.1, 0.1, size=(k, n)).astype(np.float32)),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero_point"], ["x_quantized"], name="x_QuantizeLinear"),
        helper.make_node(
            "QLinearMatMul",
            [
                "x_quantized",
                "x_scale",
                "x_zero_point",
                "W_quantized",
                "W_scale",
                "W_zero_point",
                "y_scale",
                "y_zero_point",
            ],
            ["y_quantized"],
            name="MatMul_quant",
        ),
        helper.make_node(
            "DequantizeLinear", ["y_quantized", "y_scale", "y_zero_point"], ["y"], name="y_DequantizeLinear"
        ),
        helper.make_node("MatMul", ["x", "W_float"], ["z"], name="MatMul_float"),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", T.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", T.FLOAT, [m, n]), helper.make_tensor_value_info("z", T.FLOAT, [m, n])],
        inits,
        "static_linear",
    )


def matmul_integer(lhs: Sequence[int], n: int, zero_points: bool, weight: Any = np.uint8, seed: int = 0) -> Any:
    """``y = MatMulInteger(A, B[, a_zero_point, B_zero_point])``: ``A`` (u8) an input, ``B``
    (``weight``: u8 or i8) a constant; with zero points ``a_zero_point`` (u8, a scalar) is a
    graph input beside A and ``B_zero_point`` an initializer."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(seed)
    k = lhs[-1]
    inputs = [helper.make_tensor_value_info("A", T.UINT8, list(lhs))]
    inits = [_tensor("B", _quantized(rng, weight, (k, n)))]
    if zero_points:
        inputs.append(helper.make_tensor_value_info("a_zero_point", T.UINT8, []))
        inits.append(_tensor("B_zero_point", np.array(3, weight)))
        node = helper.make_node(
            "MatMulInteger", ["A", "B", "a_zero_point", "B_zero_point"], ["y"], name="MatMulInteger_0"
        )
    else:
        node = helper.make_node("MatMulInteger", ["A", "B"], ["y"], name="MatMulInteger_0")
    return _model(
        [node], inputs, [helper.make_tensor_value_info("y", T.INT32, [*lhs[:-1], n])], inits, "matmul_integer"
    )


def dynamic_linear(m: int, k: int, n: int, float_branch: bool = True, seed: int = 0) -> Any:
    """``quantize_dynamic`` (u8 activation, i8 weight): ``DynamicQuantizeLinear(x)``,
    ``Mul(x_scale, W_scale)``, ``MatMulInteger``, ``Cast`` to float, ``Mul`` give ``y``; the
    float ``MatMul(x, W_float)`` beside it (a node left out of quantization) gives ``z``."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(seed)
    inits = [
        _tensor("W_scale", np.float32(0.004)),
        _tensor("W_zero_point", np.array(0, np.int8)),
        _tensor("W_quantized", _quantized(rng, np.int8, (k, n))),
        _tensor("W_float", rng.uniform(-0.1, 0.1, size=(k, n)).astype(np.float32)),
    ]
    nodes = [
        helper.make_node(
            "DynamicQuantizeLinear", ["x"], ["x_quantized", "x_scale", "x_zero_point"], name="x_QuantizeLinear"
        ),
        helper.make_node("Mul", ["x_scale", "W_scale"], ["x_scale_W_scale_mul:0"], name="MatMul_quant_scales_mul"),
        helper.make_node(
            "MatMulInteger",
            ["x_quantized", "W_quantized", "x_zero_point", "W_zero_point"],
            ["y_output_quantized"],
            name="MatMul_quant",
        ),
        helper.make_node(
            "Cast",
            ["y_output_quantized"],
            ["y_output_quantized_cast_output"],
            to=T.FLOAT,
            name="MatMul_quant_output_quantized_cast",
        ),
        helper.make_node(
            "Mul",
            ["y_output_quantized_cast_output", "x_scale_W_scale_mul:0"],
            ["y"],
            name="MatMul_quant_output_scale_mul",
        ),
        helper.make_node("MatMul", ["x", "W_float"], ["z"], name="MatMul_float"),
    ]
    outputs = [helper.make_tensor_value_info("y", T.FLOAT, [m, n]), helper.make_tensor_value_info("z", T.FLOAT, [m, n])]
    if not float_branch:
        nodes, outputs, inits = nodes[:-1], outputs[:1], inits[:-1]
    return _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT, [m, k])], outputs, inits, "dynamic_linear")


SMALL: dict[str, Callable[[], Any]] = {
    "qlinear_matmul_u8": lambda: qlinear_matmul(np.uint8, (16, 64), 32),
    "qlinear_matmul_i8_3d": lambda: qlinear_matmul(np.int8, (2, 8, 64), 48),
    "qlinear_matmul_u8_batched": lambda: qlinear_matmul(np.uint8, (2, 8, 64), 32, weight_batch=(2,)),
    "static_linear_u8": lambda: static_linear(16, 64, 32),
    "matmul_integer": lambda: matmul_integer((16, 64), 32, zero_points=False),
    "matmul_integer_zp": lambda: matmul_integer((2, 8, 64), 32, zero_points=True, weight=np.int8),
    "dynamic_linear": lambda: dynamic_linear(16, 64, 32),
}
"""The committed models of ``tests/payloads/onnx/`` (name -> builder)."""

BENCH: dict[str, Callable[[], Any]] = {
    "qlinear_matmul_u8_64x256x1024": lambda: qlinear_matmul(np.uint8, (64, 256), 1024),
    "matmul_integer_u8i8_128x768x768": lambda: matmul_integer((128, 768), 768, zero_points=False, weight=np.int8),
    "matmul_integer_zp_128x768x768": lambda: matmul_integer((128, 768), 768, zero_points=True, weight=np.int8),
    "dynamic_linear_128x768x768": lambda: dynamic_linear(128, 768, 768, float_branch=False),
}
"""The shapes measured for ``tdsl.strategies.cpu.quantized`` (constant weights)."""


def write(directory: Path = PAYLOADS, models: dict[str, Callable[[], Any]] = SMALL) -> list[Path]:
    """Writes each model of ``models`` to ``directory/<name>.onnx``."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in models.items():
        path = directory / f"{name}.onnx"
        _onnx().save(build(), str(path))
        written.append(path)
    return written


if __name__ == "__main__":
    bench = "--bench" in sys.argv
    paths = [a for a in sys.argv[1:] if a != "--bench"]
    for written in write(Path(paths[0]) if paths else PAYLOADS, BENCH if bench else SMALL):
        print(written)
