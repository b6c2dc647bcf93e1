"""Generated ONNX programs of the forms real models hold and IREE's defaults get wrong, built
with the ``onnx`` helper API (no torch, no network), each with an exact numpy reference.

* :func:`qlinear_matmul_form`: one ``QLinearMatMul`` of any form: operands of rank 2-4 with
  batch dimensions that match or broadcast, the weight a graph input or an initializer,
  per-tensor, per-row (activation) or per-column (weight) scales and zero points; u8 or i8.
  :func:`qlinear_reference` computes it exactly (integer product, rounding half to even).
* :func:`einsum_f64`: one ``Einsum`` on f64 inputs (what IREE demotes to f32 by default).
* :func:`qlinear_forms` / :func:`einsum_forms` / :func:`special_pairs`: hypothesis
  strategies drawing the forms above, and pairs of float arrays with NaN and infinities on
  one or both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from hypothesis import strategies as st

OPSET = 21


@dataclass(frozen=True)
class QForm:
    """A QLinearMatMul form: operand shapes, the element type, how A's and B's parameters
    are quantized (``"tensor"``, ``"row"`` for A, ``"column"`` for B) and whether B is an
    initializer (a weight)."""

    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    dtype: str = "uint8"
    a_params: str = "tensor"
    b_params: str = "tensor"
    b_weight: bool = False

    @property
    def name(self) -> str:
        shapes = "x".join("_".join(map(str, s)) for s in (self.a_shape, self.b_shape))
        weight = "_weight" if self.b_weight else ""
        return f"{shapes}_{self.dtype}_a{self.a_params}_b{self.b_params}{weight}"


def _params(rng: np.random.Generator, dtype: Any, count: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A scale and a zero point: scalars, or ``count`` of each."""
    info = np.iinfo(dtype)
    middle = (int(info.min) + int(info.max) + 1) // 2
    shape = () if count is None else (count,)
    scale = rng.uniform(0.01, 0.05, shape).astype(np.float32)
    zero = rng.integers(middle - 8, middle + 8, shape).astype(dtype)
    return scale, zero


def qlinear_matmul_form(form: QForm, seed: int = 0) -> tuple[Any, dict[str, np.ndarray]]:
    """The model computing ``y = QLinearMatMul(a, ..., b, ...)`` in ``form`` and its inputs
    (``a``, and ``b`` unless it is a weight); scales and zero points are initializers."""
    from onnx import TensorProto, checker, helper, numpy_helper

    rng = np.random.default_rng(seed)
    dtype = np.dtype(form.dtype)
    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    info = np.iinfo(dtype)
    a_scale, a_zero = _params(rng, dtype, form.a_shape[-2] if form.a_params == "row" else None)
    b_count = form.b_shape[-1] if form.b_params == "column" else None
    b_scale, b_zero = _params(rng, dtype, b_count)
    y_scale = np.float32(a_scale.max() * b_scale.max() * 64 * np.sqrt(form.a_shape[-1]) / 48)
    y_zero = _params(rng, dtype, None)[1]
    a = rng.integers(info.min, info.max, form.a_shape, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, form.b_shape, endpoint=True).astype(dtype)
    values = {"a_scale": a_scale, "a_zero_point": a_zero, "b_scale": b_scale, "b_zero_point": b_zero}
    values |= {"y_scale": y_scale, "y_zero_point": y_zero}
    if form.b_weight:
        values["b"] = b
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in values.items()]
    inputs = [helper.make_tensor_value_info("a", elem, list(form.a_shape))]
    if not form.b_weight:
        inputs.append(helper.make_tensor_value_info("b", elem, list(form.b_shape)))
    out = np.broadcast_shapes(form.a_shape[:-2], form.b_shape[:-2]) + (form.a_shape[-2], form.b_shape[-1])
    node = helper.make_node(
        "QLinearMatMul",
        ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"],
        ["y"],
        name="qlinear_matmul",
    )
    graph = helper.make_graph(
        [node], "main_graph", inputs, [helper.make_tensor_value_info("y", elem, list(out))], initializer=inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tdsl-tests")
    model.ir_version = 10
    checker.check_model(model, full_check=True)
    feeds = {"a": a} if form.b_weight else {"a": a, "b": b}
    return model, feeds


def qlinear_reference(model: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """The exact result of the model's one QLinearMatMul: the integer product of the
    zero-point-shifted operands, scaled, rounded half to even, saturated."""
    from onnx import numpy_helper

    v = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer} | feeds
    a_zero, a_scale = (v[k].astype(np.float64) for k in ("a_zero_point", "a_scale"))
    if a_zero.ndim == 1:  # per-row: one per row of A
        a_zero, a_scale = a_zero.reshape(-1, 1), a_scale.reshape(-1, 1)
    product = np.matmul(v["a"].astype(np.float64) - a_zero, v["b"].astype(np.float64) - v["b_zero_point"])
    scale = a_scale * v["b_scale"].astype(np.float64) / np.float64(v["y_scale"])
    y = np.rint(product * scale) + v["y_zero_point"].astype(np.float64)
    info = np.iinfo(v["a"].dtype)
    return np.clip(y, info.min, info.max).astype(v["a"].dtype)


def einsum_f64(
    equation: str, shapes: Sequence[Sequence[int]], out: Sequence[int], seed: int = 0
) -> tuple[Any, list[np.ndarray]]:
    """``y = Einsum(x0, x1, ..)`` on f64 inputs of ``shapes`` and the inputs."""
    from onnx import TensorProto, checker, helper

    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    graph = helper.make_graph(
        [node],
        "main_graph",
        [helper.make_tensor_value_info(n, TensorProto.DOUBLE, list(s)) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, list(out))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tdsl-tests")
    model.ir_version = 8
    checker.check_model(model, full_check=True)
    return model, [rng.uniform(-1, 1, s) for s in shapes]


# --------------------------------------------------------------------------------------
# Hypothesis strategies.


@st.composite
def qlinear_forms(draw: st.DrawFn) -> QForm:
    """A QLinearMatMul form: ranks 2-4, batch dimensions equal or broadcast (a 1 on
    either side, or missing), every parameter quantization, u8 or i8, B an input or a weight."""
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a_batch = [draw(st.sampled_from([d, 1])) for d in batch][draw(st.integers(0, len(batch))) :]
    b_batch = [draw(st.sampled_from([d, 1])) for d in batch][draw(st.integers(0, len(batch))) :]
    return QForm(
        (*a_batch, m, k),
        (*b_batch, k, n),
        draw(st.sampled_from(["uint8", "int8"])),
        draw(st.sampled_from(["tensor", "row"])),
        draw(st.sampled_from(["tensor", "column"])),
        draw(st.booleans()),
    )


@st.composite
def einsum_forms(draw: st.DrawFn) -> tuple[str, list[tuple[int, ...]], tuple[int, ...]]:
    """An f64 Einsum: (equation, input shapes, output shape) of a (batched) matmul, a
    transpose, a reduction or an inner product, sizes 1-5."""
    size = {letter: draw(st.integers(1, 5)) for letter in "bijk"}
    equation = draw(st.sampled_from(["ij,jk->ik", "bij,bjk->bik", "bij,jk->bik", "ij->ji", "bij->bj", "i,i->"]))
    operands, result = equation.split("->")
    shapes = [tuple(size[c] for c in term) for term in operands.split(",")]
    return equation, shapes, tuple(size[c] for c in result)


SPECIALS = (np.nan, np.inf, -np.inf)


@st.composite
def special_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A build's result and a reference of the same shape, close where finite, with NaN and
    infinities placed on both sides at the same positions, on one side only, or both with
    different kinds."""
    size = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ref = rng.uniform(-4, 4, size)
    out = ref + rng.uniform(-1e-6, 1e-6, size)
    for i in draw(st.lists(st.integers(0, size - 1), max_size=size, unique=True)):
        where = draw(st.sampled_from(["both", "build", "reference", "different"]))
        first, second = draw(st.sampled_from(SPECIALS)), draw(st.sampled_from(SPECIALS))
        if where in ("both", "build", "different"):
            out[i] = first
        if where == "both":
            ref[i] = first
        elif where == "reference":
            ref[i] = second
        elif where == "different":
            ref[i] = second
    return out.astype(np.float32), ref.astype(np.float32)
