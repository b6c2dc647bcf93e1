"""``tdsl import``: transform-dialect specs (tuning specs, preprocessing specs, codegen
libraries; hand-written, IREE's, tuners', or tdsl's own renders) as editable strategy sets.

* :func:`import_spec` -- the :class:`~tdsl.StrategySet` of one spec file;
* :func:`read_file` / :func:`read_spec` -- the same with what the import changed
  (:class:`Imported`: notes, renamed sequences, raw escape hatches);
* :func:`import_specs` / :func:`merge` -- the set behind several scripts tdsl rendered
  (every target and injection point), rules at their original indices;
* :func:`write_python` / :func:`write_yaml` -- a readable Python module or YAML file;
* :func:`import_command` -- the body of the ``tdsl import`` command line.

A construct tdsl cannot express is a :class:`SpecImportError` naming the op, its line and
what is missing; ``allow_raw`` keeps such a matcher or action as verified raw MLIR
(:mod:`tdsl.model.raw`).
"""

from __future__ import annotations

from .command import import_command
from .entry import sanitize
from .problems import Note, SpecImportError
from .spec import Imported, ImportedRule, import_spec, import_specs, merge, read_file, read_spec
from .writer import write_python, write_yaml

__all__ = [
    "Imported",
    "ImportedRule",
    "Note",
    "SpecImportError",
    "import_command",
    "import_spec",
    "import_specs",
    "merge",
    "read_file",
    "read_spec",
    "sanitize",
    "write_python",
    "write_yaml",
]
