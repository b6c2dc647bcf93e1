"""tdsl bench: interleaved samples, medians and ratios that agree with each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tdsl.measure.bench as bench_module
import tdsl.measure.timing as timing
from tdsl.cli import main
from tdsl.errors import BenchFailed
from tdsl.measure.bench import DATA_TILING, DEFAULT, NUMPY, STRATEGY, BenchReport, Row, bench

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack"


def test_ratios_are_paired_by_repetition() -> None:
    """A ratio is the median of each repetition's ratio (both samples taken side by side),
    not the ratio of medians, which pairs samples of different repetitions: here the core
    drifts between repetitions, every repetition says 1.2x or 1.4x, and the medians 1.4x."""
    report = BenchReport(
        "p",
        [Row("f", 1, STRATEGY, (1.0, 2.0, 1.5), 2e9), Row("f", 1, DEFAULT, (1.2, 2.4, 2.1), 2e9)],
    )
    strategy, default = report.row("f", 1, STRATEGY), report.row("f", 1, DEFAULT)
    assert strategy is not None and default is not None and strategy.median == 1.5
    assert report.speedup("f", 1, DEFAULT) == pytest.approx(1.2)
    assert default.median / strategy.median == pytest.approx(1.4)
    assert report.speedup("f", 1, DATA_TILING) is None
    assert report.rows[0].gflops == pytest.approx(2 / 1.5)
    assert "1.20" in report.table()


@pytest.mark.compile
def test_bench_measures_every_variant_side_by_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """IREE's builds are timed in one process per repetition, never one process each."""

    def no_process_per_build(*args: object, **kwargs: object) -> float:
        raise AssertionError("an IREE build was timed in a process of its own")

    monkeypatch.setattr(bench_module, "iree_sample", no_process_per_build)
    report = bench(PACK / "payload.mlir", PACK / "strategy.py", repetitions=2, min_time_s=0.01)
    variants = {r.variant for r in report.rows}
    assert variants == {STRATEGY, DEFAULT, DATA_TILING, NUMPY}
    for row in report.rows:
        assert len(row.samples) == 2 and all(s > 0 for s in row.samples)
        assert row.gflops is not None and row.gflops > 0
        speed = report.speedup(row.function, row.threads, row.variant)
        strategy = report.row(row.function, row.threads, STRATEGY)
        ratios = sorted(b / o for b, o in zip(row.samples, strategy.samples)) if strategy is not None else []
        assert speed == pytest.approx(sum(ratios) / 2)  # the median of two paired ratios
    data = json.loads(json.dumps(report.to_json()))
    assert {r["variant"] for r in data["rows"]} == variants


def test_bench_refuses_a_gpu_target() -> None:
    with pytest.raises(BenchFailed, match="tdsl bench measures on this CPU; target 'gfx942' is rocm"):
        bench(PACK / "payload.mlir", PACK / "strategy.py", "gfx942")


@pytest.mark.compile
def test_bench_command_prints_a_table(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Also where the side-by-side runner dies (a build that faults takes its process with
    it): the builds are then timed one iree-benchmark-module process each."""
    crashing = tmp_path / "crash.py"
    crashing.write_text("import os\nos.abort()\n")
    monkeypatch.setattr(timing, "ROUND_RUNNER", crashing)
    assert (
        main(
            [
                "bench",
                str(PACK / "payload.mlir"),
                "--strategies",
                str(PACK / "strategy.py"),
                "--repetitions",
                "1",
                "--min-time",
                "0.01",
                "--no-numpy",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "iree-data-tiling" in out and "strategy x" in out and "numpy" not in out.split("strategy x =")[0]
    assert "numpy runs" not in out  # no note on a baseline that did not run


@pytest.mark.compile
def test_a_baseline_that_does_not_compile_is_a_note_not_a_failure(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """IREE 3.13's data tiling fails on some real programs (gpt2_block's masked attention on
    AVX2): the strategy is still timed against IREE default, and the table says why data
    tiling has no row. Here iree-compile really fails, on a flag it does not know."""
    real = bench_module.compile_default

    def data_tiling_fails(payload: Path, flags: list[str], *args: object) -> None:
        extra = ["--iree-no-such-flag"] if "--iree-opt-data-tiling" in flags else []
        real(payload, [*flags, *extra], *args)  # type: ignore[arg-type]

    monkeypatch.setattr(bench_module, "compile_default", data_tiling_fails)
    report = bench(PACK / "payload.mlir", PACK / "strategy.py", repetitions=1, min_time_s=0.01, numpy_baseline=False)
    assert {r.variant for r in report.rows} == {STRATEGY, DEFAULT}
    assert report.speedup("matmul", 1, DEFAULT) is not None
    [note] = [n for n in report.notes if "did not compile" in n]
    assert note.startswith("IREE data tiling did not compile, so it has no row: ") and "\n" not in note
    assert (
        main(
            [
                "bench",
                str(PACK / "payload.mlir"),
                "--strategies",
                str(PACK / "strategy.py"),
                "--repetitions",
                "1",
                "--min-time",
                "0.01",
                "--no-numpy",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "note: IREE data tiling did not compile" in out and "iree-data-tiling" not in out


@pytest.mark.compile
def test_bench_with_the_caching_allocator(capsys) -> None:
    """--allocator caching reaches iree-benchmark-module (a note says so); an unknown
    allocator is one line and exit code 2."""
    assert (
        main(
            [
                "bench",
                str(PACK / "payload.mlir"),
                "--strategies",
                str(PACK / "strategy.py"),
                "--repetitions",
                "1",
                "--min-time",
                "0.01",
                "--no-numpy",
                "--allocator",
                "caching",
            ]
        )
        == 0
    )
    assert "--device_allocator=caching" in capsys.readouterr().out
    with pytest.raises(BenchFailed, match=r"allocator: expected one of \['default', 'caching'\], received 'pool'"):
        bench(PACK / "payload.mlir", PACK / "strategy.py", allocator="pool")
    assert (
        main(["bench", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--allocator", "pool"])
        == 2
    )


PADDED_PANELS = """
util.global private @w = #util.byte_pattern<1> : tensor<1000x1000xf32>
func.func @mm(%a: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %b = util.global.load @w : tensor<1000x1000xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000x1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1000x1000xf32>, tensor<1000x1000xf32>) outs(%f : tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  return %r : tensor<1000x1000xf32>
}
"""


@pytest.mark.compile
def test_a_timed_call_reuses_its_transient_buffers(tmp_path: Path) -> None:
    """Samples run with glibc's malloc pinned to a long-running process's steady state, so
    a program's transient buffers (here a 4 MB padded panel result) are not mapped and
    faulted afresh on every call. Unpinned, the state hung on the process's history: this
    sample faulted about 44,000 pages and measured 11.2 ms (8.2 ms pinned), while the
    same module timed for longer, or with the console report, faulted less."""
    import resource

    import numpy as np
    from tdsl import (
        ContractionMatch,
        CpuLowering,
        CpuTarget,
        DataLayout,
        PackGreedily,
        PackTranspose,
        Rule,
        StrategySet,
        compile,
    )
    from tdsl.measure.timing import MALLOC_STEADY_STATE, benchmark_env, iree_sample

    assert all(benchmark_env()[k] == v for k, v in MALLOC_STEADY_STATE.items())
    maps = ("(d0, d1, d2, d3) -> (d0, d3)", "(d0, d1, d2, d3) -> (d1, d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)")
    f32 = {"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32"}
    panels = StrategySet(
        name="padded_panels",
        targets=[CpuTarget(data_tiling=True)],
        rules=[
            Rule(
                target="cpu",
                match=ContractionMatch(**f32, operand_layout="mk_kn", batch=[]),
                strategy=DataLayout(
                    name="p",
                    pack=PackGreedily(matmul_packed_sizes=[0, 16, 0]),
                    pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
                ),
            ),
            Rule(
                target="cpu",
                match=ContractionMatch(**f32, maps=maps),
                strategy=CpuLowering(
                    name="t",
                    distribution=[200, 3, 16, 0],
                    vector_common_parallel=[8, 3, 16, 0],
                    vector_reduction=[0, 0, 0, 1],
                ),
            ),
        ],
    )
    payload, module, data = tmp_path / "mm.mlir", tmp_path / "mm.vmfb", tmp_path / "a.npy"
    payload.write_text(PADDED_PANELS)
    compile(payload, panels, "cpu", module, strict=True)
    np.save(data, np.random.default_rng(0).uniform(-1, 1, (1000, 1000)).astype(np.float32))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    seconds = iree_sample(module, "mm", [data], 1, 0.1)
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
    # Loading maps the 4 MB weights, the 4 MB input and the runtime (about 6,100 pages here);
    # one fresh 4 MB transient is 1,000 pages a call, and 0.1 s is a dozen calls.
    assert seconds > 0 and faults < 12_000, faults
