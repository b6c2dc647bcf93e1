"""The body of ``tdsl import SPEC [-o OUT.py|OUT.yaml|OUT.json] [--target T] [--allow-raw]``.

Reads the spec (:func:`~tdsl.importer.spec.read_file`), renders and verifies the imported
set for its target (what ``tdsl render`` would write), and writes it as a Python module
(``.py``, also what goes to stdout without ``-o``), YAML or JSON. What the import changed
is printed to stderr, one line each, then a summary line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence, TextIO, Union

from ..errors import OutputError
from ..files import atomic_write
from ..render import render
from ..sets.loader import dump
from .spec import Imported, merge, read_file
from .writer import write_python, write_yaml

SUFFIXES = (".py", ".yaml", ".yml", ".json")


WARNING = ": warning: "
"""What a note that is a warning says after its place (a rule left out or never applied)."""


def import_command(
    spec: Union[Path, Sequence[Path]],
    output: Optional[Path],
    target: Optional[str],
    allow_raw: bool,
    kind: Optional[str] = None,
    stdout: Optional[TextIO] = None,
    stderr: Optional[TextIO] = None,
    quiet: bool = False,
) -> int:
    """Imports ``spec`` and writes the set to ``output`` (by its suffix) or, without one, the
    Python module to ``stdout``. Several specs are the scripts tdsl rendered for one set
    (each target and injection point): they are merged, rules at their original indices.
    Returns 0; raises :class:`~tdsl.importer.SpecImportError` (exit 2 on the command line)
    for a spec it cannot import. ``quiet`` prints no notes but warnings (a rule left out or
    never applied; the summary line stays), and an
    output that cannot be written is an :class:`~tdsl.errors.OutputError` naming it as
    given."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if output is not None and output.suffix.lower() not in SUFFIXES:
        raise OutputError(
            f"{output}: expected a .py, .yaml, .yml or .json output file, received {output.suffix or 'no suffix'!r}"
        )
    specs = [spec] if isinstance(spec, (str, Path)) else list(spec)
    imports: list[Imported] = [read_file(p, target, allow_raw, kind) for p in specs]
    imported = imports[0]
    if len(imports) > 1:
        merged = merge(imports)
        imported = Imported(
            merged,
            imported.injection,
            imported.target,
            [r for i in imports for r in i.rules],
            [n for i in imports for n in i.notes if "merge them with import_specs" not in n.text],
            {},
            [n for i in imports for n in i.raw],
            True,
            ", ".join(str(p) for p in specs),
        )
    for t in {r.rule.target for r in imported.rules}:
        render(imported.strategy_set, t)  # verifies what the set renders
    notes = (
        [line for i in imports for line in i.report() if "merge them with import_specs" not in line]
        if len(imports) > 1
        else imported.report()
    )
    spec = Path(imported.path) if len(imports) == 1 else Path(specs[0])
    suffix = output.suffix.lower() if output is not None else ".py"
    if suffix == ".py":
        text = write_python(imported.strategy_set, imported.path, notes)
    elif suffix == ".json":
        text = dump(imported.strategy_set, "json")
    else:
        text = write_yaml(imported.strategy_set, imported.path, notes)
    if output is None:
        out.write(text)
    else:
        try:
            atomic_write(output, text)
        except OSError as error:
            reason = (error.strerror or type(error).__name__).lower()
            raise OutputError(f"-o {str(output)!r}: the output cannot be written ({reason})") from None
    for line in [n for n in notes if WARNING in n] if quiet else notes:
        print(line, file=err)
    raw = f", {len(imported.raw)} kept as raw MLIR ({', '.join(imported.raw)})" if imported.raw else ""
    where = f" to {output}" if output is not None else ""
    print(
        f"imported {len(imported.rules)} rule(s) of {imported.path} ({imported.injection}) for target {imported.target}{raw}{where}",
        file=err,
    )
    return 0
