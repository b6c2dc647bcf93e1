"""Parameter archives (``.irpa``): programs whose weights the module reads at load.

* :func:`externalize_weights` gives the same ``.onnx`` program with its weights in a
  parameter archive that the module reads at load, as IREE deploys large models: what
  ``tdsl tune`` builds its candidates from, so each build holds code only.
* :func:`parse_parameters` reads ``--parameters SCOPE=FILE.irpa``; :func:`check_runnable`
  refuses a program that names a scope no archive covers.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from ..errors import ArgumentError
from ..files import atomic_write
from .onnx_import import DEFAULT_IMPORT_TIMEOUT_S, import_onnx
from .program import EXTERNAL_MIN_ELEMENTS, PARAMETER_SCOPE, ParameterArchive, Program


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
        import_onnx(program.import_path, mlir_path, timeout_s, archive)
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
