"""The machine roofline (tdsl.measure.roofline, tdsl.measure.probes) and the roofline per
dispatch (tdsl.measure.dispatch_roofline): its arithmetic, its cache (corrupt, unwritable),
and the probes themselves, built and run for a moment."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tdsl import bindings
from tdsl.compiler.ops import Dispatch, OpView, ProgramOps
from tdsl.measure import probes, roofline
from tdsl.measure.dispatch_profile import DispatchTime
from tdsl.measure.dispatch_roofline import dispatch_rooflines, flops_per_launch, roofline_share, short_names
from tdsl.measure.probes import Probed
from tdsl.measure.roofline import Roofline, machine_roofline


def _fake_probes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Probes that return 100 GFLOP/s and 10 GB/s per thread at once; the list counts the calls."""
    calls: list[int] = []

    def peak(threads: int) -> Probed:
        calls.append(threads)
        return Probed(100.0 * threads, "fake FMA loop")

    monkeypatch.setattr(roofline, "measure_peak", peak)
    monkeypatch.setattr(roofline, "measure_bandwidth", lambda threads: Probed(10.0 * threads, "fake read loop"))
    return calls


def test_the_roofline_is_measured_once_per_thread_count_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_probes(monkeypatch)
    cache = tmp_path / "roofline.json"
    first = machine_roofline(2, cache)
    assert (first.peak_gflops, first.bandwidth_gb_s, first.threads) == (200.0, 20.0, 2)
    assert first.source.startswith("measured now") and first.notes == ()
    again = machine_roofline(2, cache)
    assert again.source == f"cached at {cache}" and again.peak_gflops == 200.0 and calls == [2]
    machine_roofline(1, cache)
    assert calls == [2, 1] and len(json.loads(cache.read_text())["rooflines"]) == 2
    footer = again.footer()
    assert "2 threads" in footer and "200.0 GFLOP/s" in footer and "20.0 GB/s" in footer and str(cache) in footer
    assert again.methods() == "(peak: fake FMA loop; bandwidth: fake read loop)"


@pytest.mark.parametrize(
    "text", ["not json {", '{"format": 1, "rooflines": [1, 2]}', '{"format": 99, "rooflines": {}}', "\xff\xfe"]
)
def test_a_corrupt_cache_is_a_note_and_is_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    _fake_probes(monkeypatch)
    cache = tmp_path / "roofline.json"
    cache.write_bytes(text.encode("latin-1"))
    found = machine_roofline(1, cache)
    [note] = found.notes
    assert str(cache) in note and "\n" not in note and found.peak_gflops == 100.0
    assert machine_roofline(1, cache).source == f"cached at {cache}"


def test_an_entry_that_is_not_a_roofline_is_measured_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_probes(monkeypatch)
    cache = tmp_path / "roofline.json"
    machine_roofline(1, cache)
    data = json.loads(cache.read_text())
    [key] = data["rooflines"]
    data["rooflines"][key]["peak_gflops"] = -3
    cache.write_text(json.dumps(data))
    assert machine_roofline(1, cache).source.startswith("measured now") and calls == [1, 1]


def test_an_unwritable_cache_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache path under a file cannot be made (whoever runs the test, root included)."""
    _fake_probes(monkeypatch)
    blocker = tmp_path / "file"
    blocker.write_text("")
    found = machine_roofline(1, blocker / "roofline.json")
    [note] = found.notes
    assert found.source == "measured now" and note.startswith("roofline not cached: ") and "\n" not in note
    assert found.peak_gflops == 100.0


def test_the_c_probes_build_into_the_cache_and_measure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if probes.c_compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path))
    peak = probes.measure_peak(1, seconds=0.05)
    bandwidth = probes.measure_bandwidth(1, seconds=0.05)
    assert peak.rate > 0 and bandwidth.rate > 0 and "cc -O2 -march=native" in peak.method
    assert peak.notes == bandwidth.notes == ()
    built = sorted(p.name.split("-")[0] for p in (tmp_path / "probes").iterdir())
    assert built == ["fma_peak", "read_bandwidth"]


def test_without_a_c_compiler_numpy_measures_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(probes, "c_compiler", lambda: None)
    peak = probes.measure_peak(2, seconds=0.05)
    assert peak.rate > 0 and peak.method.startswith("numpy float32 GEMM")
    [note] = peak.notes
    assert "no C compiler" in note and "numpy measured instead" in note
    assert probes.measure_bandwidth(1, seconds=0.05).method.startswith("numpy sum x 1 over 256 MiB")


def test_no_more_probes_than_cpus_measure_more_threads() -> None:
    """Threads beyond the CPUs this process may use share them: the probes do not count
    them twice."""
    from tdsl.measure.machine import usable_cpus

    assert probes.probe_copies(1) == 1 and probes.probe_copies(10_000) == usable_cpus()
    assert probes.bandwidth_mib(1) == 256 and probes.bandwidth_mib(64) == 64


positive = st.floats(min_value=1e-9, max_value=1e15, allow_nan=False, allow_infinity=False)


@given(flops=positive, moved=positive, seconds=positive, peak=positive, bandwidth=positive)
def test_the_share_is_achieved_over_attainable_and_at_most_1_above_the_roofline_time(
    flops: float, moved: float, seconds: float, peak: float, bandwidth: float
) -> None:
    """For any positive inputs the share is positive and equals achieved GFLOP/s over
    min(peak, intensity x bandwidth); a dispatch that takes at least the roofline's time
    (the most the machine allows) has a share in (0, 1]."""
    share = roofline_share(flops, moved, seconds, peak, bandwidth)
    assert share is not None and share > 0
    attainable = min(peak, flops / moved * bandwidth)
    assert math.isclose(share, flops / seconds / 1e9 / attainable, rel_tol=1e-9)
    slowest = max(seconds, flops / (peak * 1e9), moved / (bandwidth * 1e9))
    bounded = roofline_share(flops, moved, slowest, peak, bandwidth)
    assert bounded is not None and 0 < bounded <= 1 + 1e-12
    without_flops = roofline_share(0.0, moved, slowest, peak, bandwidth)
    assert without_flops is not None and 0 < without_flops <= 1 + 1e-12


def test_a_share_needs_a_time_and_something_done() -> None:
    assert roofline_share(0.0, None, 1.0, 10.0, 1.0) is None
    assert roofline_share(1e9, 1e6, 0.0, 10.0, 1.0) is None
    assert roofline_share(1e9, None, 1.0, 10.0, 1.0) == pytest.approx(0.1)  # bytes unknown: the peak alone


def _view(kind: str, sizes: tuple[int, ...], body: tuple[str, ...]) -> OpView:
    f32 = bindings.TensorType((4,), "f32")
    return OpView("linalg.generic", kind, (f32, f32, f32), sizes, {}, body=body)


def _dispatch(name: str, view: OpView | None, bound: int | None) -> Dispatch:
    return Dispatch(name, 1, view, None, None, None, None, None, bound_bytes=bound)


def test_flops_count_what_the_root_computes() -> None:
    """2 per point where the body multiplies, 1 for pooling (adds or maxima only), none for
    other roots or dynamic loops."""
    mm = _view("contraction", (8, 16, 32), ("arith.mulf", "arith.addf"))
    pool = _view("convolution", (1, 8, 8, 4, 3, 3), ("arith.maximumf",))
    assert flops_per_launch(_dispatch("mm", mm, None)) == 2 * 8 * 16 * 32
    assert flops_per_launch(_dispatch("pool", pool, None)) == 8 * 8 * 4 * 9
    assert flops_per_launch(_dispatch("add", _view("other", (64,), ("arith.addf",)), None)) == 0
    assert flops_per_launch(_dispatch("dyn", _view("contraction", (-1, 4, 4), ("arith.mulf",)), None)) == 0
    assert flops_per_launch(_dispatch("none", None, None)) == 0


def test_each_profiled_dispatch_gets_its_rates_and_mark() -> None:
    """Per call: flops and bytes x the launches the runtime counted; the mark needs 5% of
    the time and less than 20% of the roofline."""
    mm = _dispatch("f$async_dispatch_0_matmul", _view("contraction", (100, 100, 100), ("arith.mulf",)), 120_000)
    copy = _dispatch("f$async_dispatch_1_copy", _view("other", (1000,), ()), 8000)
    ops = ProgramOps(Path("p.mlir"), "cpu", (mm, copy))
    line = Roofline("CPU", "avx2", 2, 1, 100.0, 10.0, "fma", "read", "measured now")
    profile = {mm.name: DispatchTime(1e-3, 2.0), copy.name: DispatchTime(1e-5, 1.0)}
    shares = {mm.name: 0.99, copy.name: 0.01}
    big, small = dispatch_rooflines(ops, profile, shares, line)
    assert big.flops == 4e6 and big.bytes == 240_000 and big.gflops == pytest.approx(4.0)
    assert big.intensity == pytest.approx(4e6 / 240_000)
    assert big.roofline_share == pytest.approx(4.0 / 100.0) and big.below_roofline
    assert small.gflops is None and small.gbytes_per_s == pytest.approx(0.8)
    assert small.roofline_share == pytest.approx(0.08) and not small.below_roofline  # 1% of the time
    assert "GB/s" in small.rate() and "GFLOP/s" in big.rate()
    assert set(json.loads(json.dumps(big.to_json()))) >= {"gflops", "gbytes_per_s", "intensity", "roofline_share"}


def test_short_names_drop_the_function_unless_two_would_clash() -> None:
    assert short_names(["main$async_dispatch_3_mm", "main$async_dispatch_4_mm"])["main$async_dispatch_3_mm"] == (
        "dispatch_3_mm"
    )
    clash = ["a_dispatch_0_mm", "b_dispatch_0_mm"]
    assert short_names(clash) == {n: n for n in clash}
