"""The result of rendering: :class:`Script` (one verified script and its injection point)
and :class:`Rendered` (every script of one strategy set for one target, the
``iree-compile`` flags that inject them, writing them out with
:func:`tdsl.files.atomic_write`).

Injection points and the files they produce:

============== ========================= =============================================
injection      file                      flag
============== ========================= =============================================
preprocessing  ``preprocessing.mlir``    ``--iree-preprocessing-transform-spec-filename``
tuning spec    ``tuning_spec.mlir``      ``--iree-codegen-tuning-spec-path``
codegen lib    ``codegen_library.mlir``  ``--iree-codegen-transform-dialect-library``
============== ========================= =============================================
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..files import replace_files
from ..model.kinds import Injection
from ..targets import Target

# IREE 3.13 can deadlock when several executables load a tuning spec or codegen library
# in parallel: gdb on a hung iree-compile shows a worker blocked on the mutex in
# IREECodegenDialect::getOrLoadTransformLibraryModule (MaterializeTuningSpecsPass) and the
# main thread waiting for it. Seen here in about 1 of 15-60 compiles of
# examples/cpu_auto (300 s CI timeouts). Single-threaded pass execution avoids it, at
# about 20 % more compile time (cpu_auto: 1.2-1.3 s -> 1.4-1.5 s).
SERIAL_LOADING = "--mlir-disable-threading"

FLAGS_FILE = "flags.txt"
RENDER_FILES = tuple(f"{injection.value}.mlir" for injection in Injection) + (FLAGS_FILE,)
"""Every file a render may write: a render removes those of an earlier one it does not write."""

FLAG = {
    Injection.PREPROCESSING: "--iree-preprocessing-transform-spec-filename",
    Injection.TUNING_SPEC: "--iree-codegen-tuning-spec-path",
    Injection.CODEGEN_LIBRARY: "--iree-codegen-transform-dialect-library",
}
"""The ``iree-compile`` flag that injects the script of each injection point."""


@dataclass(frozen=True)
class Script:
    """One rendered, verified script and the injection point it is for."""

    injection: Injection
    text: str

    @property
    def filename(self) -> str:
        return f"{self.injection}.mlir"

    def flag(self, directory: Path | str) -> str:
        return f"{FLAG[self.injection]}={Path(directory).resolve() / self.filename}"


@dataclass(frozen=True)
class Rendered:
    """The scripts of one StrategySet for one target, and the flags that inject them.

    ``shadowed``: one line per rule that can never fire because an earlier rule of the same
    ``transform.foreach_match`` certainly matches every op it matches
    (``"rules[3] (mm_tiles) is shadowed by rules[1] (mm_all)"``; see
    :func:`tdsl.render.render.shadowed_rules`). No scripts (a set without rules for the
    target) means IREE's default pipeline: :meth:`flags` gives the target's flags only."""

    strategy_set: str
    target: Target
    scripts: tuple[Script, ...]
    shadowed: tuple[str, ...] = ()

    def script(self, injection: Injection | str) -> Script | None:
        """The script for ``injection`` (an :class:`Injection` or its value), if rendered."""
        for script in self.scripts:
            if script.injection == injection:
                return script
        return None

    def flags(self, directory: Path | str, include_target: bool = True) -> list[str]:
        """``iree-compile`` flags: the target's, then one per script written to ``directory``,
        plus :data:`SERIAL_LOADING` when a codegen-phase script is injected."""
        flags = list(self.target.compile_flags()) if include_target else []
        flags += [s.flag(directory) for s in self.scripts]
        if any(s.injection in (Injection.TUNING_SPEC, Injection.CODEGEN_LIBRARY) for s in self.scripts):
            flags.append(SERIAL_LOADING)
        return flags

    def files(self, directory: Path | str) -> dict[str, str]:
        """{file name: text}: every script and ``flags.txt`` (flags for ``directory``)."""
        files = {script.filename: script.text for script in self.scripts}
        files[FLAGS_FILE] = "\n".join(self.flags(directory)) + "\n"
        return files

    def write(self, directory: Path | str) -> list[Path]:
        """Makes ``directory`` hold exactly this render's scripts and ``flags.txt``, swapped
        in as one set (:func:`tdsl.files.replace_files`): scripts an earlier render left
        there and this one does not write are removed, other files are left alone, and an
        interrupted write leaves the earlier set intact. Returns the paths."""
        return replace_files(directory, self.files(directory), owned=RENDER_FILES)
