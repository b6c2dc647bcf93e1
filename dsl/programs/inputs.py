"""Inputs: seeded ones that respect integer semantics, or arrays read from files.

* :func:`make_inputs` draws seeded inputs (token ids below the vocabulary size, masks in
  {0, 1}, quantized tensors over their type's range, positive scales, zero points near the
  middle of their type); ``--input-range ARG=LO:HI`` (:func:`parse_input_ranges`)
  overrides an argument.
* :func:`load_inputs` reads ``.npz`` / ``.npy`` files and checks them against the signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import ArgumentError
from .signatures import Arg, Signature

DEFAULT_INT_RANGE = (0, 7)
"""Integers that are neither masks nor token ids with a known vocabulary: small, non-negative."""
SCALE_RANGE = (0.005, 0.05)
"""Quantization scales that are inputs: uniform in this range (positive, as ONNX requires)."""


def parse_input_ranges(specs: Iterable[str]) -> dict[str, tuple[float, float]]:
    """``--input-range ARG=LO:HI`` values as a mapping (ARG: a name, ``argN`` or ``N``)."""
    ranges: dict[str, tuple[float, float]] = {}
    for spec in specs:
        name, eq, bounds = spec.partition("=")
        lo, colon, hi = bounds.partition(":")
        try:
            low, high = float(lo), float(hi)
        except ValueError:
            low = high = float("nan")
        if not eq or not name.strip() or not colon or not np.isfinite(low) or not np.isfinite(high) or low > high:
            raise ArgumentError(
                f"--input-range expects ARG=LO:HI with LO <= HI (ARG: a name, argN or N), received {spec!r}"
            )
        ranges[name.strip()] = (low, high)
    return ranges


def _role_range(arg: Arg) -> tuple[float, float] | None:
    """The default range of an input with a quantization role: a quantized tensor spans its
    type (``u8`` 0:255; 32-bit tensors, e.g. an i32 bias, +-2^15), a scale lies in
    [SCALE_RANGE), a zero point within 32 of the middle of its type (``u8`` 96:160, ``i8``
    -32:32)."""
    if arg.role == "scale":
        return SCALE_RANGE
    if arg.role not in ("quantized", "zero_point") or arg.dtype.kind not in "iu":
        return None
    info = np.iinfo(arg.dtype)
    if arg.role == "quantized":
        if info.bits >= 32:
            return (0, 2**15) if info.kind == "u" else (-(2**15), 2**15)
        return int(info.min), int(info.max)
    middle = 0 if info.kind == "i" else 2 ** (info.bits - 1)
    return middle - min(32, middle), middle + 32


def _integer_range(arg: Arg, key: str, low: float, high: float) -> tuple[int, int]:
    if low != int(low) or high != int(high):
        raise ArgumentError(
            f"--input-range {key}={low:g}:{high:g}: {arg.name} is {arg.element}; expected integer bounds"
        )
    info = np.iinfo(arg.dtype) if arg.element != "i1" else None
    lo, hi = int(low), int(high)
    if arg.element == "i1" and not (0 <= lo <= hi <= 1):
        raise ArgumentError(f"--input-range {key}={lo}:{hi}: {arg.name} is i1; expected bounds within 0:1")
    if info is not None and (lo < info.min or hi > info.max):
        raise ArgumentError(
            f"--input-range {key}={lo}:{hi}: outside the range of {arg.element}: {arg.name} expects bounds within "
            f"{info.min}:{info.max}, received {lo}:{hi}"
        )
    return lo, hi


def make_inputs(
    signature: Signature, seed: int = 0, ranges: Mapping[str, tuple[float, float]] = {}
) -> list[np.ndarray]:
    """Seeded inputs for ``signature`` that respect integer semantics.

    Floats are uniform in [-1, 1); i1 tensors and integer arguments whose name contains
    ``mask`` are 0 or 1; integer arguments with a known ``bound`` (token ids) lie in
    [0, bound); inputs with a quantization ``role`` take its range (:func:`_role_range`:
    quantized tensors over their type, positive scales, zero points near the middle); other
    integers in [0, 7]. ``ranges`` (``--input-range ARG=LO:HI``, ARG a name, ``argN`` or
    ``N``) overrides an argument: floats uniform in [LO, HI), integers uniform in [LO, HI]
    (both ends included, so ``mask=0:1`` gives 0 and 1); a scale's bounds must be positive.
    """
    chosen: dict[int, tuple[str, tuple[float, float]]] = {}
    for key, bounds in ranges.items():
        chosen[signature.arg(key).index] = (key, bounds)
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in signature.inputs:
        shape, dtype = arg.static_shape, arg.dtype
        given = chosen.get(arg.index)
        role = _role_range(arg)
        if given and arg.role == "scale" and given[1][0] <= 0:
            low, high = given[1]
            raise ArgumentError(
                f"--input-range {given[0]}={low:g}:{high:g}: {arg.name} is a quantization scale; expected positive bounds, "
                f"received {low:g}:{high:g}"
            )
        if dtype.kind == "f" or arg.element == "bf16":
            low, high = given[1] if given else role if role is not None else (-1.0, 1.0)
            arrays.append(rng.uniform(low, high, size=shape).astype(dtype))
            continue
        if given:
            lo, hi = _integer_range(arg, given[0], *given[1])
        elif role is not None:
            lo, hi = int(role[0]), int(role[1])
        elif arg.is_mask:
            lo, hi = 0, 1
        elif arg.bound is not None:
            lo, hi = 0, arg.bound - 1
        else:
            lo, hi = DEFAULT_INT_RANGE
        values = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
        arrays.append(values.astype(bool) if arg.element == "i1" else values.astype(dtype))
    return arrays


def load_inputs(paths: Sequence[Path | str], signature: Signature) -> list[np.ndarray]:
    """Inputs from one ``.npz`` (arrays named by argument name, ``argN`` or numpy's ``arr_N``)
    or from ``.npy`` files, one per argument in order. Shapes must match; an array of
    another dtype of the same kind is cast when no value changes. Raises ArgumentError."""
    files = [Path(p) for p in paths]
    for p in files:
        if not p.is_file():
            raise ArgumentError(f"--inputs {p}: no such file")
    if len(files) == 1 and files[0].suffix == ".npz":
        arrays = _from_npz(files[0], signature)
    else:
        if any(p.suffix != ".npy" for p in files):
            raise ArgumentError(
                f"--inputs expects one .npz or one .npy per argument, received {', '.join(map(str, files))}"
            )
        if len(files) != len(signature.inputs):
            raise ArgumentError(
                f"--inputs: @{signature.function} takes {len(signature.inputs)} arguments, received {len(files)} .npy files"
            )
        arrays = [_load_array(p) for p in files]
    return [_conform(a, arg, src) for a, arg, src in zip(arrays, signature.inputs, _sources(files, signature))]


def _sources(files: Sequence[Path], signature: Signature) -> list[str]:
    if len(files) == 1 and files[0].suffix == ".npz":
        return [f"{files[0]}[{a.name}]" for a in signature.inputs]
    return [str(p) for p in files]


def _load_array(path: Path) -> np.ndarray:
    try:
        return np.asarray(np.load(path, allow_pickle=False))
    except (OSError, ValueError) as err:
        raise ArgumentError(f"--inputs {path}: not a .npy array ({err})") from None


def _from_npz(path: Path, signature: Signature) -> list[np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            stored = {k: np.asarray(archive[k]) for k in archive.files}
    except (OSError, ValueError) as err:
        raise ArgumentError(f"--inputs {path}: not a readable .npz archive ({err})") from None
    arrays, used = [], set()
    for arg in signature.inputs:
        key = next((k for k in (arg.name, f"arg{arg.index}", f"arr_{arg.index}") if k in stored), None)
        if key is None:
            raise ArgumentError(
                f"--inputs {path}: no array for argument {arg.name} (arg{arg.index}); the archive holds {', '.join(sorted(stored)) or 'nothing'}"
            )
        arrays.append(stored[key])
        used.add(key)
    extra = sorted(set(stored) - used)
    if extra:
        raise ArgumentError(f"--inputs {path}: arrays {', '.join(extra)} name no argument of @{signature.function}")
    return arrays


def _conform(array: np.ndarray, arg: Arg, source: str) -> np.ndarray:
    if tuple(array.shape) != arg.static_shape:
        raise ArgumentError(
            f"--inputs {source}: {arg.name} expects shape {arg.static_shape}, received {tuple(array.shape)}"
        )
    dtype = arg.dtype
    if array.dtype == dtype:
        return array
    same_kind = (
        array.dtype.kind == dtype.kind
        or (array.dtype.kind in "iu" and dtype.kind in "iub")
        or (array.dtype.kind == "b" and dtype.kind in "iu")
    )
    if same_kind:
        cast = array.astype(dtype)
        if np.array_equal(cast.astype(array.dtype), array) or dtype.kind == "f":
            return cast
    raise ArgumentError(f"--inputs {source}: {arg.name} expects {arg.element} ({dtype}), received {array.dtype}")
