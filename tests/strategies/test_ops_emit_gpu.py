"""`tdsl ops --emit` on gfx942 covers every contraction and convolution dispatch: convolutions
without their unit batch, strided, dilated, NCHW and NHWC, with a K no intrinsic divides or
an odd output image, strided 1x1 convolutions that become contractions with two m loops,
and ResNet end to end; each emitted rule applies and its kernel uses MFMA with LDS within
the budget and no spills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tdsl import AmdGpuTarget, GpuLowering, compile, load
from tdsl.cli import main
from tdsl.compiler.hsaco import KernelResources
from tdsl.compiler.ops import list_dispatches
from tdsl.strategies.emit import emit

ROOT = Path(__file__).resolve().parent.parent.parent
PAYLOAD = ROOT / "tests" / "payloads" / "gpu" / "convs_strided.mlir"
RESNET = ROOT / "examples" / "models" / "resnet" / "model.onnx"
pytestmark = pytest.mark.compile


def _check_kernel(kernel: KernelResources) -> None:
    """MFMA used, LDS within gfx942's 64 KiB, no register spills (scratch is allowed: ResNet's
    padded 1x10x128 matmul keeps 1028 B of it under IREE's default configuration too)."""
    assert kernel.mfma_instructions, kernel.line()
    assert kernel.lds_bytes <= 65536 and kernel.spills == 0, kernel.line()


def test_emit_covers_strided_dilated_batchless_convolutions_and_multi_loop_contractions(tmp_path: Path) -> None:
    ops = list_dispatches(PAYLOAD, AmdGpuTarget())
    kinds = {d.name: d.root.kind for d in ops.dispatches if d.root is not None}
    assert sorted(kinds.values()).count("convolution") == 4 and "nmmk" in {
        d.root.loop_roles() for d in ops.dispatches if d.root
    }
    emitted = emit(ops, AmdGpuTarget(), "convs_strided")
    assert emitted.left_out == () and len(emitted.strategies.rules) == len(ops.dispatches) == 6
    for source in (emitted.python(), emitted.yaml()):  # both forms load to the same set
        path = tmp_path / ("set.py" if source.startswith('"""') else "set.yaml")
        path.write_text(source)
        assert load(path).rules == emitted.strategies.rules
    report = compile(PAYLOAD, emitted.strategies, "gfx942")
    assert [r.dispatches for r in report.rules] == [(d.name,) for d in ops.dispatches], report.text()
    kernels = {k.name: k for k in report.kernels}
    for rule, dispatch in zip(emitted.strategies.rules, ops.dispatches):
        assert isinstance(rule.strategy, GpuLowering)
        _check_kernel(kernels[dispatch.name])
        if kinds[dispatch.name] == "convolution":
            assert rule.strategy.use_igemm_convolution
    # the 128x768x768 matmul: at least one whole K iteration of the chosen reduction in MFMAs
    mm = next(r.strategy for r, d in zip(emitted.strategies.rules, ops.dispatches) if d.name.startswith("mm128"))
    assert isinstance(mm, GpuLowering) and mm.reduction is not None
    mfma = kernels[next(d.name for d in ops.dispatches if d.name.startswith("mm128"))].mfma_instructions
    assert mfma is not None and mfma >= mm.reduction[-1] > 4


def test_resnet_ops_emit_covers_every_contraction_and_convolution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path / "onnx-cache"))
    emitted, emitted_yaml = tmp_path / "resnet_gfx942.py", tmp_path / "resnet_gfx942.yaml"
    assert main(["ops", str(RESNET), "--target", "gfx942", "--emit", str(emitted), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert main(["ops", str(RESNET), "--target", "gfx942", "--emit", str(emitted_yaml), "-q"]) == 0
    capsys.readouterr()
    assert load(emitted_yaml).rules == load(emitted).rules
    text = emitted.read_text()
    assert 'loop_order="nmmk"' in text and "strides=[2, 2]" in text
    assert all(
        ": not a contraction or convolution" in line for line in text.splitlines() if line.startswith("# not covered")
    )
    assert main(["compile", str(RESNET), "--strategies", str(emitted), "--target", "gfx942", "--strict", "--json"]) == 0
    compiled = json.loads(capsys.readouterr().out)
    wanted = {
        d["dispatch"]
        for d in listing["dispatches"]
        if d["root"] and d["root"]["kind"] in ("contraction", "convolution")
    }
    applied = {name for rule in compiled["rules"] for name in rule["dispatches"]}
    assert len(wanted) == 8 and wanted <= applied and all(rule["dispatches"] for rule in compiled["rules"])
    for kernel in compiled["kernels"]:
        if kernel["name"] in wanted:
            _check_kernel(KernelResources(**kernel))
