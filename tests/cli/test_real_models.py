"""Real frontend output through the four commands a user tries first: ``tdsl ops``, ``tdsl
compile --strategies auto()``, ``tdsl run`` with and without ``--strategies auto()``. Each
exits 0 (or, on a model with random weights, 1 where a comparison reports a real, finite
difference): never 2 or 3, never a traceback.

Payloads: every model of examples/models/ (the torch exports, six of them transformers
architectures with random weights) and the ONNX backend node tests committed under
tests/payloads/onnx/node/ and numerics/ (run on their own inputs against onnxruntime, which
agrees with their expected outputs: they exit 0). The node tests are tiny (seconds per command); the
models take 10-60 s per command on two cores. ``make test`` tries the node tests' runs (40 s on
two cores); two cases run there in other files, which assert more of the same run: the
causal-mask attention's runs (tests/measure/test_run_references.py) and GPT-2's run with
auto() (tests/programs/test_bool_constants.py). The whole matrix is marker ``models``
(``make models``, 5 min on two cores), left out of ``make test`` to keep it in its budget.
``benchmarks/node_tests.py`` runs the same commands on the whole node test suite or on
examples/models/.

The classes issue 35 found here (auto()'s data tiling on i1 masks, ops losing its listing, -inf
judged a difference, f64 demoted, 3-D QLinearMatMul, run without --strategies) each fail a
case of this file when they come back."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from tdsl.cli import main

pytest.importorskip("onnx")

ROOT = Path(__file__).resolve().parent.parent.parent
MODELS = ROOT / "examples" / "models"
NODE_TESTS = {
    p.parent.name: p.parent
    for d in ("node", "numerics")
    for p in (ROOT / "tests" / "payloads" / "onnx" / d).glob("*/model.onnx")
}
COMMANDS = ("ops", "compile auto()", "run auto()", "run")
pytestmark = [pytest.mark.e2e, pytest.mark.compile]

# What make test runs: the node tests' runs (one build each way, tiny programs); the rest
# (10-60 s a command) is marker ``models``. GPT-2's run with auto() runs in make test as
# tests/programs/test_bool_constants.py::test_gpt2_runs_with_data_tiling (report.ok, no
# data-tiling fallback: exit 0 here).
FAST = {"run auto()", "run"}
FAST_MODEL_CASES: set[tuple[str, str]] = set()
CAUSAL = "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal_expanded"
"""Its two runs on its own inputs (with and without auto(), exit 0) run in make test as
tests/measure/test_run_references.py::test_masked_attention_with_inf_outputs_agrees."""


def _cases(names: list[str], fast: set[tuple[str, str]]) -> list[object]:
    """One case per payload and command, marker ``models`` unless ``fast``."""
    return [
        pytest.param(
            name, command, marks=[] if (name, command) in fast else [pytest.mark.models], id=f"{name}-{command}"
        )
        for name in names
        for command in COMMANDS
    ]


MODEL_NAMES = sorted(p.parent.name for p in MODELS.glob("*/model.onnx"))
NODE_NAMES = sorted(NODE_TESTS)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "onnx-cache"))


def node_inputs(test: Path, out: Path) -> Path:
    """The node test's ``test_data_set_0/input_*.pb`` as one .npz named by the graph inputs."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    model = onnx.load(str(test / "model.onnx"))
    names = [i.name for i in model.graph.input]
    arrays = {}
    for i, name in enumerate(names):
        tensor = onnx.TensorProto()
        tensor.ParseFromString((test / "test_data_set_0" / f"input_{i}.pb").read_bytes())
        arrays[name] = numpy_helper.to_array(tensor)
    np.savez(out, **arrays)  # type: ignore[arg-type]
    return out


def four_commands(model: Path, command: str, extra: list[str]) -> list[str]:
    auto_args = ["--strategies", "auto()"]
    return {
        "ops": ["ops", str(model), "--target", "cpu", "--json"],
        "compile auto()": ["compile", str(model), *auto_args, "--target", "cpu", "--json"],
        "run auto()": ["run", str(model), *auto_args, *extra, "--json"],
        "run": ["run", str(model), *extra, "--json"],
    }[command]


def check_exit(args: list[str], capsys: pytest.CaptureFixture[str], verdicts: bool) -> None:
    """Exit 0, or (where ``verdicts``) 1 with a comparison past tolerance by a finite amount;
    never 2 or 3, never a traceback."""
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    assert code in ((0, 1) if verdicts else (0,)), f"tdsl {' '.join(args)}: exit {code}: {err.strip()}"
    if code == 1:
        report = json.loads(out)
        failed = [c for f in report["functions"] for c in f["comparisons"] if not c["ok"]]
        assert failed and all(math.isfinite(c["max_abs_error"]) for c in failed), failed


@pytest.mark.parametrize(
    ("name", "command"), _cases(NODE_NAMES, {(n, c) for n in NODE_NAMES for c in FAST if n != CAUSAL})
)
def test_node_test_commands(name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    test = NODE_TESTS[name]
    inputs = ["--inputs", str(node_inputs(test, tmp_path / "inputs.npz"))]
    # the test's inputs, and onnxruntime agrees with its expected outputs: no verdict is due
    check_exit(four_commands(test / "model.onnx", command, inputs), capsys, verdicts=False)


@pytest.mark.parametrize(("name", "command"), _cases(MODEL_NAMES, FAST_MODEL_CASES))
def test_example_model_commands(name: str, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    check_exit(four_commands(MODELS / name / "model.onnx", command, []), capsys, verdicts=True)
