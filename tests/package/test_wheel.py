"""The built wheel carries the templates and renders from outside the repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.slow


def test_wheel_installs_and_renders_outside_the_repo(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("tdsl-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tdsl/templates/preprocessing.mlir.j2" in names and "tdsl/templates/strategies/codegen.mlir.j2" in names
    assert "tdsl/templates/matchers/contraction.mlir.j2" in names and "tdsl/py.typed" in names
    assert {f"tdsl/measure/c_probes/{n}" for n in ("fma_peak.c", "read_bandwidth.c", "vec.h")} <= set(names)
    assert (
        "tdsl/cli/__init__.py" in names
        and "tdsl_entry.py" in names
        and not any(n.startswith(("dsl/", "tests/")) for n in names)
    )

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    # Dependencies (iree, jinja2, pydantic, ...) come from this test's environment; a plain
    # path entry does not run that environment's .pth files, so the editable tdsl stays out.
    purelib = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    (purelib / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "s.yaml").write_text((ROOT / "examples" / "batch_matmul_tuning" / "strategy.yaml").read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    where = subprocess.check_output(
        [str(python), "-c", "import tdsl; print(tdsl.__file__)"], cwd=work, env=env, text=True
    )
    assert where.startswith(str(env_dir)), where
    subprocess.run(
        [str(env_dir / "bin" / "tdsl"), "render", "s.yaml", "--target", "gfx942", "-o", "out"],
        check=True,
        cwd=work,
        env=env,
    )
    expected = (
        ROOT / "tests" / "goldens" / "render" / "example_batch_matmul_tuning.gfx942.tuning_spec.mlir"
    ).read_text()
    assert (work / "out" / "tuning_spec.mlir").read_text() == expected

    # Issue 15 from the installed wheel, as a user runs it: the version, the schema, and the
    # golden fixture's FileCheck from a suite of the user's own.
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = zipfile.ZipFile(wheel).read(metadata).decode()
    for needed in ("Requires-Dist: filecheck", "Requires-Dist: rich", "Provides-Extra: plot"):
        assert needed in requires, needed
    tdsl_bin = str(env_dir / "bin" / "tdsl")
    version = subprocess.run(
        [tdsl_bin, "--version"], check=True, cwd=work, env=env, capture_output=True, text=True
    ).stdout
    assert version.startswith("tdsl ") and "iree-base-compiler 3.13.0" in version
    schema = subprocess.run([tdsl_bin, "schema"], check=True, cwd=work, env=env, capture_output=True, text=True).stdout
    assert json.loads(schema)["title"] == "tdsl strategy file"
    (work / "test_mine.py").write_text(
        "def test_checks(golden):\n"
        "    golden.filecheck('a = 1\\nb = 2\\n', 'CHECK: a = 1\\nCHECK-NEXT: b = 2')\n"
        "\n"
        "def test_fails_with_the_input(golden):\n"
        "    golden.filecheck('a = 1\\nb = 2\\n', 'CHECK: a = 1\\nCHECK-NEXT: c = 3')\n"
    )
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    assert "FileCheck failed at check line 2: CHECK-NEXT: c = 3" in proc.stdout and "> 2 | b = 2" in proc.stdout
