"""The tdsl command line: render, flags, show, compile, run; bad input exits 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tdsl import load
from tdsl.cli import main
from tdsl.render import SERIAL_LOADING

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack"


def test_render_writes_scripts_and_flags(tmp_path: Path, capsys) -> None:
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flags.txt", "preprocessing.mlir"]
    flags = (tmp_path / "flags.txt").read_text().splitlines()
    assert f"--iree-preprocessing-transform-spec-filename={tmp_path.resolve() / 'preprocessing.mlir'}" in flags
    assert "--iree-llvmcpu-enable-ukernels=none" in flags
    assert SERIAL_LOADING not in flags  # graph-level specs load once: threading stays on
    assert str(tmp_path / "flags.txt") in capsys.readouterr().out


def test_codegen_scripts_compile_single_threaded(tmp_path: Path) -> None:
    """A tuning spec or codegen library turns off MLIR threading (IREE 3.13 deadlocks
    loading it from parallel executables); see tdsl.render.scripts.SERIAL_LOADING."""
    assert main(["render", str(ROOT / "examples" / "mlp" / "strategy.py"), "--target", "cpu", "-o", str(tmp_path)]) == 0
    flags = (tmp_path / "flags.txt").read_text().splitlines()
    assert any(f.startswith("--iree-codegen-tuning-spec-path=") for f in flags)
    assert flags[-1] == SERIAL_LOADING


def test_flags_prints_without_writing(tmp_path: Path, capsys) -> None:
    assert (
        main(["flags", str(PACK / "strategy.py"), "--target", "gfx942", "-o", str(tmp_path), "--no-target-flags"]) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out == [f"--iree-preprocessing-transform-spec-filename={tmp_path.resolve() / 'preprocessing.mlir'}"]
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_show_round_trips(tmp_path: Path, capsys, fmt: str) -> None:
    assert main(["show", str(PACK / "strategy.py"), "--format", fmt]) == 0
    path = tmp_path / f"s.{fmt}"
    path.write_text(capsys.readouterr().out)
    assert load(path) == load(PACK / "strategy.py")


def test_file_colon_name_selects_a_set(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "two.py"
    spec.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "from cases import GPU_CONFIGS as first, LAYOUT_VARIANTS as second\n"
    )
    assert main(["show", f"{spec}:second", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "layout_variants"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["render", "missing.py", "--target", "cpu", "-o", "x"], r"strategy file 'missing.py' does not exist"),
        (["render", str(PACK / "strategy.py"), "--target", "gfx1100", "-o", "x"], r"has no target 'gfx1100'"),
        (["render", str(PACK / "payload.mlir"), "--target", "cpu", "-o", "x"], r"expected a .py, .yaml, .yml or .json"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tdsl: error: ")
    assert __import__("re").search(message, err)


def test_invalid_strategy_exits_2_naming_the_field(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\nrules:\n  - target: cpu\n    match: {kind: op_name, names: [linalg.matmul]}\n"
        "    strategy: {kind: data_layout, name: mm, pack: {kind: pack_greedily, matmul_packed_sizes: [8, 16, 32],"
        " matmul_inner_dims_order: [0, 0, 2]}}\n"
    )
    assert main(["render", str(bad), "--target", "cpu", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "tdsl: error: invalid strategy: mm.pack.matmul_inner_dims_order: expected a permutation of "
        "[0, 1, 2], received [0, 0, 2]\n"
    )
    assert not (tmp_path / "out").exists()


def test_the_cli_module_runs_as_a_program() -> None:
    proc = subprocess.run([sys.executable, "-m", "tdsl.cli", "render", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "usage: tdsl render" in proc.stdout


@pytest.mark.parametrize("command", ["render", "flags", "show", "compile", "run", "bench"])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    assert "usage: tdsl " + command in capsys.readouterr().out


@pytest.mark.compile
def test_compile_and_run_commands(tmp_path: Path, capsys) -> None:
    payload, strategy = str(PACK / "payload.mlir"), str(PACK / "strategy.py")
    out = tmp_path / "m.vmfb"
    assert (
        main(
            [
                "compile",
                payload,
                "--strategies",
                strategy,
                "--target",
                "cpu",
                "-o",
                str(out),
                "--json",
                "--dump-ir",
                "preprocessing",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert out.is_file() and report["rules"][0]["applied"] and report["warnings"] == []
    assert "linalg.mmt4d" in Path(report["ir_dump"]).read_text()
    assert main(["run", payload, "--strategies", strategy, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] and {c["reference"] for c in result["functions"][0]["comparisons"]} == {"iree-default", "numpy"}
