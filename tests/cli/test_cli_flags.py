"""Flags: --iree-flag and --flags-file pass through, --no-serial-loading opts out of the
injected --mlir-disable-threading, --relative writes flags.txt relative to its directory and
--flags-file resolves such paths against the file's directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tdsl import compile
from tdsl.cli import main
from tdsl.compiler.flags import REPORT_FLAGS, THREADING_ON, read_flags_file
from tdsl.render import SERIAL_LOADING

ROOT = Path(__file__).resolve().parent.parent.parent
MLP = ROOT / "examples" / "mlp"
PACK = ROOT / "examples" / "matmul_pack"


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tdsl: error: "), err
    return err[len("tdsl: error: ") : -1]


def test_flags_passes_extra_flags_and_drops_serial_loading(capsys, tmp_path: Path) -> None:
    argv = ["flags", str(MLP / "strategy.py"), "--target", "cpu", "-o", str(tmp_path)]
    assert main(argv) == 0
    plain = capsys.readouterr().out.splitlines()
    assert plain[-1] == SERIAL_LOADING
    assert (
        main(
            [
                *argv,
                "--iree-flag=--iree-opt-level=O3",
                "--iree-flag=--iree-llvmcpu-target-cpu=generic",
                "--no-serial-loading",
            ]
        )
        == 0
    )
    flags = capsys.readouterr().out.splitlines()
    assert SERIAL_LOADING not in flags
    assert flags[-2:] == ["--iree-opt-level=O3", "--iree-llvmcpu-target-cpu=generic"]
    assert flags[:-2] == [f for f in plain if f != SERIAL_LOADING]


def test_render_relative_writes_paths_relative_to_flags_txt(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        main(
            [
                "render",
                str(MLP / "strategy.py"),
                "--target",
                "cpu",
                "-o",
                str(out),
                "--relative",
                "--iree-flag=--iree-opt-level=O3",
            ]
        )
        == 0
    )
    flags = (out / "flags.txt").read_text().splitlines()
    assert "--iree-preprocessing-transform-spec-filename=preprocessing.mlir" in flags
    assert "--iree-codegen-tuning-spec-path=tuning_spec.mlir" in flags
    assert flags[-2:] == [SERIAL_LOADING, "--iree-opt-level=O3"]
    assert not any(str(tmp_path) in f for f in flags)


def test_flags_file_resolves_relative_paths_against_its_directory(tmp_path: Path) -> None:
    (tmp_path / "spec.mlir").write_text("module {}\n")
    flags_file = tmp_path / "sub" / "flags.txt"
    flags_file.parent.mkdir()
    (flags_file.parent / "spec.mlir").write_text("module {}\n")
    flags_file.write_text(
        "# my flags\n"
        "--iree-codegen-tuning-spec-path=spec.mlir --iree-llvmcpu-target-cpu=host\n"
        "--iree-hal-dump-executable-intermediates-to=dump   # a directory to be made\n"
        "'--iree-opt-level=O3'\n"
        f"--iree-preprocessing-transform-spec-filename={tmp_path / 'spec.mlir'}\n"
    )
    assert read_flags_file(flags_file) == [
        f"--iree-codegen-tuning-spec-path={flags_file.parent / 'spec.mlir'}",
        "--iree-llvmcpu-target-cpu=host",
        f"--iree-hal-dump-executable-intermediates-to={flags_file.parent / 'dump'}",
        "--iree-opt-level=O3",
        f"--iree-preprocessing-transform-spec-filename={tmp_path / 'spec.mlir'}",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not-a-flag\n", "expected an iree-compile option such as --iree-opt-level=O3"),
        ("--a='unclosed\n", "No closing quotation"),
        ("-o x.vmfb\n", "the output is tdsl's to choose"),
    ],
)
def test_bad_flags_file_is_one_line(tmp_path: Path, capsys, content: str, message: str) -> None:
    path = tmp_path / "flags.txt"
    path.write_text(content)
    assert main(["flags", str(PACK / "strategy.py"), "--target", "cpu", "--flags-file", str(path)]) == 2
    line = _err_line(capsys)
    assert line.startswith(f"--flags-file {path}:1") and message in line


def test_missing_flags_file_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["flags", str(PACK / "strategy.py"), "--target", "cpu", "--flags-file", str(tmp_path / "nope")]) == 2
    assert _err_line(capsys) == f"--flags-file {str(tmp_path / 'nope')!r}: the file does not exist"


def test_iree_flag_must_be_an_option(capsys) -> None:
    assert main(["flags", str(PACK / "strategy.py"), "--target", "cpu", "--iree-flag=O3"]) == 2
    assert "expected an iree-compile option such as --iree-opt-level=O3" in _err_line(capsys)
    assert main(["flags", str(PACK / "strategy.py"), "--target", "cpu", "--iree-flag", "--iree-opt-level=O3"]) == 2
    assert "spell it with '=': --iree-flag=--name=value" in _err_line(capsys)


@pytest.mark.parametrize("flag", REPORT_FLAGS)
def test_a_flag_of_the_report_is_refused(flag: str, tmp_path: Path, capsys) -> None:
    """Another dump directory used to leave the report empty ("0 executables", every rule
    "matched nothing"): such a flag is refused up front, from --iree-flag and flags files."""
    assert main(["compile", str(PACK / "payload.mlir"), "--target", "cpu", f"--iree-flag={flag}={tmp_path}"]) == 2
    line = _err_line(capsys)
    assert (
        line.startswith("--iree-flag: expected a flag tdsl does not set for its report")
        and flag in line
        and "--keep-dump" in line
    )
    (tmp_path / "flags.txt").write_text(f"--iree-opt-level=O2 {flag}=x\n")
    assert (
        main(["flags", str(PACK / "strategy.py"), "--target", "cpu", "--flags-file", str(tmp_path / "flags.txt")]) == 2
    )
    assert _err_line(capsys).startswith(f"--flags-file {tmp_path / 'flags.txt'}:1")


@pytest.mark.compile
def test_extra_flags_reach_every_build_and_threading_can_stay_on(tmp_path: Path) -> None:
    report = compile(
        MLP / "payload.mlir",
        MLP / "strategy.py",
        "cpu",
        extra_flags=["--iree-opt-level=O2"],
        serial_loading=False,
        baseline=True,
    )
    assert "--iree-opt-level=O2" in report.result.command and SERIAL_LOADING not in report.result.command
    assert report.baseline is not None and "--iree-opt-level=O2" in report.baseline.result.command
    default = compile(MLP / "payload.mlir", MLP / "strategy.py", "cpu")
    assert SERIAL_LOADING in default.result.command and THREADING_ON not in default.result.command


@pytest.mark.compile
def test_unknown_extra_flag_is_a_compiler_failure(capsys) -> None:
    argv = ["compile", str(PACK / "payload.mlir"), "--target", "cpu", "--iree-flag=--iree-no-such-flag"]
    assert main(argv) == 2
    assert _err_line(capsys).startswith("iree-compile failed (exit 1)")


@pytest.mark.compile
def test_relative_flags_file_compiles_from_another_directory(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rendered directory moved elsewhere still works through --flags-file."""
    out = tmp_path / "rendered"
    assert main(["render", str(MLP / "strategy.py"), "--target", "cpu", "-o", str(out), "--relative"]) == 0
    moved = tmp_path / "moved"
    os.rename(out, moved)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert (
        main(["compile", str(MLP / "payload.mlir"), "--target", "cpu", "--flags-file", "../moved/flags.txt", "--json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["strategy_set"] is None and report["extra_flags"][-1] == SERIAL_LOADING
    assert any("mmt4d" in d["name"] for d in report["dispatches"])  # the preprocessing spec applied
