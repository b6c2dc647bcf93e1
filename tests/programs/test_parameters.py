"""Programs whose weights live in a parameter archive (``.irpa``), as IREE deploys large
models: an ``.mlir`` whose globals name parameters runs, checks and benches with
``--parameters``; an ``.onnx`` model's weights go to an archive for tuning
(``externalize_weights``) and the program computes what it computes inline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tdsl
from tdsl.cli import main
from tdsl.compiler.iree_compile import run_iree_compile
from tdsl.errors import ArgumentError
from tdsl.measure.execute import invoke
from tdsl.programs.inputs import make_inputs
from tdsl.programs.load import load_program
from tdsl.programs.parameters import externalize_weights
from tdsl.programs.signatures import signatures
from tdsl.targets import CpuTarget
from weighted import write_weighted

ROOT = Path(__file__).resolve().parent.parent.parent
AUTO = ROOT / "examples" / "models" / "bert" / "cpu.py"
pytestmark = pytest.mark.compile


@pytest.fixture
def weighted(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    """The payload, its archive (seeded weights) and the weights."""
    return write_weighted(tmp_path)


def _tdsl(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tdsl", *argv], capture_output=True, text=True)


def test_run_and_bench_read_the_weights_from_the_archive(
    weighted: tuple[Path, Path, np.ndarray], tmp_path: Path
) -> None:
    payload, archive, weights = weighted
    program = load_program(payload, parameters=[f"model={archive}"])
    [archived] = program.parameters
    assert archived.scope == "model" and archived.path == archive.resolve() and len(archived.digest) == 64
    # The module computed with the archive's weights: x @ w, not zeros or a splat.
    vmfb = tmp_path / "mm.vmfb"
    run_iree_compile(payload, CpuTarget().compile_flags(), vmfb)
    x = np.random.default_rng(0).standard_normal((48, 64)).astype(np.float32)
    [out] = invoke(vmfb, "mm", [x], parameters=program.parameters)
    np.testing.assert_allclose(out, x @ weights, rtol=1e-4, atol=1e-4)

    # tdsl run reads the archive in both builds (AUTO and IREE's default); exit 0: every comparison passed
    ran = _tdsl("run", str(payload), "--strategies", str(AUTO), "--parameters", str(archive))  # scope: model
    assert ran.returncode == 0, ran.stderr
    bench = _tdsl(
        "bench",
        str(payload),
        "--strategies",
        str(AUTO),
        "--parameters",
        f"model={archive}",
        "--repetitions",
        "1",
        "--min-time",
        "0.01",
        "--json",
    )
    assert bench.returncode == 0, bench.stderr


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            [],
            "--parameters: expected an archive for scope 'model' (the program's globals read their weights from it: --parameters model=FILE.irpa), received none",
        ),
        (["--parameters", "model="], "--parameters: expected SCOPE=FILE.irpa or FILE.irpa, received 'model='"),
        (
            ["--parameters", "nowhere.irpa"],
            "--parameters: expected a parameter archive, received 'nowhere.irpa', which does not exist",
        ),
    ],
)
def test_missing_or_bad_parameters_are_one_line_exit_2(
    weighted: tuple[Path, Path, np.ndarray], extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    payload, _, _ = weighted
    assert main(["run", str(payload), "--strategies", str(AUTO), *extra]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"tdsl: error: {message}", line


def test_an_onnx_model_takes_no_parameters_flag() -> None:
    with pytest.raises(ArgumentError, match="--parameters: expected an .mlir program that names parameters"):
        load_program(ROOT / "examples" / "models" / "bert" / "model.onnx", parameters=["x.irpa"])


def test_externalized_weights_compute_what_inline_weights_do(tmp_path: Path) -> None:
    """BERT's import with its weights in an archive: the program names parameters, the
    archive holds the weights, and the tuned path's numeric check (tdsl.run with the ready
    CPU set against IREE default, both reading the archive) passes; the outputs equal those
    of the program with its weights inline."""
    pytest.importorskip("onnx", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    inline = load_program(ROOT / "examples" / "models" / "bert" / "model.onnx")
    external = externalize_weights(inline)
    assert externalize_weights(external) is external and externalize_weights(external).mlir_path == external.mlir_path
    [archive] = external.parameters
    assert "#stream.parameter.named" in external.text() and "#stream.parameter.named" not in inline.text()
    assert (
        archive.path.stat().st_size > 4e6 and external.mlir_path.stat().st_size < inline.mlir_path.stat().st_size / 10
    )
    assert tdsl.run(external, AUTO).ok
    [sig] = signatures(inline)
    args = make_inputs(sig, seed=0)
    outs = {}
    for name, program in (("inline", inline), ("external", external)):
        vmfb = tmp_path / f"{name}.vmfb"
        run_iree_compile(program.mlir_path, CpuTarget().compile_flags(), vmfb)
        outs[name] = invoke(vmfb, sig.function, args, parameters=program.parameters)
    for a, b in zip(outs["inline"], outs["external"]):
        np.testing.assert_array_equal(a, b)


def test_tune_times_a_program_with_its_archive(weighted: tuple[Path, Path, np.ndarray], tmp_path: Path) -> None:
    """tdsl tune on an .mlir whose weight is a parameter: every build of the model pass runs
    (each sample reads the archive) and the outputs are written."""
    import json

    payload, archive, _ = weighted
    out = tmp_path / "out"
    proc = _tdsl(
        "tune",
        str(payload),
        "--parameters",
        f"model={archive}",
        "--budget",
        "1",
        "--rounds",
        "2",
        "--min-time",
        "0.01",
        "-o",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "-q",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["model_pass"] and all(v["samples_s"] and not v["errors"] for v in report["model_pass"])
    tdsl.load(out / "tuned.py")


def test_compile_and_ops_need_no_archive(
    weighted: tuple[Path, Path, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    """Only running needs the weights: compile and the op listing take the program alone."""
    payload, _, _ = weighted
    assert main(["compile", str(payload), "--target", "cpu"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["ops", str(payload), "--target", "cpu"]) == 0
    listed = capsys.readouterr()
    assert "matmul" in listed.out, listed.err
