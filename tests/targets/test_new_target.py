"""Adding a target kind is its module plus one registry line (ARCHITECTURE.md).

On a copy of the package this test adds a test-only target, ``FakeCpuTarget`` (llvm-cpu
code for the generic x86-64 CPU under the name ``fake``), as exactly two edits: its module
under ``tdsl/targets/`` and one line of ``tdsl.targets.registry``. The copy then loads a
strategy file for it, renders and verifies the tuning spec, compiles a payload with it (by
name and as a model), and lists the payload's ops with ``tdsl ops --target fake``; nothing
else in the package changed.
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
PAYLOAD = ROOT / "examples" / "matmul_pack" / "payload.mlir"
pytestmark = pytest.mark.compile

TARGET = '''
"""``FakeCpuTarget``: llvm-cpu code for the generic x86-64 CPU, under a name of its own."""

from __future__ import annotations

from typing import ClassVar, Literal

from ..model.base import SymbolName
from ..model.kinds import Backend, MatcherKind, StrategyKind
from .kind import TargetKind


class FakeCpuTarget(TargetKind):
    """Emits ``--iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=x86-64``."""

    backend: ClassVar[Backend] = Backend.LLVM_CPU
    default_name: ClassVar[str] = "fake"
    ops_gone_at_codegen: ClassVar[tuple[str, ...]] = ("linalg.conv_",)

    kind: Literal["fake-cpu"] = "fake-cpu"
    """The discriminator."""
    name: SymbolName = default_name
    """The target's name, which rules name in their target field."""

    def compile_flags(self) -> list[str]:
        return [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=x86-64",
        ]

    def check_strategy(self, index: int, match: MatcherKind, strategy: StrategyKind, target_index: int) -> None:
        return None
'''

SCRIPT = """
import sys
import tdsl
from tdsl.targets import TARGET_KINDS, resolve

assert tdsl.__file__.startswith(sys.argv[2]), tdsl.__file__
assert [k.__name__ for k in TARGET_KINDS][-1] == "FakeCpuTarget"
strategies = tdsl.StrategySet.model_validate({
    "name": "faked",
    "targets": [{"kind": "fake-cpu", "name": "fake"}],
    "rules": [{
        "target": "fake",
        "match": {"kind": "contraction", "lhs_type": "f32", "rhs_type": "f32", "output_type": "f32", "m": 256, "n": 384, "k": 512},
        "strategy": {"kind": "cpu_lowering", "name": "tiles", "distribution": [64, 64, 0],
                     "vector_common_parallel": [8, 16, 0], "vector_reduction": [0, 0, 1]},
    }],
})
rendered = tdsl.render(strategies, "fake")
assert [s.injection.value for s in rendered.scripts] == ["tuning_spec"], rendered.scripts
assert "--iree-llvmcpu-target-cpu=x86-64" in rendered.flags("."), rendered.flags(".")
report = tdsl.compile(sys.argv[1], strategies, "fake")
assert all(rule.applied for rule in report.rules), report.text()
model = resolve("fake")
assert type(model).__name__ == "FakeCpuTarget", model
again = tdsl.compile(sys.argv[1], strategies, model)
assert [(r.strategy, r.dispatches) for r in again.rules] == [(r.strategy, r.dispatches) for r in report.rules]
default = tdsl.compile(sys.argv[1], None, "fake")
assert "--iree-llvmcpu-target-cpu=x86-64" in default.flags, default.flags
print(report.text())
"""


def test_a_new_target_is_its_module_and_one_registry_line(tmp_path: Path) -> None:
    package = tmp_path / "site" / "tdsl"
    shutil.copytree(ROOT / "dsl", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", package / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(package): p.read_bytes() for p in package.rglob("*") if p.is_file()}

    (package / "targets" / "fakecpu.py").write_text(textwrap.dedent(TARGET).lstrip())
    registry = package / "targets" / "registry.py"
    text = registry.read_text()
    text = text.replace("\nTARGET_KINDS", "\nfrom .fakecpu import FakeCpuTarget  # noqa: E402\n\nTARGET_KINDS", 1)
    text = text.replace("(CpuTarget, AmdGpuTarget)\n", "(CpuTarget, AmdGpuTarget, FakeCpuTarget)\n", 1)
    assert "FakeCpuTarget)" in text
    registry.write_text(text)

    after = {p.relative_to(package): p.read_bytes() for p in package.rglob("*") if p.is_file()}
    changed = sorted(str(p) for p in after if before.get(p) != after[p])
    assert changed == ["targets/fakecpu.py", "targets/registry.py"]

    env = {**os.environ, "PYTHONPATH": str(package.parent)}
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(PAYLOAD), str(package)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "for fake" in run.stdout, run.stdout

    ops = subprocess.run(
        [sys.executable, "-m", "tdsl", "ops", str(PAYLOAD), "--target", "fake", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert ops.returncode == 0, ops.stdout + ops.stderr
    assert '"target": "fake"' in ops.stdout and "linalg.matmul" in ops.stdout, ops.stdout

    emit = subprocess.run(
        [sys.executable, "-m", "tdsl", "ops", str(PAYLOAD), "--target", "fake", "--emit", str(tmp_path / "covered.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert (
        emit.returncode == 2 and "--emit: target 'fake' (fake-cpu) has no ready strategies or chooser" in emit.stderr
    ), emit.stderr

    tune = subprocess.run(
        [sys.executable, "-m", "tdsl", "tune", str(PAYLOAD), "--target", "fake", "-o", str(tmp_path / "tuned")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert tune.returncode == 2 and tune.stderr.strip().endswith("--target: expected cpu or gfx942, received 'fake'"), (
        tune.stderr
    )
