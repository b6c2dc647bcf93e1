"""Loading programs: ``.onnx`` models (imported) and ``.mlir`` files, with dimensions set.

* :func:`load_program` imports ``.onnx`` with ``iree-import-onnx`` (the optional extra
  ``tdsl[onnx]``) into a cache file, under a timeout; it refills weights that
  ``examples/models/export.py`` stripped (:func:`tdsl.programs.weights.refill_weights`),
  applies the import fixes (:func:`tdsl.programs.onnx_import.import_fixes`), sets dynamic
  dimensions from ``--dim NAME=SIZE`` (:func:`parse_dims`) and refuses a dynamic dimension
  that is left, naming the argument, the dimension and the ``--dim`` that fixes it.
* :func:`program_of` is what ``tdsl run`` / ``bench`` / ``ops`` take: a path or a loaded
  program; a linalg payload gets one-line errors (:func:`payload_signatures`).

Requires ``iree-base-compiler`` (parsing types, through :mod:`tdsl.bindings`); ``.onnx``
models need ``pip install 'tdsl[onnx]'``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .. import bindings as mlir
from ..errors import ArgumentError, ParseFailure, PayloadError, RunFailed
from ..files import atomic_write, cache_root
from .onnx_import import DEFAULT_IMPORT_TIMEOUT_S, import_fixes, import_onnx, require_onnx
from .parameters import parse_parameters
from .precision import F64_NOTE, KEEP_F64, signature_flags
from .program import Program
from .quantization import output_steps, quantization_roles
from .weights import refill_weights

if TYPE_CHECKING:  # the onnx package is an optional extra
    import onnx


class DynamicShapeError(PayloadError):
    """An argument with a dynamic (or unknown) dimension; the message names the argument, the
    dimension and the ``--dim NAME=SIZE`` that makes it static."""


def cache_dir() -> Path:
    """Where imported models are kept: ``$TDSL_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdsl``
    (``~/.cache/tdsl``), then ``onnx/`` under it. Entries are named by a hash of the model
    after refilling and setting dimensions, and of the compiler version."""
    return cache_root() / "onnx"


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


PAYLOAD_FILES = "a payload file (.mlir or .onnx)"


def not_a_payload(path: Path, what: str = "payload") -> str | None:
    """None when ``path`` is a regular file; else the one-line problem: what was expected
    (a payload file) and what was received (a directory, nothing, a special file)."""
    if path.is_file():
        return None
    received = "a directory" if path.is_dir() else "a special file" if path.exists() else "a path that does not exist"
    return f"{what} {str(path)!r}: expected {PAYLOAD_FILES}, received {received}"


def load_program(
    path: Path | str,
    *,
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    timeout_s: float = DEFAULT_IMPORT_TIMEOUT_S,
    parameters: Sequence[str] = (),
    dynamic: bool = False,
) -> Program:
    """Loads an ``.onnx`` model or an ``.mlir`` program (torch/ONNX dialect or linalg).

    ``parameters`` (``SCOPE=FILE.irpa`` or ``FILE.irpa`` for the scope ``model``) are the
    archives an ``.mlir`` program's parameter globals read at load
    (``#stream.parameter.named<"model"::"w">``, as ``iree-import-onnx --externalize-params``
    or iree-turbine write them); see :func:`~tdsl.programs.parameters.parse_parameters`.

    ``dims`` sets dynamic dimensions: the key is an ONNX ``dim_param`` (``batch``), or
    ``argN.D`` (argument N, dimension D; for ``.onnx`` also ``<input name>.D``). For
    ``.onnx`` the dimension is set in a copy of the model before import; for ``.mlir`` the
    argument gets the static type and a cast at the function entry. A model whose weights
    were stripped (:data:`STRIP_MARKER`) gets them drawn again from ``weights_seed``
    (:func:`~tdsl.programs.weights.refill_weights`). Raises :class:`DynamicShapeError` for a dynamic dimension
    that is left, :class:`ArgumentError` for a ``dims`` key that names nothing,
    :class:`MissingExtra` without ``tdsl[onnx]``, :class:`ImportFailed`. With ``dynamic``
    (a program that is only compiled and listed, never run), a dynamic dimension ``dims`` does
    not set stays dynamic (noted) instead.
    """
    source = Path(path)
    problem = not_a_payload(source, "program")
    if problem is not None:
        raise ArgumentError(problem)
    suffix = source.suffix.lower()
    if suffix == ".onnx":
        if parameters:
            raise ArgumentError(
                "--parameters: expected an .mlir program that names parameters, received an .onnx model (its weights are in the model)"
            )
        return _with_precision_note(_load_onnx(source, dict(dims), weights_seed, timeout_s, dynamic))
    if suffix == ".mlir":
        return _with_precision_note(
            replace(_load_mlir(source, dict(dims), dynamic), parameters=parse_parameters(parameters))
        )
    raise ArgumentError(
        f"program {str(source)!r}: expected an .onnx model or an .mlir file, received a {suffix or 'suffix-less'} file"
    )


def _with_precision_note(program: Program) -> Program:
    """``program`` with :data:`~tdsl.programs.precision.F64_NOTE` when its signatures hold f64."""
    if KEEP_F64 in signature_flags(program.functions):
        return replace(program, notes=(*program.notes, F64_NOTE))
    return program


DYNAMIC_NOTE = "dynamic dimensions left dynamic (-1 in the matchers); pass --dim NAME=SIZE for a static build"


def _left_dynamic(functions: Sequence[mlir.FunctionTypes], names: Sequence[str], notes: list[str]) -> None:
    """Notes that a dynamic dimension stays dynamic (after checking every argument is a
    ranked tensor, as :func:`_check_static` does)."""
    for function in functions:
        try:
            _check_static(function, names)
        except DynamicShapeError as err:
            if "is unranked" in str(err):
                raise
            notes.append(DYNAMIC_NOTE)
            return


def _load_mlir(source: Path, dims: dict[str, int], dynamic: bool = False) -> Program:
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
    if dynamic:
        _left_dynamic(functions, (), notes)
    for function in functions if not dynamic else ():
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
        f"arg{i}.{d}"
        for f in functions
        for i, t in enumerate(f.inputs)
        for d, size in enumerate(t.shape or ())
        if size is None
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
                    raise ArgumentError(
                        f"--dim {key}={size}: dimension {dim} of arg{index} of @{function.name} is static ({t.shape[dim]})"
                    )
                hit = True
                continue
            current = updates.setdefault(function.name, {})
            shape = list(_parse_type_shape(current.get(index), t))
            shape[dim] = size
            current[index] = _spell(t, tuple(shape))
            hit = True
        if not hit:
            raise ArgumentError(
                f"--dim {key}={size}: no argument has that dimension; dynamic dimensions: {', '.join(sorted(set(dynamic))) or 'none'}"
            )
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
        label = (
            f"input {names[index]!r} (arg{index})" if index < len(names) else f"argument arg{index} of @{function.name}"
        )
        if t.dialect == "other":
            raise PayloadError(f"{label} has type {t.text}; tdsl feeds tensor arguments only")
        if t.shape is None:
            raise DynamicShapeError(
                f"{label} is unranked ({t.text}); tdsl compiles static shapes: give the argument a ranked, static type"
            )
        for dim, size in enumerate(t.shape):
            if size is None:
                raise DynamicShapeError(
                    f"{label}: dimension {dim} is dynamic ({t.text}); tdsl compiles static shapes: pass --dim arg{index}.{dim}=SIZE"
                )


def _load_onnx(source: Path, dims: dict[str, int], seed: int, timeout_s: float, dynamic: bool = False) -> Program:
    onnx_module = require_onnx()
    try:
        model = onnx_module.load(str(source))
    except Exception as err:  # protobuf DecodeError and friends
        raise ArgumentError(f"{source}: not a readable ONNX model ({type(err).__name__}: {err})") from None
    notes: list[str] = []
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    names = tuple(i.name for i in inputs)
    _apply_onnx_dims(model, inputs, dims, dynamic)
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
        import_onnx(to_import, imported, timeout_s)
    functions = tuple(mlir.function_types(imported.read_text()))
    if dynamic:
        _left_dynamic(functions, names, notes)
    for function in functions if not dynamic else ():
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


def _apply_onnx_dims(
    model: "onnx.ModelProto", inputs: Sequence[Any], dims: Mapping[str, int], dynamic: bool = False
) -> None:
    """Sets ``dims`` in ``model`` (in place): a dynamic input dimension takes the size given
    for its dim_param, ``argN.D`` or ``<input name>.D``; a dim_param elsewhere (outputs,
    value infos) takes the same size. Raises ArgumentError for a key that names no dimension
    or a static one of another size, DynamicShapeError for a dynamic dimension left (unless
    ``dynamic``)."""
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
                        raise ArgumentError(
                            f"--dim {k}={dims[k]}: dimension {d} of input {value.name!r} is static ({dim.dim_value})"
                        )
                used.update(k for k in keys if k in dims)
                continue
            param = dim.dim_param if dim.HasField("dim_param") else ""
            name = param or f"arg{index}.{d}"
            available.append(name)
            given = [k for k in ([param] if param else []) + keys if k in dims]
            used.update(given)
            if not given:
                left.append(
                    (
                        f"input {value.name!r} (arg{index}): dimension {d} is dynamic"
                        + (f" ({param!r})" if param else ""),
                        name,
                    )
                )
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
    if left and not dynamic:
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


def parse_dims(specs: Iterable[str]) -> dict[str, int]:
    """``--dim NAME=SIZE`` values as a mapping (NAME: an ONNX dim_param or ``argN.D``)."""
    dims: dict[str, int] = {}
    for spec in specs:
        name, eq, size = spec.partition("=")
        if not eq or not name.strip() or not size.strip().isdigit() or int(size) <= 0:
            raise ArgumentError(
                f"--dim expects NAME=SIZE (a dim_param or argN.D, a positive integer), received {spec!r}"
            )
        dims[name.strip()] = int(size)
    return dims


def _does_not_parse(payload: Path, err: ParseFailure) -> RunFailed:
    first = err.diagnostics[0]
    where = f"{payload}:{first.line}:{first.column}" if first.line else str(payload)
    return RunFailed(f"{where}: the payload does not parse: {first.message}")


def payload_signatures(payload: Path) -> tuple[str, list[mlir.FunctionSignature]]:
    """The payload's text and the signatures of its public functions; a payload that is
    missing, does not parse or has arguments tdsl cannot feed is a one-line error."""
    problem = not_a_payload(payload)
    if problem is not None:
        raise PayloadError(problem)
    try:
        text = payload.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise PayloadError(f"payload {str(payload)!r} cannot be read: {err}") from None
    try:
        functions = mlir.signatures(text)
    except ParseFailure as err:
        raise _does_not_parse(payload, err) from None
    except PayloadError as err:
        raise PayloadError(f"{payload}: {err}") from None
    return text, functions


def program_of(
    payload: Path | str | Program,
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    parameters: Sequence[str] = (),
    dynamic: bool = False,
) -> Program:
    """``payload`` as a :class:`~tdsl.programs.program.Program`: an ``.onnx`` model is imported,
    an ``.mlir`` file read (torch/ONNX dialect or linalg); ``dims`` fix dynamic dimensions,
    ``parameters`` name the archives of its parameter globals (``SCOPE=FILE.irpa``).
    A linalg payload is checked as :func:`payload_signatures` does (one-line errors); with
    ``dynamic`` (a program only listed), dynamic dimensions may stay (:func:`load_program`)."""
    if isinstance(payload, Program):
        return payload
    path = Path(payload)
    if (problem := not_a_payload(path)) is not None:
        raise PayloadError(problem)
    if path.suffix.lower() == ".mlir" and not dims:
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as err:
            raise PayloadError(f"payload {str(path)!r} cannot be read: {err}") from None
        if "!torch." not in text and not dynamic:
            payload_signatures(path)
        elif dynamic:
            try:
                mlir.function_types(text)
            except ParseFailure as err:
                raise _does_not_parse(path, err) from None
    return load_program(path, dims=dims, weights_seed=weights_seed, parameters=parameters, dynamic=dynamic)
