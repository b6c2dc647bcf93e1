"""The example models (examples/models): their expected op listings on CPU and gfx942, and
the gfx942 set `tdsl ops --emit` writes for each (committed next to the model), which
applies to every contraction and convolution dispatch and compiles to MFMA kernels within
the LDS budget without spills. Regenerate with `pytest tests/strategies/test_model_examples.py
--update-goldens` and read the diff."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import AmdGpuTarget, CpuTarget, compile, load
from tdsl.compiler.ops import list_dispatches
from tdsl.programs.load import load_program
from tdsl.strategies.emit import emit

ROOT = Path(__file__).resolve().parent.parent.parent
MODELS = ROOT / "examples" / "models"
NAMES = ["bert", "gpt2_block", "resnet"]
pytestmark = pytest.mark.compile


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "onnx-cache"))


@pytest.mark.parametrize("name", NAMES)
def test_model_op_listings_and_gfx942_set(golden, name: str, tmp_path: Path) -> None:
    program = load_program(MODELS / name / "model.onnx")
    relative = f"../../examples/models/{name}"
    listings = {}
    for target, label in ((CpuTarget(cpu="znver4"), "cpu"), (AmdGpuTarget(), "gfx942")):
        listings[label] = list_dispatches(program.mlir_path, target)
        text = listings[label].text().replace(str(program.mlir_path), "model.onnx")
        golden.check(text + "\n", f"{relative}/ops.{label}.txt")
    gpu_ops = listings["gfx942"]
    emitted = emit(gpu_ops, AmdGpuTarget(), f"{name}_gfx942")
    golden.check(emitted.python(), f"{relative}/gfx942.py")
    strategies = load(MODELS / name / "gfx942.py")
    report = compile(program.mlir_path, strategies, "gfx942", strict=True)
    wanted = {
        d.name for d in gpu_ops.dispatches if d.root is not None and d.root.kind in ("contraction", "convolution")
    }
    applied = {dispatch for rule in report.rules for dispatch in rule.dispatches}
    assert wanted and wanted <= applied
    for kernel in report.kernels:
        if kernel.name in wanted:
            assert kernel.mfma_instructions and kernel.spills == 0 and kernel.lds_bytes <= 64 * 1024, kernel.line()


@pytest.mark.parametrize("name", NAMES)
def test_model_cpu_strategy_loads(name: str) -> None:
    strategies = load(MODELS / name / "cpu.py")
    cpu = strategies.target("cpu")
    assert isinstance(cpu, CpuTarget) and cpu.data_tiling
