"""Checking an import on a payload: compile it with the original spec and with what tdsl
renders from the imported set, and compare the configured dispatches.

Both builds stop after ``executable-configurations`` with IREE's default tuning specs off,
so only the spec under test configures ops. A preprocessing spec rewrites the graph
instead: both builds stop after ``preprocessing`` and every op is compared, by function,
name and attributes (tdsl's markers left out), in order (:func:`rewritten`). For every dispatch function the comparison
holds its ``translation_info`` and, for each op, its ``lowering_config`` and
``decomposition_config`` (tdsl's markers are left out): equal lists mean the imported set
selects and configures the same ops. A spec written for an older IREE is compiled in its
upgraded form (:attr:`Imported.upgraded`), the form IREE 3.13 parses; a codegen library
whose entry point is not ``__kernel_config`` is run as ``<file>@<entry>``, as its users do.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from .. import bindings
from ..compiler.iree_compile import run_iree_compile
from ..model.kinds import Injection
from ..render import render
from ..render.scripts import FLAG, SERIAL_LOADING
from ..targets import Target
from .spec import Imported

DEFAULT_SPECS_OFF = "--iree-codegen-enable-default-tuning-specs=false"
KEPT = ("translation_info", "lowering_config", "compilation_info", "decomposition_config")


@dataclass(frozen=True)
class DispatchConfig:
    """One configured op (or the dispatch function itself): its dispatch, op name and the
    configuration attributes it carries, as printed."""

    dispatch: str
    op: str
    attributes: tuple[tuple[str, str], ...]

    def line(self) -> str:
        return f"{self.dispatch}: {self.op} " + ", ".join(f"{k} = {v}" for k, v in self.attributes)


@dataclass(frozen=True)
class Comparison:
    """The configured dispatches of a payload compiled with the original spec and with the
    imported set's render; ``same`` when they agree."""

    original: tuple[DispatchConfig, ...]
    imported: tuple[DispatchConfig, ...]

    @property
    def same(self) -> bool:
        return self.original == self.imported

    def differences(self) -> list[str]:
        """``- original`` / ``+ imported`` lines where they differ."""
        out = []
        for a in self.original:
            if a not in self.imported:
                out.append("- " + a.line())
        for b in self.imported:
            if b not in self.original:
                out.append("+ " + b.line())
        return out


def configured(payload: Path, flags: Sequence[str]) -> tuple[DispatchConfig, ...]:
    """The configured dispatches of ``payload`` compiled with ``flags``."""
    with tempfile.TemporaryDirectory(prefix="tdsl-import-check-") as tmp:
        out = Path(tmp) / "configured.mlir"
        run_iree_compile(payload, [*flags, DEFAULT_SPECS_OFF, "--compile-to=executable-configurations"], out)
        text = out.read_text()
    found = []
    for op in bindings.walk(text):
        attributes = tuple((k, op.attributes[k]) for k in KEPT if k in op.attributes)
        if attributes:
            found.append(DispatchConfig(op.function or "", op.name, attributes))
    return tuple(found)


def rewritten(payload: Path, flags: Sequence[str]) -> tuple[DispatchConfig, ...]:
    """Every op of ``payload`` after the ``preprocessing`` phase with ``flags``: its
    function, name and attributes, tdsl's markers (``tdsl.*``) left out."""
    with tempfile.TemporaryDirectory(prefix="tdsl-import-check-") as tmp:
        out = Path(tmp) / "preprocessed.mlir"
        run_iree_compile(payload, [*flags, "--compile-to=preprocessing"], out)
        text = out.read_text()
    return tuple(
        DispatchConfig(
            op.function or "",
            op.name,
            tuple((k, v) for k, v in sorted(op.attributes.items()) if not k.startswith("tdsl.")),
        )
        for op in bindings.walk(text)
    )


def compare(imported: Imported, payload: Path | str, target: Optional[Target] = None) -> Comparison:
    """Compiles ``payload`` with the original spec (its upgraded text) and with the imported
    set's render for its target, and compares the configured dispatches (for a
    preprocessing spec: the rewritten graph, :func:`rewritten`)."""
    model = target or imported.strategy_set.target(imported.target)
    outputs = rewritten if imported.injection is Injection.PREPROCESSING else configured
    with tempfile.TemporaryDirectory(prefix="tdsl-import-check-") as tmp:
        original = Path(tmp) / "original.mlir"
        original.write_text(imported.upgraded)
        # a codegen library runs __kernel_config unless the flag names another entry point
        named = imported.injection is Injection.CODEGEN_LIBRARY and imported.entry not in ("", "__kernel_config")
        spec = f"{original}@{imported.entry}" if named else str(original)
        before = outputs(Path(payload), [*model.compile_flags(), f"{FLAG[imported.injection]}={spec}", SERIAL_LOADING])
        rendered = render(imported.strategy_set, imported.target)
        scripts = Path(tmp) / "rendered"
        rendered.write(scripts)
        after = outputs(Path(payload), rendered.flags(scripts))
    return Comparison(before, after)
