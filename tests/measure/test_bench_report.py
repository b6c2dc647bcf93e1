"""tdsl bench: GFLOP/s counted from the payload's contractions and convolutions (no numpy
needed), numpy rows that are no fair baseline labelled and kept out of the ratios, the
--plot check before any work, and a plot a person can read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tdsl.measure.bench as bench_module
import tdsl.measure.bench_plot as bench_plot_module
from tdsl import bindings
from tdsl.cli import main
from tdsl.measure.bench import DATA_TILING, DEFAULT, NUMPY, STRATEGY, BenchReport, Row, _numpy_kind, function_flops
from tdsl.measure.bench_plot import plot, plot_title
from tdsl.measure.execute import make_inputs

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack"
AUTO = ROOT / "examples" / "cpu_auto"
CONV = ROOT / "examples" / "conv_tuning"
MLP = ROOT / "examples" / "mlp"


def test_flops_are_counted_from_every_contraction_and_convolution() -> None:
    conv = function_flops(bindings.linalg_ops((CONV / "payload.mlir").read_text()))
    assert conv == {"conv": 2.0 * 2 * 32 * 32 * 64 * 3 * 3 * 32}
    mlp = function_flops(bindings.linalg_ops((MLP / "payload.mlir").read_text()))
    assert mlp == {"mlp": 2.0 * 128 * 512 * 256 + 2.0 * 128 * 128 * 512}  # two matmuls, one function
    auto = function_flops(bindings.linalg_ops((AUTO / "payload.mlir").read_text()))
    assert auto["bmm"] == 2.0 * 3 * 40 * 56 * 72 and auto["h"] == 2.0 * 64 * 80 * 160


def test_numpy_on_f16_or_integers_is_not_comparable() -> None:
    text = (AUTO / "payload.mlir").read_text()
    ops = bindings.linalg_ops(text)
    signatures = {s.name: s for s in bindings.signatures(text)}
    f16 = _numpy_kind(text, "h", make_inputs(signatures["h"]), ops)
    assert f16 is not None and "float16" in f16[2]
    i8 = _numpy_kind(text, "q", make_inputs(signatures["q"]), ops)
    assert i8 is not None and "int8" in i8[2]
    f32 = _numpy_kind(text, "odd", make_inputs(signatures["odd"]), ops)
    assert f32 is not None and f32[2] == ""


def _report() -> BenchReport:
    rows = [
        Row("mm", 1, STRATEGY, (1.0e-3, 1.2e-3, 0.9e-3), 2e9),
        Row("mm", 1, DEFAULT, (2.0e-3, 2.1e-3, 1.9e-3), 2e9),
        Row("mm", 1, DATA_TILING, (0.8e-3, 0.85e-3, 0.9e-3), 2e9),
        Row("mm", 1, NUMPY, (0.5e-3, 0.52e-3, 0.55e-3), 2e9),
        Row("h", 1, STRATEGY, (1.0e-3, 1.1e-3, 1.0e-3), 1e9),
        Row("h", 1, DEFAULT, (1.5e-3, 1.6e-3, 1.4e-3), 1e9),
        Row("h", 1, NUMPY, (160e-3, 161e-3, 159e-3), 1e9, "numpy has no BLAS path for float16 data"),
    ]
    return BenchReport("examples/x/payload.mlir", rows, machine={"cpu": "Test CPU 9000", "isa": "avx512", "cores": 2})


def test_not_comparable_rows_are_labelled_and_left_out_of_ratios() -> None:
    report = _report()
    assert report.speedup("h", 1, NUMPY) is None and report.speedup("mm", 1, NUMPY) == pytest.approx(
        0.5
    )  # paired: median of 0.5, 0.43, 0.61
    table = report.table()
    (line,) = [line for line in table.splitlines() if line.startswith("h ") and NUMPY in line]
    assert line.rstrip().endswith("not comparable") and "9.91" not in table
    assert "not comparable: h numpy (1T): numpy has no BLAS path for float16 data" in table
    row = next(r for r in report.to_json()["rows"] if r["function"] == "h" and r["variant"] == NUMPY)
    assert row["comparable"] is False and row["speedup_of_strategy"] is None and row["gflops"] > 0


def test_plot_title_names_payload_machine_isa_and_threads() -> None:
    title = plot_title(_report())
    assert "x/payload.mlir" in title and "Test CPU 9000" in title and "AVX-512" in title and "threads 1" in title
    assert "log scale" in title


def test_plot_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = plot(_report(), tmp_path / "speedup.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_uses_a_log_scale_with_sample_spread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    captured: dict[str, Any] = {}
    original = plt.close

    def keep(fig: Any = None) -> None:
        captured["fig"] = fig
        original(fig)

    monkeypatch.setattr(plt, "close", keep)
    plot(_report(), tmp_path / "p.png")
    (ax,) = captured["fig"].axes
    assert ax.get_yscale() == "log"
    bars = [p for p in ax.patches]
    assert len(bars) == 4  # mm: strategy, data tiling, numpy; h: strategy (numpy f16 left out)
    heights = sorted(b.get_y() + b.get_height() for b in bars)
    assert heights == pytest.approx(sorted([2.0, 2.0 / 0.85, 2.0 / 0.52, 1.5]), rel=1e-6)
    assert ax.collections or ax.lines  # error bars: the spread of the samples


def test_plot_without_matplotlib_is_refused_before_benchmarking(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("benchmarked although --plot cannot be drawn")

    monkeypatch.setattr(bench_module, "bench_with_options", never)
    monkeypatch.setattr(bench_plot_module, "plot_available", lambda: False)
    argv = [
        "bench",
        str(PACK / "payload.mlir"),
        "--strategies",
        str(PACK / "strategy.py"),
        "--plot",
        str(tmp_path / "p.png"),
    ]
    assert main(argv) == 2
    assert "--plot needs matplotlib: pip install 'tdsl[plot]'" in capsys.readouterr().err


@pytest.mark.compile
def test_bench_gflops_without_numpy(capsys) -> None:
    argv = [
        "bench",
        str(MLP / "payload.mlir"),
        "--strategies",
        str(MLP / "strategy.py"),
        "--repetitions",
        "1",
        "--min-time",
        "0.01",
        "--no-numpy",
    ]
    assert main(argv) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("mlp ")]
    assert len(lines) == 3
    for line in lines:
        gflops = float(line.split()[4])
        assert np.isfinite(gflops) and gflops > 0
