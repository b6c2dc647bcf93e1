"""Adding a strategy kind touches its own files plus the registry list (ARCHITECTURE.md).

On a copy of the package this test adds a test-only kind, ``Annotate`` (a tuning-spec
action that puts a unit attribute on the matched op), as exactly three edits: its model
module, its template, and one line of ``tdsl.model.registry``. The copy then loads a
strategy file that uses it, renders and verifies the tuning spec, compiles a payload with
it and finds the attribute on the configured op; nothing else in the package changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.compile

MODEL = '''
"""``Annotate``: puts the unit attribute ``attribute`` on each matched op (a tuning-spec action)."""

from __future__ import annotations

from typing import ClassVar, Literal

from .base import SymbolName
from .kinds import Backend, Injection, StrategyKind


class Annotate(StrategyKind):
    """Emits ``transform.annotate %op "<attribute>"`` in the codegen tuning spec."""

    injection: ClassVar[Injection] = Injection.TUNING_SPEC
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU, Backend.ROCM})
    template: ClassVar[str] = "strategies/annotate.mlir.j2"

    kind: Literal["annotate"] = "annotate"
    name: SymbolName
    attribute: SymbolName
'''

TEMPLATE_FILE = ROOT / "tests" / "new_kind" / "annotate.mlir.j2"

SCRIPT = """
import sys
import tdsl
from tdsl.model.registry import STRATEGY_KINDS

assert tdsl.__file__.startswith(sys.argv[3]), tdsl.__file__
assert [k.__name__ for k in STRATEGY_KINDS][-1] == "Annotate"
strategies = tdsl.StrategySet.model_validate({
    "name": "annotated",
    "targets": [{"kind": "llvm-cpu", "name": "cpu"}],
    "rules": [{
        "target": "cpu",
        "match": {"kind": "contraction", "lhs_type": "f32", "rhs_type": "f32", "output_type": "f32"},
        "strategy": {"kind": "annotate", "name": "mark", "attribute": "my_mark"},
    }],
})
rendered = tdsl.render(strategies, "cpu")
assert [s.injection.value for s in rendered.scripts] == ["tuning_spec"], rendered.scripts
assert 'transform.annotate %op "my_mark"' in rendered.scripts[0].text
report = tdsl.compile(sys.argv[1], strategies, "cpu", keep_dump=sys.argv[2])
assert all(rule.applied for rule in report.rules), report.text()
print(report.text())
"""


def test_a_new_strategy_kind_is_its_module_its_template_and_one_registry_line(tmp_path: Path) -> None:
    package = tmp_path / "site" / "tdsl"
    shutil.copytree(ROOT / "dsl", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", package / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(package): p.read_bytes() for p in package.rglob("*") if p.is_file()}

    (package / "model" / "annotate.py").write_text(textwrap.dedent(MODEL).lstrip())
    shutil.copy(TEMPLATE_FILE, package / "templates" / "strategies" / "annotate.mlir.j2")
    registry = package / "model" / "registry.py"
    text = registry.read_text()
    text = text.replace("\nSTRATEGY_KINDS", "\nfrom .annotate import Annotate  # noqa: E402\n\nSTRATEGY_KINDS", 1)
    text = text.replace("    Codegen,\n)", "    Codegen,\n    Annotate,\n)", 1)
    assert "Annotate,\n)" in text
    registry.write_text(text)

    after = {p.relative_to(package): p.read_bytes() for p in package.rglob("*") if p.is_file()}
    changed = sorted(str(p) for p in after if before.get(p) != after[p])
    assert changed == ["model/annotate.py", "model/registry.py", "templates/strategies/annotate.mlir.j2"]

    env = {**os.environ, "PYTHONPATH": str(package.parent)}
    dump = tmp_path / "dump"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(ROOT / "examples" / "matmul_pack" / "payload.mlir"),
            str(dump),
            str(package),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    configured = "".join(p.read_text() for p in dump.glob("configured_module_*.mlir"))
    assert "my_mark" in configured
