"""tdsl bench: interleaved samples, medians and ratios that agree with each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tdsl.errors import BenchFailed
from tdsl.iree.bench import DATA_TILING, DEFAULT, NUMPY, STRATEGY, BenchReport, Row, bench
from tdsl.cli import main

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "examples" / "matmul_pack"


def test_ratios_follow_medians() -> None:
    report = BenchReport(
        "p",
        [Row("f", 1, STRATEGY, (2.0, 1.0, 3.0), 4e9), Row("f", 1, DEFAULT, (4.0, 5.0, 3.0), 4e9)],
    )
    strategy = report.row("f", 1, STRATEGY)
    assert strategy is not None and strategy.median == 2.0
    assert report.speedup("f", 1, DEFAULT) == 2.0
    assert report.speedup("f", 1, DATA_TILING) is None
    assert report.rows[0].gflops == 2.0
    assert "2.00" in report.table()


@pytest.mark.compile
def test_bench_measures_every_variant_side_by_side(tmp_path: Path) -> None:
    report = bench(PACK / "payload.mlir", PACK / "strategy.py", repetitions=2, min_time_s=0.01)
    variants = {r.variant for r in report.rows}
    assert variants == {STRATEGY, DEFAULT, DATA_TILING, NUMPY}
    for row in report.rows:
        assert len(row.samples) == 2 and all(s > 0 for s in row.samples)
        assert row.gflops is not None and row.gflops > 0
        speed = report.speedup(row.function, row.threads, row.variant)
        strategy = report.row(row.function, row.threads, STRATEGY)
        assert strategy is not None and speed == pytest.approx(row.median / strategy.median)
    data = json.loads(json.dumps(report.to_json()))
    assert {r["variant"] for r in data["rows"]} == variants


def test_bench_refuses_a_gpu_target() -> None:
    with pytest.raises(BenchFailed, match="tdsl bench measures on this CPU; target 'gfx942' is rocm"):
        bench(PACK / "payload.mlir", PACK / "strategy.py", "gfx942")


@pytest.mark.compile
def test_bench_command_prints_a_table(capsys) -> None:
    assert main(["bench", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--repetitions", "1", "--min-time", "0.01", "--no-numpy"]) == 0
    out = capsys.readouterr().out
    assert "iree-data-tiling" in out and "strategy x" in out and "numpy" not in out.split("strategy x =")[0]


@pytest.mark.compile
def test_bench_with_the_caching_allocator(capsys) -> None:
    """--allocator caching reaches iree-benchmark-module (a note says so); an unknown
    allocator is one line and exit code 2."""
    assert main(["bench", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--repetitions", "1",
                 "--min-time", "0.01", "--no-numpy", "--allocator", "caching"]) == 0
    assert "--device_allocator=caching" in capsys.readouterr().out
    with pytest.raises(BenchFailed, match=r"allocator: expected one of \['default', 'caching'\], received 'pool'"):
        bench(PACK / "payload.mlir", PACK / "strategy.py", allocator="pool")
    assert main(["bench", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--allocator", "pool"]) == 2
