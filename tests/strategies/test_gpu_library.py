"""The gfx942 library against IREE's default configuration, per kernel, from the binaries:
no spills, MFMA for every f16/bf16/i8 contraction, LDS within budget, and at least the
default's occupancy (waves per SIMD from the register count)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from tdsl import AmdGpuTarget, compile, load
from tdsl.compiler.hsaco import KernelResources, resources
from tdsl.compiler.iree_compile import run_iree_compile
from tdsl.strategies.gpu.chooser import choose_contraction
from tdsl.strategies.gpu.library import REFERENCE_PROBLEMS, standard_set
from tdsl.strategies.gpu.problems import Contraction

ROOT = Path(__file__).resolve().parent.parent.parent
PAYLOAD = ROOT / "tests" / "payloads" / "gpu" / "contractions.mlir"
CONV1X1 = ROOT / "examples" / "conv1x1_gpu"

pytestmark = pytest.mark.compile


def _default_kernels(payload: Path) -> dict[str, KernelResources]:
    with tempfile.TemporaryDirectory() as tmp:
        run_iree_compile(
            payload,
            [
                *AmdGpuTarget().compile_flags(),
                f"--iree-hal-dump-executable-files-to={tmp}",
                f"--iree-hal-dump-executable-binaries-to={tmp}",
            ],
            None,
        )
        return {k.name: k for k in resources(tmp, AmdGpuTarget().facts)}


def _check_against_default(
    ours: dict[str, KernelResources], default: dict[str, KernelResources], mfma_expected: set[str]
) -> list[str]:
    lines = []
    assert set(ours) == set(default)
    for name, kernel in sorted(ours.items()):
        base = default[name]
        lines.append(
            f"{name}: ours [{kernel.line()}] / default LDS {base.lds_bytes}, VGPR {base.vgprs}, waves {base.waves_per_simd}"
        )
        assert kernel.spills == 0 and kernel.scratch_bytes == 0, kernel.line()
        assert kernel.lds_bytes <= 65536
        if any(name.startswith(p) for p in mfma_expected):
            assert kernel.mfma_instructions, kernel.line()
        assert kernel.waves_per_simd >= base.waves_per_simd, f"{kernel.line()} vs default waves {base.waves_per_simd}"
    return lines


def test_library_configurations_meet_the_resource_bars() -> None:
    report = compile(PAYLOAD, standard_set(), "gfx942")
    assert all(rule.applied for rule in report.rules), report.text()
    ours = {k.name: k for k in report.kernels}
    _check_against_default(ours, _default_kernels(PAYLOAD), {"mm_f16", "mm_bf16", "mm_i8", "bmm_f16"})


def test_conv1x1_compiles_with_mfma_in_budget_and_the_tail_fused() -> None:
    report = compile(CONV1X1 / "payload.mlir", load(CONV1X1 / "strategy.py"), "gfx942")
    (dispatch,) = report.dispatches
    assert dispatch.compute_ops == ("linalg.generic", "linalg.generic")  # conv + fused quant/dequant/add/relu
    assert report.rules[0].applied
    _check_against_default({k.name: k for k in report.kernels}, _default_kernels(CONV1X1 / "payload.mlir"), {"conv1x1"})


def test_chooser_pads_when_no_intrinsic_divides_and_uses_simt_without_one() -> None:
    odd = choose_contraction(Contraction((), 1000, 1000, 1000, "bf16", "bf16", "f32"), "odd")
    assert odd.mma_kind in ("MFMA_F32_16x16x16_BF16", "MFMA_F32_32x32x8_BF16") and odd.padding is not None
    assert odd.padding[0] % 16 == 0 and odd.padding[1] % 16 == 0 and odd.padding[2] % 8 == 0
    mixed = choose_contraction(Contraction((), 256, 256, 256, "f16", "f16", "f16"), "mixed")
    assert mixed.mma_kind is None and mixed.thread is not None
    assert {name for name, _ in REFERENCE_PROBLEMS} == {"mm_f16", "mm_bf16", "mm_i8", "mm_f32", "bmm_f16"}


def test_full_transform_dialect_mfma_strategy_compiles_to_mfma() -> None:
    example = ROOT / "examples" / "matmul_td_mfma"
    report = compile(example / "payload.mlir", load(example / "strategy.py"), "gfx942")
    (dispatch,) = report.dispatches
    assert dispatch.pipeline == "#iree_codegen.transform_dialect_codegen" and report.rules[0].applied
    (kernel,) = report.kernels
    assert kernel.mfma_instructions and kernel.mfma_instructions >= 4
    assert kernel.spills == 0 and 0 < kernel.lds_bytes <= 65536


def test_convolution_configurations_meet_the_resource_bars() -> None:
    from tdsl.strategies.gpu.library import convolution_set

    payload = ROOT / "tests" / "payloads" / "gpu" / "convs.mlir"
    report = compile(payload, convolution_set(), "gfx942")
    assert all(rule.applied for rule in report.rules), report.text()
    _check_against_default({k.name: k for k in report.kernels}, _default_kernels(payload), {"conv"})
