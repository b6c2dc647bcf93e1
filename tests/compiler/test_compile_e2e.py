"""End to end against the real compiler: every test case compiles with its rendered flags
for llvm-cpu (and runs correctly, checked against IREE's default pipeline and numpy) and for
gfx942 (compile only); every rule is proven applied. The examples get the same checks from
the demo, which compiles and runs each of them (tests/docs/test_demo.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cases import CASES
from tdsl import load, render, run
from tdsl.compiler.compile import compile
from tdsl.compiler.iree_compile import run_iree_compile
from tdsl.compiler.report import CompileReport

pytestmark = pytest.mark.compile

PAYLOADS = Path(__file__).resolve().parent.parent / "payloads"
CASE_PAYLOADS = {
    "layout_variants": PAYLOADS / "layout_variants.mlir",
    "codegen_variants": PAYLOADS / "codegen_variants.mlir",
    "gpu_configs": PAYLOADS / "gpu_configs.mlir",
}


def _all_rules_applied(report: CompileReport) -> None:
    assert report.rules, "the target has no rules"
    for rule in report.rules:
        assert rule.applied, f"rule {rule.index} ({rule.strategy}) did not apply:\n{report.text()}"


@pytest.mark.parametrize("name", ["layout_variants", "codegen_variants"])
def test_case_runs_correctly_on_cpu(name: str) -> None:
    report = run(CASE_PAYLOADS[name], CASES[name], "cpu")
    _all_rules_applied(report.compile_report)
    assert report.ok


@pytest.mark.parametrize("name", ["layout_variants", "codegen_variants", "gpu_configs"])
def test_case_compiles_for_gfx942(tmp_path: Path, name: str) -> None:
    report = compile(CASE_PAYLOADS[name], CASES[name], "gfx942", tmp_path / "m.vmfb")
    _all_rules_applied(report)


def test_rendered_flags_file_drives_iree_compile(tmp_path: Path) -> None:
    """What `tdsl render -o DIR` writes is enough: iree-compile $(cat DIR/flags.txt)."""
    example = Path(__file__).resolve().parent.parent.parent / "examples" / "mlp"
    rendered = render(load(example / "strategy.py"), "cpu")
    rendered.write(tmp_path / "scripts")
    flags = (tmp_path / "scripts" / "flags.txt").read_text().split()
    result = run_iree_compile(example / "payload.mlir", [*flags, "--compile-to=preprocessing"], tmp_path / "pre.mlir")
    assert result.ok
    checks = tmp_path / "checks.txt"
    checks.write_text(
        "CHECK: util.func public @mlp\n"
        "CHECK: linalg.pack\n"
        "CHECK: linalg.mmt4d\n"
        'CHECK-SAME: tdsl.layout = "layer1_mmt4d"\n'
        "CHECK: linalg.unpack\n"
        "CHECK: linalg.matmul\n"
    )
    filecheck = str(Path(sys.executable).parent / "filecheck")
    proc = subprocess.run(
        [filecheck, str(checks), "--input-file", str(tmp_path / "pre.mlir")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_codegen_library_is_used_for_the_dispatch(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent.parent / "examples" / "matmul_codegen"
    report = compile(example / "payload.mlir", example / "strategy.py", "cpu", tmp_path / "m.vmfb")
    (dispatch,) = report.dispatches
    assert dispatch.pipeline == "#iree_codegen.transform_dialect_codegen"
    assert dispatch.codegen_spec == "tdsl_r0_mm_cpu_td_codegen"
    assert dispatch.applied_strategies == ("mm_cpu_td",)


def test_gfx942_resource_report(tmp_path: Path) -> None:
    report = compile(CASE_PAYLOADS["gpu_configs"], CASES["gpu_configs"], "gfx942", tmp_path / "m.vmfb")
    kernels = {k.name: k for k in report.kernels}
    assert set(kernels) == {d.name for d in report.dispatches}
    for kernel in kernels.values():
        assert 0 < kernel.lds_bytes <= 65536
        assert kernel.spills == 0 and kernel.vgprs > 0 and kernel.workgroup_size in (256, 512)
        assert kernel.mfma_instructions and kernel.mfma_instructions > 0
        assert 1 <= kernel.waves_per_simd <= 8
    # IGEMM with reduction 2 intrinsics, no prefetch: 13568 B of LDS (same as IREE's recipe notes).
    conv = next(k for name, k in kernels.items() if name.startswith("conv"))
    assert conv.lds_bytes == 13568
    assert "kernel resources:" in report.text() and report.to_json()["kernels"]
