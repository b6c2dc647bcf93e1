"""Weights stripped by ``examples/models/export.py``, drawn again from a seed (:func:`refill_weights`)."""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..errors import ArgumentError

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx

STRIP_MARKER = "tdsl.stripped"
"""The ``doc_string`` prefix of an initializer whose data was removed; a JSON recipe follows."""
REFILLED_MARKER = "tdsl.refilled"


def _recipe_values(
    recipe: Mapping[str, float], shape: Sequence[int], dtype: npt.DTypeLike, rng: np.random.Generator
) -> np.ndarray:
    if "value" in recipe:
        return np.full(shape, recipe["value"], dtype=dtype)
    drawn = rng.normal(recipe["mean"], recipe["std"], size=tuple(shape))
    return np.clip(drawn, recipe["min"], recipe["max"]).astype(dtype)


def refill_weights(model: "onnx.ModelProto", seed: int = 0) -> int:
    """Draws every stripped initializer of ``model`` again (in place) and returns how many.

    A stripped initializer (``examples/models/export.py``) keeps its name, dims and data
    type; its ``doc_string`` is :data:`STRIP_MARKER` followed by a JSON recipe measured from
    the exported values: ``{"value": c}`` (a constant tensor: LayerNorm scales, zero biases)
    or ``{"mean", "std", "min", "max"}``, drawn as normal(mean, std) clipped to [min, max],
    which keeps the scale of the exporter's initialisation (softmax and layernorm stay
    sane). Each tensor has its own generator, seeded with ``seed`` and its name, so the
    values do not depend on the order of the initializers.
    """
    from onnx import helper

    count = 0
    for tensor in model.graph.initializer:
        if not tensor.doc_string.startswith(STRIP_MARKER):
            continue
        try:
            recipe = json.loads(tensor.doc_string[len(STRIP_MARKER) :])
        except json.JSONDecodeError:
            raise ArgumentError(
                f"initializer {tensor.name!r}: unreadable refill recipe {tensor.doc_string!r}"
            ) from None
        dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
        rng = np.random.default_rng([seed, zlib.crc32(tensor.name.encode())])
        values = _recipe_values(recipe, list(tensor.dims), dtype, rng)
        for name in ("float_data", "double_data", "int32_data"):
            tensor.ClearField(name)
        tensor.raw_data = np.ascontiguousarray(values).tobytes()
        tensor.doc_string = f"{REFILLED_MARKER} seed={seed}"
        count += 1
    return count
