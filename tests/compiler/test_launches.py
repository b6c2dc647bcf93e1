"""Dispatch launches per call: read from IREE's stream statistics of the same iree-compile
run, mapped onto the dispatch names of the executable dump, shown by the compile report
(text, JSON, side by side with IREE's default), the Python API and the op listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tdsl
from tdsl import CpuTarget
from tdsl.cli import main
from tdsl.compiler.dispatches import STATISTICS_FILE, DispatchSummary, Launches, read_launches
from tdsl.compiler.iree_compile import CompileResult
from tdsl.compiler.ops import list_dispatches
from tdsl.compiler.options import CompileOptions
from tdsl.compiler.report import CompileReport, side_by_side

ROOT = Path(__file__).resolve().parent.parent.parent
MLP = ROOT / "examples" / "mlp"

# Two identical matmuls (IREE keeps one executable and launches it twice) and a third of
# another shape; the function name needs MLIR's quotes (@"mm-chain") in IREE's statistics.
CHAIN = """\
func.func @"mm-chain"(%x: tensor<64x128xf32>, %w: tensor<128x128xf32>, %v: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %a = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %b = linalg.matmul ins(%a, %w : tensor<64x128xf32>, tensor<128x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %c = linalg.matmul ins(%b, %v : tensor<64x128xf32>, tensor<128x32xf32>) outs(%f2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}
"""

# A constant weight whose data-tiling pack stays in an initializer (const-eval off) and a
# second function that packs at run time with the same executables.
AT_LOAD = """\
func.func @cw(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<1.5> : tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
func.func @other(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
"""

# What IREE 3.13 writes with --iree-scheduling-dump-statistics-format=csv (rows trimmed).
STATISTICS = """\
;
; Aggregate Statistics (static, whole-program)
;

"Constants","Constant Size","Variables","Variable Size","Awaits","Submissions","Transient Size","Fills","Copies","Dispatches","Async Calls","Executables"
1,0,0,0,3,3,114688,1,0,6,0,3

;
; Execution
;

; builtin.module > util.initializer > stream.cmd.execute
"Depth","Command","Symbol","Length","Invocations","Workload","Operands","Resources"
0,"fill",,16384,,,,
0,"dispatch","@_encoding_0::@_encoding_0_encode_64x64xf32_to_64x64xf32",,1,"",0,2

; builtin.module > util.func @main_graph$async > stream.cmd.execute
"Depth","Command","Symbol","Length","Invocations","Workload","Operands","Resources"
0,"dispatch","@main_graph$async_dispatch_5::@main_graph$async_dispatch_5_batch_matmul_1x64x256x256_f32",,1,"",0,3
1,"dispatch","@main_graph$async_dispatch_5::@main_graph$async_dispatch_5_batch_matmul_1x64x256x256_f32",,1,"64;32",0,3
0,"dispatch","@"two-mm_dispatch_0"::@"two-mm_dispatch_0_matmul_64x64x64_f32"",,1,"?",2,1
0,"dispatch","@_encoding_0::@_encoding_0_encode_64x64xf32_to_64x64xf32",,1,"",0,2
0,"copy",,4096,,,,
"""


def test_statistics_rows_map_to_dispatch_functions() -> None:
    launches = read_launches(STATISTICS)
    assert launches.per_call == {
        "main_graph$async_dispatch_5_batch_matmul_1x64x256x256_f32": 2,
        "two-mm_dispatch_0_matmul_64x64x64_f32": 1,
        "_encoding_0_encode_64x64xf32_to_64x64xf32": 1,
    }
    assert launches.at_load == {"_encoding_0_encode_64x64xf32_to_64x64xf32": 1}
    assert (launches.total, launches.total_at_load) == (4, 1)
    names = ["main_graph$async_dispatch_5_batch_matmul_1x64x256x256_f32", "_encoding_0_encode_64x64xf32_to_64x64xf32"]
    assert launches.unmapped(names) == {"two-mm_dispatch_0_matmul_64x64x64_f32": 1}
    assert read_launches("").total == 0


def test_report_text_and_json_carry_launches() -> None:
    """No compile: a report built by hand shows the total line, x<n> per dispatch, the
    launches row of --report and the JSON fields; unknown launches leave them out."""
    d = DispatchSummary(
        "f_dispatch_0_matmul_8x8x8_f32",
        "#iree_cpu.pipeline<DoubleTilingExpert>",
        None,
        ("linalg.matmul",),
        (),
        (),
        launches=3,
    )
    result = CompileResult(("iree-compile",), 0, "", (), 0.5, None)
    report = CompileReport(Path("p.mlir"), "cpu", None, (), result, (d,), (), launch_counts=Launches({d.name: 3}))
    text = report.text(report=True)
    assert "  1 executables, 3 launches per call:\n" in text
    assert "    f_dispatch_0_matmul_8x8x8_f32 x3: linalg.matmul | " in text
    assert dict((k, v) for k, v, _ in dict(side_by_side(report, None))[d.name])["launches per call"] == "x3"
    data = report.to_json()
    assert (data["executables"], data["launches"], data["launches_at_load"]) == (1, 3, 0)
    assert data["dispatches"][0]["launches"] == 3
    unknown = CompileReport(
        Path("p.mlir"), "cpu", None, (), result, (DispatchSummary("g", None, None, (), (), ()),), ()
    )
    assert unknown.launches is None and "  1 executables:\n" in unknown.text() and "    g: - | - | -" in unknown.text()


@pytest.mark.compile
def test_an_executable_launched_twice_counts_twice(tmp_path: Path) -> None:
    payload = tmp_path / "chain.mlir"
    payload.write_text(CHAIN)
    report = tdsl.compile(payload, None, "cpu", keep_dump=tmp_path / "dump")
    launches = {d.name: d.launches for d in report.dispatches}
    assert launches == {"mm-chain_dispatch_0_matmul_64x128x128_f32": 2, "mm-chain_dispatch_2_matmul_64x32x128_f32": 1}
    assert (len(report.dispatches), report.launches, report.launches_at_load) == (2, 3, 0)
    assert report.launch_counts is not None and not report.launch_counts.unmapped(launches)
    assert (tmp_path / "dump" / STATISTICS_FILE).is_file()
    assert "  2 executables, 3 launches per call:\n" in report.text()
    assert "    mm-chain_dispatch_0_matmul_64x128x128_f32 x2: linalg.matmul | " in report.text()


@pytest.mark.compile
def test_launches_at_load_are_not_per_call(tmp_path: Path) -> None:
    payload = tmp_path / "at_load.mlir"
    payload.write_text(AT_LOAD)
    report = tdsl.compile(payload, None, "cpu", extra_flags=["--iree-opt-data-tiling", "--iree-opt-const-eval=false"])
    by_name = {d.name: (d.launches, d.launches_at_load) for d in report.dispatches}
    assert sorted(by_name.values()) == [(1, 1), (2, 0), (2, 0)], by_name
    assert (report.launches, report.launches_at_load) == (5, 1)
    assert "  3 executables, 5 launches per call, 1 at load:\n" in report.text()
    assert any(line.endswith("x1 (+1 at load)") for line in report.text(report=True).splitlines())


@pytest.mark.compile
def test_cli_json_and_baseline_show_both_builds_launches(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "compile",
        str(MLP / "payload.mlir"),
        "--strategies",
        str(MLP / "strategy.py"),
        "--target",
        "cpu",
        "--report",
        "--baseline",
    ]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["executables"], data["launches"]) == (5, 5)
    assert (data["baseline"]["executables"], data["baseline"]["launches"]) == (2, 2)
    assert all(d["launches"] == 1 for d in data["dispatches"] + data["baseline"]["dispatches"])
    assert {"field": "launches per call", "strategy": "x1", "iree-default": "x1"} in [
        {k: v for k, v in row.items() if k != "dispatch"} for row in data["side_by_side"]
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  5 executables, 5 launches per call (iree-default: 2 executables, 2 launches per call):\n" in out


@pytest.mark.compile
def test_the_op_listing_counts_as_the_compile_report(tmp_path: Path) -> None:
    """One count: ``tdsl ops`` reads the launches from the same statistics as the report."""
    payload = tmp_path / "at_load.mlir"
    payload.write_text(AT_LOAD)
    flags = ["--iree-opt-data-tiling", "--iree-opt-const-eval=false"]
    ops = list_dispatches(payload, CpuTarget(), options=CompileOptions(extra_flags=tuple(flags)))
    report = tdsl.compile(payload, None, "cpu", extra_flags=flags)
    assert {d.name: (d.launches, d.launches_at_load) for d in ops.dispatches} == {
        d.name: (d.launches, d.launches_at_load) for d in report.dispatches
    }
    assert (ops.launches, ops.launches_at_load) == (report.launches, report.launches_at_load) == (5, 1)
    assert ops.text().splitlines()[0].endswith(": 3 executables, 5 launches per call, 1 at load")
    assert ops.to_json()["launches_at_load"] == 1
