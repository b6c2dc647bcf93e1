"""Running compiled modules on CPU and checking their numbers.

Requires ``iree-base-runtime``. Inputs are deterministic (seeded) unless given. Two
references: IREE's default pipeline on the same payload (a differential oracle that
works for any payload) and numpy (float64) when a function is a plain matmul, batch
matmul or 2-D convolution. Tolerances depend on the element type.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .. import bindings as mlir
from ..errors import RunFailed

if TYPE_CHECKING:
    from ..programs.program import ParameterArchive

NUMPY_DTYPES: dict[str, type[np.number]] = {
    "f64": np.float64,
    "f32": np.float32,
    "f16": np.float16,
    "i64": np.int64,
    "i32": np.int32,
    "i16": np.int16,
    "i8": np.int8,
}

# Largest accepted max|out - ref| / max|ref| per result element type.
TOLERANCE = {"f64": 1e-10, "f32": 1e-4, "f16": 2e-2, "bf16": 5e-2}


def make_inputs(signature: mlir.FunctionSignature, seed: int = 0) -> list[np.ndarray]:
    """Deterministic inputs: floats uniform in [-1, 1), integers uniform in [-8, 8)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, t in enumerate(signature.inputs):
        dtype = NUMPY_DTYPES.get(t.element)
        if dtype is None:
            raise RunFailed(
                f"{signature.name}: argument {i} has element type {t.element}; tdsl run feeds "
                f"{', '.join(NUMPY_DTYPES)} (pass --inputs .npy files for others)"
            )
        if np.issubdtype(dtype, np.integer):
            arrays.append(rng.integers(-8, 8, size=t.shape).astype(dtype))
        else:
            arrays.append(rng.uniform(-1.0, 1.0, size=t.shape).astype(dtype))
    return arrays


def invoke(
    vmfb: Path | str,
    function: str,
    inputs: Sequence[np.ndarray],
    driver: str = "local-task",
    parameters: Sequence[ParameterArchive] = (),
) -> list[np.ndarray]:
    """Runs ``function`` of the compiled module with ``inputs``, its parameter globals read
    from ``parameters``; returns the results."""
    import iree.runtime as rt

    try:
        if parameters:
            config = rt.Config(driver)
            modules = []
            for archive in parameters:
                index = rt.ParameterIndex()
                index.load(str(archive.path))
                modules.append(
                    rt.create_io_parameters_module(config.vm_instance, index.create_provider(scope=archive.scope))
                )
            program = rt.VmModule.mmap(config.vm_instance, str(vmfb))
            module = rt.load_vm_modules(
                *modules, rt.create_hal_module(config.vm_instance, config.device), program, config=config
            )[-1]
        else:
            module = rt.load_vm_flatbuffer_file(str(vmfb), driver=driver)
        result = module[function](*inputs)
    except Exception as err:  # the runtime raises plain RuntimeError/ValueError
        raise RunFailed(f"running {function} of {vmfb} failed: {err}") from None
    results = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in results]


@dataclass(frozen=True)
class Comparison:
    """max abs / relative-to-max error of one result against one reference, over the
    positions finite in both; ``mismatched`` describes the positions where one side is NaN
    or infinite and the other is not the same (:func:`special_mismatches`)."""

    reference: str
    result_index: int
    max_abs: float
    max_rel: float
    tolerance: float
    mismatched: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.max_rel <= self.tolerance and not self.mismatched


def _kinds(values: np.ndarray) -> np.ndarray:
    """Per position: 0 finite, 1 NaN, 2 +inf, 3 -inf."""
    kinds = np.zeros(values.shape, np.int8)
    kinds[np.isnan(values)] = 1
    kinds[values == np.inf] = 2
    kinds[values == -np.inf] = 3
    return kinds


_KIND_NAMES = ("finite", "NaN", "+inf", "-inf")


def special_mismatches(out: np.ndarray, ref: np.ndarray) -> tuple[str, ...]:
    """Where ``out`` and ``ref`` (same shape, float64) differ in kind: NaN or an infinity on
    one side only, or infinities of opposite signs, one line per pair of kinds ("3 positions
    are -inf in the build and finite in the reference"). The same infinity, or NaN, on both
    sides agrees."""
    out_kinds, ref_kinds = _kinds(out), _kinds(ref)
    differ = out_kinds != ref_kinds
    if not differ.any():
        return ()
    pairs, counts = np.unique(out_kinds[differ] * 4 + ref_kinds[differ], return_counts=True)
    lines = []
    for pair, count in zip(pairs.tolist(), counts.tolist()):
        verb = "position is" if count == 1 else "positions are"
        lines.append(
            f"{count} {verb} {_KIND_NAMES[pair // 4]} in the build and {_KIND_NAMES[pair % 4]} in the reference"
        )
    return tuple(lines)


def compare(out: np.ndarray, ref: np.ndarray, element: str, reference: str, index: int) -> Comparison:
    """Compares ``out`` with ``ref`` (shapes must agree) under ``element``'s tolerance: the
    errors over the positions finite in both, NaN and infinities by position
    (:func:`special_mismatches`)."""
    if out.shape != ref.shape:
        return Comparison(reference, index, float("inf"), float("inf"), 0.0)
    o, r = out.astype(np.float64), ref.astype(np.float64)
    finite = np.isfinite(o) & np.isfinite(r)
    diff = np.abs(o[finite] - r[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = float(np.abs(r[finite]).max()) if diff.size else 0.0
    max_rel = max_abs / scale if scale > 0 else max_abs
    return Comparison(reference, index, max_abs, max_rel, TOLERANCE.get(element, 0.0), special_mismatches(o, r))


# --------------------------------------------------------------------------------------
# numpy references for single-op payload functions.

_PLAIN_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
    "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
    "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}


def _attr_ints(op: mlir.OpSummary, key: str, default: list[int]) -> list[int]:
    """The ints of attribute ``key`` (a splat gives one value per default entry)."""
    value = op.values.get(key)
    ints = [v for v in value if isinstance(v, int)] if isinstance(value, tuple) else []
    if ints:
        return ints * len(default) if len(ints) == 1 else ints
    return default


def numpy_reference(payload_text: str, function: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """float64 numpy results when ``function`` is one zero-filled matmul / batch matmul /
    conv_2d_nhwc_hwcf / conv_2d_nchw_fchw; None for anything else."""
    ops = [op for op in mlir.walk(payload_text) if op.function == function]
    compute = [op for op in ops if op.name.startswith("linalg.") and op.name not in ("linalg.fill", "linalg.yield")]
    consts = [op for op in ops if op.name == "arith.constant"]
    fills = [op for op in ops if op.name == "linalg.fill"]
    if len(compute) != 1 or len(fills) != 1 or len(inputs) != 2:
        return None
    if not all(c.values.get("value") == 0 for c in consts):
        return None
    op = compute[0]
    a, b = (np.asarray(x, dtype=np.float64) for x in inputs)
    if op.name in _PLAIN_MAPS and op.attributes.get("indexing_maps", _PLAIN_MAPS[op.name]) == _PLAIN_MAPS[op.name]:
        return [a @ b]
    if op.name in ("linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nchw_fchw"):
        strides = _attr_ints(op, "strides", [1, 1])
        dilations = _attr_ints(op, "dilations", [1, 1])
        if op.name == "linalg.conv_2d_nchw_fchw":
            a, b = a.transpose(0, 2, 3, 1), b.transpose(2, 3, 1, 0)
            return [_conv_nhwc(a, b, strides, dilations).transpose(0, 3, 1, 2)]
        return [_conv_nhwc(a, b, strides, dilations)]
    return None


def _conv_nhwc(x: np.ndarray, w: np.ndarray, strides: list[int], dilations: list[int]) -> np.ndarray:
    kh, kw, _, f = w.shape
    n, h, wd, c = x.shape
    oh = (h - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dilations[0], i * dilations[0] + strides[0] * (oh - 1) + 1, strides[0])
            cols = slice(j * dilations[1], j * dilations[1] + strides[1] * (ow - 1) + 1, strides[1])
            out += np.einsum("nhwc,cf->nhwf", x[:, rows, cols, :], w[i, j])
    return out
