"""The program-level ``iree-compile`` flags a program's element types call for.

IREE demotes f64 to f32 by default (``--iree-input-demote-f64-to-f32`` is on): a program
whose function signatures hold f64 then compiles to a module that expects f32 buffers, and
running it with f64 arrays fails (``OUT_OF_RANGE``). :func:`program_flags` gives
:data:`KEEP_F64` for such a program; :func:`~tdsl.compiler.iree_compile.run_iree_compile`
puts it first in every build tdsl makes, unless the command already sets that option (a
user's ``--iree-flag`` wins), and :data:`F64_NOTE` says so.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Sequence

from .. import bindings as mlir
from ..errors import TdslError

DEMOTE_F64 = "--iree-input-demote-f64-to-f32"
KEEP_F64 = f"{DEMOTE_F64}=false"
F64_NOTE = (
    f"f64 kept: the program's signatures hold f64, so every build passes {KEEP_F64} (IREE demotes f64 "
    f"to f32 by default; --iree-flag={DEMOTE_F64}=true demotes)"
)


def describe(flags: Sequence[str]) -> str:
    """What the program flags ``flags`` do, for a report line."""
    reasons = {KEEP_F64: "f64 kept: the signatures hold f64"}
    return "; ".join(f"{f} ({reasons.get(f, 'called for by the program')})" for f in flags)


# f64 as a type (``tensor<4xf64>``, ``: f64``, ``,f64>``), not inside a hex weight blob.
_F64_TYPE = re.compile(r"[x<,(:\s]f64(?![0-9A-Za-z_])")


def _holds_f64(types: Sequence[mlir.ValueType]) -> bool:
    return any(t.element == "f64" for t in types)


def signature_flags(functions: Sequence[mlir.FunctionTypes]) -> tuple[str, ...]:
    """:data:`KEEP_F64` when an argument or result of ``functions`` holds f64, else nothing."""
    return (KEEP_F64,) if any(_holds_f64(f.inputs) or _holds_f64(f.results) for f in functions) else ()


@functools.lru_cache(maxsize=64)
def _text_flags(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    text = Path(path).read_text(errors="replace")
    if _F64_TYPE.search(text) is None:  # most programs: no parse
        return ()
    try:
        return signature_flags(mlir.function_types(text))
    except TdslError:  # does not parse: iree-compile reports that itself
        return ()


def program_flags(payload: Path, command: Sequence[str] = ()) -> tuple[str, ...]:
    """The flags the program in ``payload`` calls for (:func:`signature_flags`), less those
    whose option ``command`` sets already; nothing for a payload that cannot be read."""
    try:
        stat = payload.stat()
        flags = _text_flags(str(payload.resolve()), stat.st_mtime_ns, stat.st_size)
    except (OSError, UnicodeDecodeError):
        return ()
    return tuple(f for f in flags if not any(c.split("=")[0] == f.split("=")[0] for c in command))
