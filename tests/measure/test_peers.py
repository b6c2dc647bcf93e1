"""The peer runtimes (onnxruntime, OpenVINO) timed side by side on an exported model, how
``bench`` chooses them, and the strategy's verdict against the faster one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tdsl.errors import BenchFailed
from tdsl.measure import peers
from tdsl.measure.bench_report import DEFAULT, ONNXRUNTIME, OPENVINO, STRATEGY, BenchReport, Row
from tdsl.programs.inputs import make_inputs
from tdsl.programs.load import load_program
from tdsl.programs.signatures import signatures

ROOT = Path(__file__).resolve().parent.parent.parent
GPT2 = ROOT / "examples" / "models" / "gpt2" / "model.onnx"


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "onnx-cache"))


def _saved_inputs(tmp_path: Path) -> tuple[Path, list[Path]]:
    program = load_program(GPT2)
    assert program.onnx_path is not None
    [sig] = signatures(program)
    paths = []
    for i, array in enumerate(make_inputs(sig, seed=0)):
        paths.append(tmp_path / f"{i}.npy")
        np.save(paths[-1], array)
    return program.onnx_path, paths


def test_every_installed_peer_times_an_exported_model(tmp_path: Path) -> None:
    model, inputs = _saved_inputs(tmp_path)
    found = peers.installed_peers()
    assert ONNXRUNTIME in found  # the onnx extra is a test dependency
    seconds = peers.peer_round(found, model, inputs, threads=1, min_time_s=0.01, seed=3)
    assert set(seconds) == set(found) and all(0 < s < 1 for s in seconds.values())


def test_openvino_runs_the_model_with_si64_token_ids(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    model, inputs = _saved_inputs(tmp_path)
    [seconds] = peers.peer_round([OPENVINO], model, inputs, threads=2, min_time_s=0.01).values()
    assert seconds > 0


def test_a_peer_that_cannot_load_the_model_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(BenchFailed, match=r"^the onnxruntime timer failed \(exit 1\): ") as err:
        peers.peer_round([ONNXRUNTIME], broken, [], threads=1, min_time_s=0.01)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("names", [[], ["tvm"], [ONNXRUNTIME, "tvm"]])
def test_unknown_peers_are_refused(names: list[str], tmp_path: Path) -> None:
    with pytest.raises(BenchFailed, match=r"^peers: expected some of \['onnxruntime', 'openvino'\]"):
        peers.peer_round(names, tmp_path / "m.onnx", [], threads=1, min_time_s=0.01)


def test_a_named_peer_that_is_not_installed_is_refused_before_any_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peers, "installed_peers", lambda: (ONNXRUNTIME,))
    missing = r"received 'openvino', which is not installed \(pip install 'tdsl\[peers\]'\)"
    with pytest.raises(BenchFailed, match=missing):
        peers.choose_peers([OPENVINO], True, 1, [])
    with pytest.raises(BenchFailed, match=missing):
        peers.choose_peers([OPENVINO], False, 1, [])  # on an MLIR payload too: the setting is wrong
    notes: list[str] = []
    assert peers.choose_peers(True, True, 1, notes) == (ONNXRUNTIME,)
    assert notes == ["openvino is not installed, so it has no row (pip install 'tdsl[peers]')"]
    assert peers.choose_peers(False, True, 1, notes) == ()


def test_mlir_payloads_and_several_functions_have_no_peer_rows() -> None:
    notes: list[str] = []
    assert peers.choose_peers(True, True, 2, notes) == ()
    assert peers.choose_peers(True, False, 1, notes) == ()
    assert notes == [
        "no peer runtimes: the model has 2 public functions, the peers run one graph",
        "no peer runtimes: they run .onnx models, and the payload is MLIR",
    ]


@given(
    st.lists(st.floats(1e-4, 1.0), min_size=3, max_size=3),
    st.lists(st.floats(1e-4, 1.0), min_size=3, max_size=3),
    st.lists(st.floats(1e-4, 1.0), min_size=3, max_size=3),
)
def test_the_verdict_is_against_the_faster_peer(ours: list[float], ort: list[float], ov: list[float]) -> None:
    rows = [
        Row("main", 1, STRATEGY, tuple(ours), None),
        Row("main", 1, DEFAULT, tuple(ours), None),
        Row("main", 1, ONNXRUNTIME, tuple(ort), None),
        Row("main", 1, OPENVINO, tuple(ov), None),
    ]
    report = BenchReport("m.onnx", rows)
    [verdict] = report.to_json()["peers"]
    faster = rows[2] if rows[2].median <= rows[3].median else rows[3]
    assert verdict["faster_peer"] == faster.variant
    assert verdict["speedup_of_strategy"] == report.speedup("main", 1, faster.variant)
    assert "strategy vs the faster peer, main at 1 thread(s): " in report.table()
