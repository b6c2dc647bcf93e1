"""Real programs: ONNX models and the torch/ONNX-dialect MLIR that ``iree-import-onnx`` writes.

A :class:`Program` is what a user passes: an ``.onnx`` model (exported by
``torch.onnx.export`` or any other frontend), an ``.mlir`` file in the torch/ONNX dialects
as ``iree-import-onnx`` writes it (``func.func @main_graph(%arg0: !torch.vtensor<[1,128],si64>)``),
or a plain linalg ``.mlir`` with builtin tensor signatures. ``iree-compile`` reads all three
kinds directly; :func:`load_program` brings an ``.onnx`` model to MLIR first.

* :func:`load_program` imports ``.onnx`` with ``iree-import-onnx`` (the optional extra
  ``tdsl[onnx]``) into a cache file, under a timeout; it refills weights that
  ``examples/models/export.py`` stripped (:func:`refill_weights`), sets dynamic dimensions
  from ``--dim NAME=SIZE`` (:func:`parse_dims`) and refuses a dynamic dimension that is left,
  naming the argument, the dimension and the ``--dim`` that fixes it.
* :func:`externalize_weights` gives the same ``.onnx`` program with its weights in a
  parameter archive (``.irpa``) that the module reads at load, as IREE deploys large
  models: what ``tdsl tune`` builds its candidates from, so each build holds code only.
* :func:`signatures` gives every public function's arguments and results (names, shapes,
  element types, numpy dtypes, the index bound of token ids).
* :func:`make_inputs` draws seeded inputs that respect integer semantics (token ids below
  the vocabulary size, masks in {0, 1}, quantized tensors over their type's range, positive
  scales, zero points near the middle of their type: :func:`quantization_roles`);
  :func:`load_inputs` reads ``.npz`` / ``.npy`` files.
* :func:`output_steps` gives the quantization step of each output that a quantizing op
  produces (1 for a u8/i8 result, the scale of a ``DequantizeLinear``): the numeric check
  accepts one step of difference there.
* :func:`import_fixes` rewrites, in the copy that is imported (never in the model
  onnxruntime runs), the ONNX forms IREE 3.13's importer gets wrong, each into an
  equivalent form, and says so in the program's notes.
* :func:`onnxruntime_reference` runs the model with onnxruntime (one thread) as the numeric
  reference; :func:`onnxruntime_inexact` says where it is none (an 8-bit integer matmul
  that onnxruntime's kernels for this CPU do not compute exactly); :func:`as_declared` gives IREE's results the declared dtypes (IREE returns
  ``ui8`` results as int8 buffers).

Requires ``iree-base-compiler`` (parsing types, through :mod:`tdsl.bindings`); ``.onnx``
models and the onnxruntime reference need ``pip install 'tdsl[onnx]'``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import tempfile
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from .. import bindings as mlir
from ..errors import ArgumentError, PayloadError, TdslError
from ..files import atomic_write, staged

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx

__all__ = [
    "Arg",
    "DynamicShapeError",
    "ImportFailed",
    "MissingExtra",
    "Program",
    "Signature",
    "STRIP_MARKER",
    "as_declared",
    "load_inputs",
    "load_program",
    "make_inputs",
    "numpy_dtype",
    "onnxruntime_inexact",
    "onnxruntime_reference",
    "parse_dims",
    "parse_input_ranges",
    "refill_weights",
    "signatures",
]

ONNX_EXTRA = "pip install 'tdsl[onnx]'"
DEFAULT_IMPORT_TIMEOUT_S = 600.0
STRIP_MARKER = "tdsl.stripped"
"""The ``doc_string`` prefix of an initializer whose data was removed; a JSON recipe follows."""
REFILLED_MARKER = "tdsl.refilled"
DEFAULT_INT_RANGE = (0, 7)
"""Integers that are neither masks nor token ids with a known vocabulary: small, non-negative."""
SCALE_RANGE = (0.005, 0.05)
"""Quantization scales that are inputs: uniform in this range (positive, as ONNX requires)."""


class MissingExtra(TdslError):
    """An optional dependency is not installed; the message names the extra to install."""


class ImportFailed(TdslError):
    """``iree-import-onnx`` failed or ran past its timeout; the message ends with its error."""


class DynamicShapeError(PayloadError):
    """An argument with a dynamic (or unknown) dimension; the message names the argument, the
    dimension and the ``--dim NAME=SIZE`` that makes it static."""


# --------------------------------------------------------------------------------------
# Programs.


@dataclass(frozen=True)
class Program:
    """A program loaded by :func:`load_program`.

    ``kind`` is ``"onnx"`` (an ``.onnx`` model, imported), ``"torch"`` (torch/ONNX-dialect
    MLIR) or ``"linalg"`` (MLIR with builtin tensor signatures). ``mlir_path`` is the file
    ``iree-compile`` reads; ``onnx_path`` the runnable model (weights refilled, dimensions set)
    that onnxruntime reads, None for MLIR programs. ``input_names`` / ``output_names`` are the
    ONNX graph's (empty for MLIR: the arguments are then ``arg0``, ``arg1``, ..);
    ``index_bounds`` maps an input name to the size of the table it indexes (a ``Gather``
    of a constant: token ids lie in ``[0, bound)``). ``notes`` say what was done to the
    program on the way (weights refilled, dimensions set, import fixes). ``roles`` and
    ``steps`` are the quantization roles of inputs and steps of outputs (ONNX models only).
    """

    source: Path
    kind: str
    mlir_path: Path
    onnx_path: Path | None
    functions: tuple[mlir.FunctionTypes, ...]
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    index_bounds: Mapping[str, int] = field(default_factory=dict)
    dims: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    roles: Mapping[str, str] = field(default_factory=dict)
    """Input name -> its role in quantization (:func:`quantization_roles`)."""
    steps: Mapping[str, float] = field(default_factory=dict)
    """Output name -> its quantization step (:func:`output_steps`)."""
    import_path: Path | None = None
    """The ONNX file ``iree-import-onnx`` read (the runnable model, or its copy with
    :func:`import_fixes` applied); None for MLIR programs."""
    parameters: tuple["ParameterArchive", ...] = ()
    """The archives the module reads its weights from at load
    (:func:`externalize_weights`); empty when the weights are in the program."""

    def text(self) -> str:
        """The MLIR text that ``iree-compile`` reads."""
        return self.mlir_path.read_text()


@dataclass(frozen=True)
class ParameterArchive:
    """A parameter archive (``.irpa``) a module reads weights from: the ``scope`` its
    globals name (``#stream.parameter.named<"model"::"w">``), the file and its sha256."""

    scope: str
    path: Path
    digest: str

    @property
    def spec(self) -> str:
        """``scope=path``: the value of ``iree-benchmark-module``'s ``--parameters``."""
        return f"{self.scope}={self.path}"


PARAMETER_SCOPE = "model"
EXTERNAL_MIN_ELEMENTS = 4096
"""Initializers with at least this many elements go to the archive
(:func:`externalize_weights`): weight matrices and embedding tables; small tensors (shapes,
norms, biases of narrow layers, position ids) stay in the program."""


def externalize_weights(program: Program, timeout_s: float = DEFAULT_IMPORT_TIMEOUT_S) -> Program:
    """``program`` with its large weights (:data:`EXTERNAL_MIN_ELEMENTS`) in a parameter
    archive beside its import in the cache (``iree-import-onnx --externalize-params``):
    the module reads them at load, so a build holds code only and compiles without
    folding the weights, while each call runs as with the weights in the program (data
    tiling packs them once, at load instead of at compile time). MLIR programs are
    returned as they are. Raises :class:`ImportFailed`."""
    if program.kind != "onnx" or program.import_path is None or program.parameters:
        return program
    mlir_path = program.mlir_path.with_name(program.mlir_path.stem + ".params.mlir")
    archive = program.mlir_path.with_name(program.mlir_path.stem + ".irpa")
    digest_file = archive.with_name(archive.name + ".sha256")
    if not (mlir_path.is_file() and archive.is_file() and digest_file.is_file()):
        _import_onnx(program.import_path, mlir_path, timeout_s, archive)
        atomic_write(digest_file, _sha256_file(archive))
    parameters = (ParameterArchive(PARAMETER_SCOPE, archive, digest_file.read_text().strip()),)
    notes = (*program.notes, f"weights of {EXTERNAL_MIN_ELEMENTS}+ elements in the parameter archive {archive.name}")
    return replace(program, mlir_path=mlir_path, parameters=parameters, notes=notes)


_PARAMETER_SCOPE = re.compile(r'#(?:stream|flow)\.parameter\.named<"([^"]+)"::')


def check_runnable(program: Program) -> None:
    """Raises :class:`ArgumentError` when ``program`` names a parameter scope that none of
    its archives covers (its module could compile but not run)."""
    missing = sorted(set(_PARAMETER_SCOPE.findall(program.text())) - {a.scope for a in program.parameters})
    if missing:
        raise ArgumentError(
            f"--parameters: expected an archive for scope {missing[0]!r} (the program's globals read their "
            f"weights from it: --parameters {missing[0]}=FILE.irpa), received "
            + (", ".join(repr(a.scope) for a in program.parameters) or "none")
        )


def parse_parameters(values: Sequence[str]) -> tuple[ParameterArchive, ...]:
    """``SCOPE=FILE.irpa`` (or ``FILE.irpa``: the scope ``model``) as archives; raises
    :class:`ArgumentError` for an empty scope or a file that is not there."""
    archives = []
    for value in values:
        scope, sep, file = value.partition("=")
        if not sep:
            scope, file = PARAMETER_SCOPE, value
        if not scope or not file:
            raise ArgumentError(f"--parameters: expected SCOPE=FILE.irpa or FILE.irpa, received {value!r}")
        path = Path(file)
        if not path.is_file():
            raise ArgumentError(f"--parameters: expected a parameter archive, received {file!r}, which does not exist")
        archives.append(ParameterArchive(scope, path.resolve(), _sha256_file(path)))
    return tuple(archives)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir() -> Path:
    """Where imported models are kept: ``$TDSL_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdsl``
    (``~/.cache/tdsl``), then ``onnx/`` under it. Entries are named by a hash of the model
    after refilling and setting dimensions, and of the compiler version."""
    root = os.environ.get("TDSL_CACHE_DIR")
    if root:
        return Path(root) / "onnx"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdsl" / "onnx"


def _writable_cache() -> Path:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=directory, prefix=".probe.", delete=True)
        probe.close()
        return directory
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"tdsl-onnx-{os.getuid()}"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def _require_onnx() -> Any:
    """The ``onnx`` module and the importer, or a one-line :class:`MissingExtra`."""
    if mlir.onnx_import_command() is None:
        raise MissingExtra(
            f"loading .onnx models needs iree-import-onnx (iree-base-compiler[onnx]) and the onnx package: {ONNX_EXTRA}"
        )
    import onnx as onnx_module

    return onnx_module


def load_program(
    path: Path | str,
    *,
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    timeout_s: float = DEFAULT_IMPORT_TIMEOUT_S,
    parameters: Sequence[str] = (),
) -> Program:
    """Loads an ``.onnx`` model or an ``.mlir`` program (torch/ONNX dialect or linalg).

    ``parameters`` (``SCOPE=FILE.irpa`` or ``FILE.irpa`` for the scope ``model``) are the
    archives an ``.mlir`` program's parameter globals read at load
    (``#stream.parameter.named<"model"::"w">``, as ``iree-import-onnx --externalize-params``
    or iree-turbine write them); see :func:`parse_parameters`.

    ``dims`` sets dynamic dimensions: the key is an ONNX ``dim_param`` (``batch``), or
    ``argN.D`` (argument N, dimension D; for ``.onnx`` also ``<input name>.D``). For
    ``.onnx`` the dimension is set in a copy of the model before import; for ``.mlir`` the
    argument gets the static type and a cast at the function entry. A model whose weights
    were stripped (:data:`STRIP_MARKER`) gets them drawn again from ``weights_seed``
    (:func:`refill_weights`). Raises :class:`DynamicShapeError` for a dynamic dimension
    that is left, :class:`ArgumentError` for a ``dims`` key that names nothing,
    :class:`MissingExtra` without ``tdsl[onnx]``, :class:`ImportFailed`.
    """
    source = Path(path)
    if not source.is_file():
        raise ArgumentError(f"program {str(source)!r} does not exist")
    suffix = source.suffix.lower()
    if suffix == ".onnx":
        if parameters:
            raise ArgumentError("--parameters: expected an .mlir program that names parameters, received an .onnx model (its weights are in the model)")
        return _load_onnx(source, dict(dims), weights_seed, timeout_s)
    if suffix == ".mlir":
        return replace(_load_mlir(source, dict(dims)), parameters=parse_parameters(parameters))
    raise ArgumentError(f"program {str(source)!r}: expected an .onnx model or an .mlir file, received a {suffix or 'suffix-less'} file")


def _load_mlir(source: Path, dims: dict[str, int]) -> Program:
    text = source.read_text()
    kind = "torch" if "!torch." in text else "linalg"
    functions = tuple(mlir.function_types(text))
    path = source
    notes: list[str] = []
    if dims:
        updates = _mlir_dim_updates(functions, dims)
        for name, types in updates.items():
            text = mlir.set_argument_types(text, name, types)
        digest = hashlib.sha256(text.encode()).hexdigest()[:24]
        path = _writable_cache() / f"{source.stem}.{digest}.mlir"
        if not path.exists():
            atomic_write(path, text)
        functions = tuple(mlir.function_types(text))
        notes.append("dimensions set: " + ", ".join(f"{k}={v}" for k, v in sorted(dims.items())))
    for function in functions:
        _check_static(function, ())
    return Program(source, kind, path, None, functions, dims=dims, notes=tuple(notes))


def _parse_arg_dim(key: str) -> tuple[str, int] | None:
    """``("arg3", 1)`` for ``arg3.1``; ``("input_ids", 0)`` for ``input_ids.0``; else None."""
    name, dot, dim = key.rpartition(".")
    if not dot or not name or not dim.isdigit():
        return None
    return name, int(dim)


def _mlir_dim_updates(functions: Sequence[mlir.FunctionTypes], dims: Mapping[str, int]) -> dict[str, dict[int, str]]:
    """The new argument types per function for ``dims`` keys ``argN.D``."""
    updates: dict[str, dict[int, str]] = {}
    dynamic = [
        f"arg{i}.{d}" for f in functions for i, t in enumerate(f.inputs) for d, size in enumerate(t.shape or ()) if size is None
    ]
    for key, size in dims.items():
        parsed = _parse_arg_dim(key)
        if parsed is None or not parsed[0].startswith("arg") or not parsed[0][3:].isdigit():
            raise ArgumentError(
                f"--dim {key}={size}: an .mlir program names dimensions argN.D (argument N, dimension D); "
                f"its dynamic dimensions: {', '.join(sorted(set(dynamic))) or 'none'}"
            )
        index, dim = int(parsed[0][3:]), parsed[1]
        hit = False
        for function in functions:
            if index >= len(function.inputs):
                continue
            t = function.inputs[index]
            if t.shape is None or dim >= len(t.shape):
                continue
            if t.shape[dim] is not None:
                if t.shape[dim] != size:
                    raise ArgumentError(f"--dim {key}={size}: dimension {dim} of arg{index} of @{function.name} is static ({t.shape[dim]})")
                hit = True
                continue
            current = updates.setdefault(function.name, {})
            shape = list(_parse_type_shape(current.get(index), t))
            shape[dim] = size
            current[index] = _spell(t, tuple(shape))
            hit = True
        if not hit:
            raise ArgumentError(f"--dim {key}={size}: no argument has that dimension; dynamic dimensions: {', '.join(sorted(set(dynamic))) or 'none'}")
    return updates


def _parse_type_shape(spelled: str | None, t: mlir.ValueType) -> tuple[int | None, ...]:
    if spelled is None:
        return t.shape or ()
    return _read_shape(spelled)


def _read_shape(spelled: str) -> tuple[int | None, ...]:
    if spelled.startswith("!torch.vtensor"):
        shape, _ = mlir.parse_vtensor_type(spelled)
        return shape or ()
    body = spelled[len("tensor<") : -1]
    parts = body.split("x")[:-1]
    return tuple(None if p == "?" else int(p) for p in parts)


def _spell(t: mlir.ValueType, shape: tuple[int | None, ...]) -> str:
    """``t`` with ``shape``, spelled as MLIR type text."""
    if t.dialect == "torch":
        return "!torch.vtensor<[" + ",".join("?" if s is None else str(s) for s in shape) + f"],{t.element}>"
    return "tensor<" + "".join(("?" if s is None else str(s)) + "x" for s in shape) + f"{t.element}>"


def _check_static(function: mlir.FunctionTypes, names: Sequence[str]) -> None:
    """Raises :class:`DynamicShapeError` / :class:`PayloadError` for an argument tdsl cannot feed."""
    for index, t in enumerate(function.inputs):
        label = f"input {names[index]!r} (arg{index})" if index < len(names) else f"argument arg{index} of @{function.name}"
        if t.dialect == "other":
            raise PayloadError(f"{label} has type {t.text}; tdsl feeds tensor arguments only")
        if t.shape is None:
            raise DynamicShapeError(f"{label} is unranked ({t.text}); tdsl compiles static shapes: give the argument a ranked, static type")
        for dim, size in enumerate(t.shape):
            if size is None:
                raise DynamicShapeError(
                    f"{label}: dimension {dim} is dynamic ({t.text}); tdsl compiles static shapes: pass --dim arg{index}.{dim}=SIZE"
                )


def _load_onnx(source: Path, dims: dict[str, int], seed: int, timeout_s: float) -> Program:
    onnx_module = _require_onnx()
    try:
        model = onnx_module.load(str(source))
    except Exception as err:  # protobuf DecodeError and friends
        raise ArgumentError(f"{source}: not a readable ONNX model ({type(err).__name__}: {err})") from None
    notes: list[str] = []
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    names = tuple(i.name for i in inputs)
    _apply_onnx_dims(model, inputs, dims)
    if dims:
        notes.append("dimensions set: " + ", ".join(f"{k}={v}" for k, v in sorted(dims.items())))
    refilled = refill_weights(model, seed)
    if refilled:
        notes.append(f"{refilled} stripped weight tensors drawn from seed {seed} (the model file holds no weights)")
    data = model.SerializeToString()
    version = importlib.metadata.version("iree-base-compiler")
    key = hashlib.sha256(data + version.encode()).hexdigest()[:24]
    directory = _writable_cache()
    runnable = source if not dims and not refilled else directory / f"{source.stem}.{key}.onnx"
    if runnable != source and not runnable.exists():
        atomic_write(runnable, data)
    fixed = onnx_module.ModelProto()
    fixed.CopyFrom(model)
    fixes = import_fixes(fixed)
    notes.extend(fixes)
    to_import = runnable
    if fixes:
        fixed_data = fixed.SerializeToString()
        key = hashlib.sha256(fixed_data + version.encode()).hexdigest()[:24]
        to_import = directory / f"{source.stem}.{key}.import.onnx"
        if not to_import.exists():
            atomic_write(to_import, fixed_data)
    imported = directory / f"{source.stem}.{key}.mlir"
    if not imported.exists():
        _import_onnx(to_import, imported, timeout_s)
    functions = tuple(mlir.function_types(imported.read_text()))
    for function in functions:
        _check_static(function, names)
    return Program(
        source,
        "onnx",
        imported,
        runnable,
        functions,
        names,
        tuple(o.name for o in model.graph.output),
        _index_bounds(model, set(names)),
        dims,
        tuple(notes),
        quantization_roles(model, set(names)),
        output_steps(model),
        to_import,
    )


def _apply_onnx_dims(model: "onnx.ModelProto", inputs: Sequence[Any], dims: Mapping[str, int]) -> None:
    """Sets ``dims`` in ``model`` (in place): a dynamic input dimension takes the size given
    for its dim_param, ``argN.D`` or ``<input name>.D``; a dim_param elsewhere (outputs,
    value infos) takes the same size. Raises ArgumentError for a key that names no dimension
    or a static one of another size, DynamicShapeError for a dynamic dimension left."""
    used: set[str] = set()
    by_param: dict[str, int] = {}
    available: list[str] = []
    left: list[tuple[str, str]] = []
    for index, value in enumerate(inputs):
        for d, dim in enumerate(value.type.tensor_type.shape.dim):
            keys = [f"arg{index}.{d}", f"{value.name}.{d}"]
            if dim.HasField("dim_value"):
                for k in keys:
                    if k in dims and dims[k] != dim.dim_value:
                        raise ArgumentError(f"--dim {k}={dims[k]}: dimension {d} of input {value.name!r} is static ({dim.dim_value})")
                used.update(k for k in keys if k in dims)
                continue
            param = dim.dim_param if dim.HasField("dim_param") else ""
            name = param or f"arg{index}.{d}"
            available.append(name)
            given = [k for k in ([param] if param else []) + keys if k in dims]
            used.update(given)
            if not given:
                left.append((f"input {value.name!r} (arg{index}): dimension {d} is dynamic" + (f" ({param!r})" if param else ""), name))
                continue
            size = dims[given[0]]
            dim.ClearField("dim_param")
            dim.dim_value = size
            if param:
                by_param[param] = size
    unknown = sorted(set(dims) - used)
    if unknown:
        raise ArgumentError(
            f"--dim {unknown[0]}={dims[unknown[0]]}: the model has no such dimension; its dynamic input dimensions: "
            f"{', '.join(available) or 'none'} (NAME is a dim_param or argN.D)"
        )
    if left:
        what, name = left[0]
        more = f" ({len(left) - 1} more dynamic: {', '.join(n for _, n in left[1:])})" if len(left) > 1 else ""
        raise DynamicShapeError(f"{what}; tdsl compiles static shapes: pass --dim {name}=SIZE{more}")
    for value in [*model.graph.output, *model.graph.value_info]:
        if not value.type.HasField("tensor_type"):
            continue
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param in by_param:
                size = by_param[dim.dim_param]
                dim.ClearField("dim_param")
                dim.dim_value = size


def _import_onnx(model: Path, output: Path, timeout_s: float, archive: Path | None = None) -> None:
    """Imports ``model`` to ``output``; with ``archive``, its large initializers go to that
    parameter archive instead (written first: a present ``output`` implies it)."""
    command = mlir.onnx_import_command()
    if command is None:
        raise MissingExtra(f"iree-import-onnx is not installed: {ONNX_EXTRA}")
    try:
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(staged(output))
            extra = []
            if archive is not None:  # staged after the module: renamed into place before it
                params = stack.enter_context(staged(archive))
                extra = ["--externalize-params", "--save-params-to", str(params), "--params-scope", PARAMETER_SCOPE,
                         "--num-elements-threshold", str(EXTERNAL_MIN_ELEMENTS)]
            try:
                proc = subprocess.run([*command, str(model), "-o", str(tmp), *extra], capture_output=True, text=True, timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise ImportFailed(f"iree-import-onnx ran past {timeout_s:g} s on {model} and was killed") from None
            if proc.returncode != 0:
                last = [line for line in proc.stderr.strip().splitlines() if line.strip()]
                raise ImportFailed(f"iree-import-onnx failed on {model} (exit {proc.returncode}): {last[-1] if last else 'no output'}")
    except OSError as err:
        raise ImportFailed(f"iree-import-onnx could not write {output}: {err}") from None


def _index_bounds(model: "onnx.ModelProto", names: set[str]) -> dict[str, int]:
    """Input name -> size of the constant table it indexes through ``Gather`` (token ids:
    the vocabulary size); a ``Cast`` between the input and the Gather is followed."""
    shapes = {t.name: list(t.dims) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value":
                    shapes[node.output[0]] = list(attr.t.dims)
    aliases = {n: n for n in names}
    for node in model.graph.node:
        if node.op_type == "Cast" and node.input and node.input[0] in aliases:
            aliases[node.output[0]] = aliases[node.input[0]]
    bounds: dict[str, int] = {}
    for node in model.graph.node:
        if node.op_type != "Gather" or len(node.input) < 2 or node.input[1] not in aliases:
            continue
        table = shapes.get(node.input[0])
        if not table:
            continue
        axis = next((int(a.i) for a in node.attribute if a.name == "axis"), 0)
        bound = int(table[axis % len(table)])
        name = aliases[node.input[1]]
        bounds[name] = min(bound, bounds.get(name, bound))
    return bounds


# --------------------------------------------------------------------------------------
# Quantization: the roles of inputs, the steps of outputs, and import fixes.

_QUANT_SLOTS: dict[str, dict[int, str]] = {
    "QuantizeLinear": {1: "scale", 2: "zero_point"},
    "DequantizeLinear": {0: "quantized", 1: "scale", 2: "zero_point"},
    "QLinearMatMul": {0: "quantized", 1: "scale", 2: "zero_point", 3: "quantized", 4: "scale", 5: "zero_point", 6: "scale", 7: "zero_point"},
    "QLinearConv": {0: "quantized", 1: "scale", 2: "zero_point", 3: "quantized", 4: "scale", 5: "zero_point", 6: "scale", 7: "zero_point", 8: "quantized"},
    "MatMulInteger": {0: "quantized", 1: "quantized", 2: "zero_point", 3: "zero_point"},
    "ConvInteger": {0: "quantized", 1: "quantized", 2: "zero_point", 3: "zero_point"},
}
"""ONNX ops (default domain) -> input position -> the role of the value there."""

_QUANTIZING = frozenset({"QuantizeLinear", "QLinearMatMul", "QLinearConv", "DynamicQuantizeLinear"})
"""Ops whose first output is a quantized (integer) tensor."""

_SHAPE_ONLY = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity"}
"""Ops that move values without changing them (a quantization step passes through)."""


def quantization_roles(model: "onnx.ModelProto", names: set[str]) -> dict[str, str]:
    """Graph input name -> its role where it feeds a quantization op: ``quantized`` (the
    integer tensor of QLinearMatMul / MatMulInteger / DequantizeLinear / ...), ``scale`` or
    ``zero_point``; a ``Cast`` between the input and the op is followed. The first role
    found wins."""
    aliases = {n: n for n in names}
    for node in model.graph.node:
        if node.op_type in ("Cast", "Identity") and node.input and node.input[0] in aliases:
            aliases[node.output[0]] = aliases[node.input[0]]
    roles: dict[str, str] = {}
    for node in model.graph.node:
        slots = _QUANT_SLOTS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        for position, role in (slots or {}).items():
            if position < len(node.input) and node.input[position] in aliases:
                roles.setdefault(aliases[node.input[position]], role)
    return roles


def _constant_value(model: "onnx.ModelProto", name: str) -> np.ndarray | None:
    """The value of the initializer or ``Constant`` node output ``name``; None for any other value."""
    from onnx import numpy_helper

    for tensor in model.graph.initializer:
        if tensor.name == name:
            return np.asarray(numpy_helper.to_array(tensor))
    for node in model.graph.node:
        if node.op_type == "Constant" and list(node.output) == [name]:
            for attr in node.attribute:
                if attr.name == "value":
                    return np.asarray(numpy_helper.to_array(attr.t))
    return None


def output_steps(model: "onnx.ModelProto") -> dict[str, float]:
    """Graph output name -> the quantization step of its values, where a quantizing op
    produces it (through shape-only ops): 1 (one integer step) for the result of
    QuantizeLinear, QLinearMatMul, QLinearConv or DynamicQuantizeLinear, the largest scale
    for a DequantizeLinear with a constant scale. Two correct implementations may round a
    value that lies on a rounding boundary differently: one step apart."""
    producers = {out: node for node in model.graph.node for out in node.output}
    steps: dict[str, float] = {}
    for output in model.graph.output:
        name = output.name
        node = producers.get(name)
        while node is not None and node.op_type in _SHAPE_ONLY and node.input:
            name = node.input[0]
            node = producers.get(name)
        if node is None or node.domain not in ("", "ai.onnx"):
            continue
        if node.op_type in _QUANTIZING and name == node.output[0]:
            steps[output.name] = 1.0
        elif node.op_type == "DequantizeLinear" and len(node.input) > 1:
            scale = _constant_value(model, node.input[1])
            if scale is not None and scale.size:
                steps[output.name] = float(np.abs(scale).max())
    return steps


def _value_types(model: "onnx.ModelProto") -> dict[str, Any]:
    """Value name -> its ``TypeProto`` tensor type (inputs, outputs, shape inference, initializers)."""
    import onnx as onnx_module

    try:
        inferred = onnx_module.shape_inference.infer_shapes(model)
    except Exception:  # an invalid or unusual model: use what the file declares
        inferred = model
    types: dict[str, Any] = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        if value.type.HasField("tensor_type"):
            types[value.name] = value.type.tensor_type
    for tensor in model.graph.initializer:
        types[tensor.name] = onnx_module.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims)).tensor_type
    return types


def _static_shape(tensor_type: Any) -> list[int] | None:
    if tensor_type is None or not tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim]
    return dims if all(d >= 0 for d in dims) else None


def _scalar(types: dict[str, Any], name: str) -> bool:
    shape = _static_shape(types.get(name))
    return shape is not None and int(np.prod(shape)) == 1


def import_fixes(model: "onnx.ModelProto") -> list[str]:
    """Rewrites ``model`` (in place) where IREE 3.13's ONNX import goes wrong, each into an
    equivalent graph; returns one note per kind of rewrite (empty: nothing to fix).

    * ``QLinearMatMul`` of a 3-D (or higher) activation by a 2-D weight, per-tensor
      activation quantization: imported as ``torch.aten.bmm`` of a 3-D by a 2-D tensor,
      which fails to compile ("failed to legalize operation 'torch.aten.bmm'"). Rewritten to
      a 2-D QLinearMatMul between two Reshapes (static shapes only).
    * ``MatMulInteger`` of two u8 tensors without zero points: imported as
      ``linalg.matmul {cast = cast_unsigned}``, which IREE 3.13 computes as signed (its
      generalization and vectorization emit ``arith.extsi``: wrong results for values >= 128).
      Rewritten with explicit zero points 0, which IREE imports as an exact i32 contraction.
    """
    from onnx import TensorProto, helper, numpy_helper

    if not any(node.op_type in ("QLinearMatMul", "MatMulInteger") for node in model.graph.node):
        return []
    types = _value_types(model)
    taken = {v for node in model.graph.node for v in [*node.input, *node.output]} | {t.name for t in model.graph.initializer}

    def fresh(base: str) -> str:
        name, i = base, 0
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        return name

    batched = unsigned = 0
    nodes = []
    for node in model.graph.node:
        default = node.domain in ("", "ai.onnx")
        if default and node.op_type == "QLinearMatMul" and len(node.input) == 8:
            a_shape = _static_shape(types.get(node.input[0]))
            b_shape = _static_shape(types.get(node.input[3]))
            if a_shape and b_shape and len(a_shape) >= 3 and len(b_shape) == 2 and _scalar(types, node.input[1]) and _scalar(types, node.input[2]):
                flat_shape = fresh(f"{node.name or node.output[0]}_tdsl_flat_shape")
                out_shape = fresh(f"{node.name or node.output[0]}_tdsl_out_shape")
                flat_in, flat_out = fresh(f"{node.input[0]}_tdsl_flat"), fresh(f"{node.output[0]}_tdsl_flat")
                model.graph.initializer.extend(
                    [
                        numpy_helper.from_array(np.array([-1, a_shape[-1]], np.int64), flat_shape),
                        numpy_helper.from_array(np.array([*a_shape[:-1], b_shape[1]], np.int64), out_shape),
                    ]
                )
                nodes.append(helper.make_node("Reshape", [node.input[0], flat_shape], [flat_in]))
                inner = helper.make_node("QLinearMatMul", [flat_in, *node.input[1:]], [flat_out], name=node.name)
                nodes.append(inner)
                nodes.append(helper.make_node("Reshape", [flat_out, out_shape], [node.output[0]]))
                batched += 1
                continue
        if default and node.op_type == "MatMulInteger" and len(node.input) == 2:
            elements = [types[n].elem_type if n in types else None for n in node.input]
            if elements == [TensorProto.UINT8, TensorProto.UINT8]:
                zero = fresh(f"{node.name or node.output[0]}_tdsl_zero_point")
                model.graph.initializer.append(numpy_helper.from_array(np.array(0, np.uint8), zero))
                node.input.extend([zero, zero])
                unsigned += 1
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    notes = []
    if batched:
        notes.append(
            f"{batched} QLinearMatMul of a 3-D activation by a 2-D weight imported as 2-D between Reshapes "
            "(IREE 3.13 imports the batched form as torch.aten.bmm, which fails to compile)"
        )
    if unsigned:
        notes.append(
            f"{unsigned} MatMulInteger of u8 by u8 without zero points imported with zero points 0 "
            "(IREE 3.13 computes the unsigned form as signed)"
        )
    return notes


# --------------------------------------------------------------------------------------
# Weights: stripped by examples/models/export.py, drawn again here.


def _recipe_values(recipe: Mapping[str, float], shape: Sequence[int], dtype: Any, rng: np.random.Generator) -> np.ndarray:
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
            raise ArgumentError(f"initializer {tensor.name!r}: unreadable refill recipe {tensor.doc_string!r}") from None
        dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
        rng = np.random.default_rng([seed, zlib.crc32(tensor.name.encode())])
        values = _recipe_values(recipe, list(tensor.dims), dtype, rng)
        for name in ("float_data", "double_data", "int32_data"):
            tensor.ClearField(name)
        tensor.raw_data = np.ascontiguousarray(values).tobytes()
        tensor.doc_string = f"{REFILLED_MARKER} seed={seed}"
        count += 1
    return count


# --------------------------------------------------------------------------------------
# Signatures.

_NUMPY: dict[str, str] = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "si64": "int64",
    "si32": "int32",
    "si16": "int16",
    "si8": "int8",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "ui64": "uint64",
    "ui32": "uint32",
    "ui16": "uint16",
    "ui8": "uint8",
    "i1": "bool",
}


def numpy_dtype(element: str) -> np.dtype[Any]:
    """The numpy dtype of an element type as spelled in the IR (``si64`` -> int64, ``i1`` ->
    bool, ``bf16`` -> ml_dtypes.bfloat16 when ml_dtypes is installed). Raises PayloadError."""
    if element in _NUMPY:
        return np.dtype(_NUMPY[element])
    if element == "bf16":
        try:
            import ml_dtypes
        except ImportError:
            raise PayloadError("bf16 tensors need the ml_dtypes package (pip install ml_dtypes)") from None
        bf16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bf16
    raise PayloadError(f"element type {element} has no numpy dtype tdsl can feed (known: {', '.join(_NUMPY)}, bf16)")


@dataclass(frozen=True)
class Arg:
    """One argument or result: its position, name (the ONNX name, else ``argN`` /
    ``resultN``), shape (a dynamic result dimension is None; arguments are static), element
    type as spelled in the IR and, for integer arguments that index a table, ``bound``: the
    values lie in ``[0, bound)`` (token ids: the vocabulary size). ``role`` is an input's
    part in quantization (``quantized``, ``scale``, ``zero_point``: :func:`quantization_roles`),
    ``step`` a result's quantization step (:func:`output_steps`)."""

    index: int
    name: str
    shape: tuple[int | None, ...]
    element: str
    bound: int | None = None
    role: str | None = None
    step: float | None = None

    @property
    def dtype(self) -> np.dtype[Any]:
        return numpy_dtype(self.element)

    @property
    def static_shape(self) -> tuple[int, ...]:
        if any(s is None for s in self.shape):
            raise PayloadError(f"{self.name} has a dynamic shape {self.shape}")
        return tuple(int(s) for s in self.shape if s is not None)

    @property
    def is_mask(self) -> bool:
        """An i1 tensor, or an integer argument whose name contains ``mask``."""
        return self.element == "i1" or "mask" in self.name.lower()

    def describe(self) -> str:
        dims = "x".join("?" if s is None else str(s) for s in self.shape)
        return f"{self.name}: {dims + 'x' if dims else ''}{self.element}"


@dataclass(frozen=True)
class Signature:
    """A public function: its name, arguments and results."""

    function: str
    inputs: tuple[Arg, ...]
    results: tuple[Arg, ...]

    def arg(self, key: str) -> Arg:
        """The argument named ``key``: its name, ``argN`` or ``N``. Raises ArgumentError."""
        for a in self.inputs:
            if key in (a.name, f"arg{a.index}", str(a.index)):
                return a
        known = ", ".join(a.name if a.name == f"arg{a.index}" else f"{a.name} (arg{a.index})" for a in self.inputs)
        raise ArgumentError(f"@{self.function} has no argument {key!r}; its arguments: {known}")


def signatures(program: Program) -> list[Signature]:
    """Every public function's arguments and results, with names and index bounds where the
    program is an ONNX model."""
    found = []
    single = len(program.functions) == 1
    for f in program.functions:
        names = program.input_names if single and len(program.input_names) == len(f.inputs) else ()
        outs = program.output_names if single and len(program.output_names) == len(f.results) else ()
        inputs = []
        for i, t in enumerate(f.inputs):
            name = names[i] if names else f"arg{i}"
            inputs.append(Arg(i, name, t.shape or (), t.element or t.text, program.index_bounds.get(name), program.roles.get(name)))
        results = tuple(
            Arg(i, outs[i] if outs else f"result{i}", t.shape or (), t.element or t.text, step=program.steps.get(outs[i]) if outs else None)
            for i, t in enumerate(f.results)
        )
        found.append(Signature(f.name, tuple(inputs), results))
    return found


# --------------------------------------------------------------------------------------
# Inputs.


def parse_dims(specs: Iterable[str]) -> dict[str, int]:
    """``--dim NAME=SIZE`` values as a mapping (NAME: an ONNX dim_param or ``argN.D``)."""
    dims: dict[str, int] = {}
    for spec in specs:
        name, eq, size = spec.partition("=")
        if not eq or not name.strip() or not size.strip().isdigit() or int(size) <= 0:
            raise ArgumentError(f"--dim expects NAME=SIZE (a dim_param or argN.D, a positive integer), received {spec!r}")
        dims[name.strip()] = int(size)
    return dims


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
            raise ArgumentError(f"--input-range expects ARG=LO:HI with LO <= HI (ARG: a name, argN or N), received {spec!r}")
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
        raise ArgumentError(f"--input-range {key}={low:g}:{high:g}: {arg.name} is {arg.element}; expected integer bounds")
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


def make_inputs(signature: Signature, seed: int = 0, ranges: Mapping[str, tuple[float, float]] = {}) -> list[np.ndarray]:
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
            raise ArgumentError(f"--inputs expects one .npz or one .npy per argument, received {', '.join(map(str, files))}")
        if len(files) != len(signature.inputs):
            raise ArgumentError(f"--inputs: @{signature.function} takes {len(signature.inputs)} arguments, received {len(files)} .npy files")
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
        raise ArgumentError(f"--inputs {source}: {arg.name} expects shape {arg.static_shape}, received {tuple(array.shape)}")
    dtype = arg.dtype
    if array.dtype == dtype:
        return array
    same_kind = array.dtype.kind == dtype.kind or (array.dtype.kind in "iu" and dtype.kind in "iub") or (array.dtype.kind == "b" and dtype.kind in "iu")
    if same_kind:
        cast = array.astype(dtype)
        if np.array_equal(cast.astype(array.dtype), array) or dtype.kind == "f":
            return cast
    raise ArgumentError(f"--inputs {source}: {arg.name} expects {arg.element} ({dtype}), received {array.dtype}")


def as_declared(results: Sequence[np.ndarray], signature: Signature) -> list[np.ndarray]:
    """IREE's results with the declared dtypes: IREE returns unsigned (``ui8``) results as
    signed buffers of the same width, which are reinterpreted; i1 results become bool."""
    out = []
    for array, arg in zip(results, signature.results):
        try:
            dtype = arg.dtype
        except PayloadError:
            out.append(array)
            continue
        if array.dtype == dtype:
            out.append(array)
        elif dtype.kind == "u" and array.dtype.kind == "i" and array.dtype.itemsize == dtype.itemsize:
            out.append(array.view(dtype))
        elif dtype.kind == "b":
            out.append(array.astype(bool))
        else:
            out.append(array)
    return out


# --------------------------------------------------------------------------------------
# References and counts.


def _onnxruntime_session(model: str | bytes) -> Any:
    """An onnxruntime CPU session on one thread, quiet, for ``model`` (a path or the
    serialized model)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


INTEGER_MATMUL_OPERANDS = {
    "MatMulInteger": (0, 1), "ConvInteger": (0, 1), "MatMulIntegerToFloat": (0, 1),
    "QLinearMatMul": (0, 3), "QLinearConv": (0, 3), "QGemm": (0, 3),
}
"""ONNX (and onnxruntime contrib) ops whose 8-bit operands onnxruntime multiplies in an
integer GEMM: the positions of the two operands. (``DynamicQuantizeMatMul`` quantizes a
float A to u8 itself: A is ``uint8`` there.)"""

_ONNX_ELEMENT = {2: "uint8", 3: "int8"}


@functools.cache
def onnxruntime_integer_matmul_error(a_type: str, b_type: str) -> int:
    """How far onnxruntime's ``a_type x b_type`` (``uint8`` / ``int8``) integer matmul is
    from the exact product on this CPU: the largest absolute difference on a 16x64 by 64x32
    probe over the full range of both types. Without VNNI its x86 kernels add pairs of
    8-bit products in int16 with saturation (``vpmaddubsw``): on Zen 3 (AVX2), onnxruntime
    1.32, u8 x s8 is off by 40749 while u8 x u8 is exact."""
    from onnx import TensorProto, helper

    codes = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8}
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node], "probe",
        [helper.make_tensor_value_info("a", codes[a_type], [16, 64]), helper.make_tensor_value_info("b", codes[b_type], [64, 32])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [16, 32])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 9)
    session = _onnxruntime_session(model.SerializeToString())
    rng = np.random.default_rng(0)
    a, b = (rng.integers(np.iinfo(t).min, np.iinfo(t).max + 1, shape).astype(t) for t, shape in ((a_type, (16, 64)), (b_type, (64, 32))))
    [y] = session.run(None, {"a": a, "b": b})
    return int(np.abs(y.astype(np.int64) - a.astype(np.int64) @ b.astype(np.int64)).max())


def onnxruntime_inexact(onnx_path: Path | str) -> str:
    """Why onnxruntime is no reference for the model at ``onnx_path`` on this CPU: the
    first integer matmul (:data:`INTEGER_MATMUL_OPERANDS`) whose operand types onnxruntime
    does not multiply exactly here (:func:`onnxruntime_integer_matmul_error`); "" where
    there is none (also without onnxruntime: :func:`onnxruntime_reference` says so)."""
    if importlib.util.find_spec("onnxruntime") is None:
        return ""
    import onnx

    model = onnx.shape_inference.infer_shapes(onnx.load(str(onnx_path), load_external_data=False))
    graph = model.graph
    types = {t.name: t.data_type for t in graph.initializer}
    for info in (*graph.input, *graph.value_info, *graph.output):
        types.setdefault(info.name, info.type.tensor_type.elem_type)
    for node in graph.node:
        if node.op_type == "DynamicQuantizeMatMul" and len(node.input) > 1:
            pair = ("uint8", _ONNX_ELEMENT.get(types.get(node.input[1], 0), ""))
        elif node.op_type in INTEGER_MATMUL_OPERANDS:
            i, j = INTEGER_MATMUL_OPERANDS[node.op_type]
            if len(node.input) <= j:
                continue
            pair = (_ONNX_ELEMENT.get(types.get(node.input[i], 0), ""), _ONNX_ELEMENT.get(types.get(node.input[j], 0), ""))
        else:
            continue
        if "" in pair:
            continue
        error = onnxruntime_integer_matmul_error(*pair)
        if error:
            name = f" {node.name}" if node.name else ""
            return (
                f"onnxruntime is not compared: its {pair[0]} x {pair[1]} integer matmul ({node.op_type}{name}) is not exact on this CPU "
                f"(a full-range probe was off by {error}; without VNNI its kernels saturate sums of 8-bit products in int16)"
            )
    return ""


def onnxruntime_reference(onnx_path: Path | str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs computed by onnxruntime (CPU, one thread) for ``inputs`` in the
    order of the graph's inputs. Raises :class:`MissingExtra` without onnxruntime."""
    if importlib.util.find_spec("onnxruntime") is None:
        raise MissingExtra(f"the onnxruntime reference needs the onnxruntime package: {ONNX_EXTRA}")
    try:
        session = _onnxruntime_session(str(onnx_path))
    except Exception as err:  # onnxruntime raises its own exception classes
        raise TdslError(f"onnxruntime cannot load {onnx_path}: {str(err).strip().splitlines()[0]}") from None
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(inputs):
        raise ArgumentError(f"{onnx_path} takes {len(names)} inputs, received {len(inputs)}")
    outputs = session.run(None, dict(zip(names, inputs)))
    return [np.asarray(o) for o in outputs]
