"""IR of a payload after a phase, with tdsl's scripts injected, normalized for goldens.

Two ways to produce it:

* ``compile``: ``iree-compile --compile-to=<phase>`` with the rendered flags (any phase);
* ``interpreter``: the preprocessing script applied in process with the transform
  interpreter (``iree.compiler.dialects.transform.interpreter``) to the payload as
  written (no IREE input conversion, so functions stay ``func.func``) - milliseconds.

Normalization strips locations, renumbers nothing (the printer already numbers SSA
values deterministically) and elides target attributes that differ between machines
(CPU features, data layouts, target triples), so a golden is stable across hosts.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import overload

from .. import bindings as mlir
from ..errors import TdslError
from ..model.kinds import Phase
from ..render import PREPROCESSING, Rendered, render
from ..sets.loader import as_strategy_set
from ..sets.strategy_set import StrategySet
from .flags import with_threading
from .iree_compile import CompileFailed, run_iree_compile
from .options import DEFAULT_OPTIONS, CompileOptions

_NOISY = [
    (re.compile(r'cpu_features = "[^"]*"'), 'cpu_features = "..."'),
    (re.compile(r'cpu = "[^"]*"'), 'cpu = "..."'),
    (re.compile(r'data_layout = "[^"]*"'), 'data_layout = "..."'),
    (re.compile(r'target_triple = "[^"]*"'), 'target_triple = "..."'),
    (re.compile(r"native_vector_size = \d+ : i64"), "native_vector_size = ..."),
    (re.compile(r"\s*loc\([^()]*(\([^()]*\))?[^()]*\)"), ""),
    (re.compile(r"^#loc\d* = .*\n", re.M), ""),
]


def normalize(text: str) -> str:
    """``text`` with locations and host-specific target attributes elided."""
    for pattern, replacement in _NOISY:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"


def ir_after(
    payload: Path | str,
    strategies: StrategySet | str | Path,
    target: str,
    phase: str | Phase,
    mode: str = "compile",
) -> str:
    """Normalized IR of ``payload`` after ``phase`` with ``strategies`` injected."""
    strategy_set = as_strategy_set(strategies)
    rendered = render(strategy_set, target)
    if mode == "interpreter":
        if phase != Phase.PREPROCESSING:
            raise TdslError(f"mode 'interpreter' produces the preprocessing phase only, not {phase!r}")
        script = rendered.script(PREPROCESSING)
        if script is None:
            raise TdslError(f"strategy set {strategy_set.name!r} has no data_layout rule for {target!r}")
        return normalize(mlir.apply_transform(Path(payload).read_text(), script.text, "__transform_main"))
    if mode != "compile":
        raise TdslError(f"mode: expected 'compile' or 'interpreter', received {mode!r}")
    with tempfile.TemporaryDirectory(prefix="tdsl-ir-") as tmp:
        rendered.write(tmp)
        return normalize(compile_to_phase(Path(payload), rendered, Path(tmp), phase_of(phase, "phase")))


PHASES = tuple(p.value for p in Phase)


@overload
def phase_of(name: None, field: str = ...) -> None: ...
@overload
def phase_of(name: str | Phase, field: str = ...) -> Phase: ...
def phase_of(name: str | Phase | None, field: str = "--dump-ir") -> Phase | None:
    """The phase called ``name``; ``field`` names the argument in the error."""
    if name is None or isinstance(name, Phase):
        return name
    if name not in PHASES:
        raise CompileFailed(f"{field}: expected one of {', '.join(PHASES)}, received {name!r}")
    return Phase(name)


def compile_to_phase(
    payload: Path,
    rendered: Rendered,
    scripts: Path,
    phase: Phase,
    options: CompileOptions = DEFAULT_OPTIONS,
) -> str:
    """The payload's IR after ``phase`` with the rendered scripts injected (and
    ``options``' extra flags after them)."""
    with tempfile.TemporaryDirectory(prefix="tdsl-ir-") as tmp:
        out = Path(tmp) / f"{phase}.mlir"
        flags = [
            *with_threading(rendered.flags(scripts), options.serial_loading),
            *options.extra_flags,
            f"--compile-to={phase}",
        ]
        run_iree_compile(payload, flags, out, options)
        return out.read_text()
