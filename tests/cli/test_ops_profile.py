"""`tdsl ops --profile`: a roofline per dispatch on this CPU, on a real frontend's model
(the committed ResNet-style stack, imported from ONNX) and on a two-matmul payload whose
flops and bytes are known exactly."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tdsl.cli import main

pytestmark = pytest.mark.compile

ROOT = Path(__file__).resolve().parent.parent.parent
RESNET = ROOT / "examples" / "models" / "resnet" / "model.onnx"
SMALL_BESIDE_LARGE = ROOT / "tests" / "payloads" / "cpu" / "small_beside_large.mlir"
FIELDS = {"seconds", "gflops", "gbytes_per_s", "intensity", "roofline_share", "below_roofline", "time_share"}


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The roofline (and the imported model) cached under this test's directory."""
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path / "cache"))


def test_resnet_profile_json_marks_the_slow_large_dispatches(capsys: pytest.CaptureFixture[str]) -> None:
    """Every dispatch gets the roofline fields; the mark is exactly 'at least 5% of the time
    and below 20% of its roofline'; a convolution's flops are 2 per point of its loops."""
    assert main(["ops", str(RESNET), "--target", "cpu", "--profile", "--threads", "1", "--json", "-q"]) == 0
    listing = json.loads(capsys.readouterr().out)
    top = listing["roofline"]
    assert top["threads"] == 1 and top["peak_gflops"] > 0 and top["bandwidth_gb_s"] > 0
    assert top["source"].startswith("measured now") and top["cpu"] == listing["machine"]["cpu"]
    dispatches = listing["dispatches"]
    assert dispatches and all(FIELDS <= set(d) and len(d["profile"]) == 1 for d in dispatches)
    for d in dispatches:
        share = d["roofline_share"]
        assert d["below_roofline"] == (d["time_share"] >= 0.05 and share is not None and share < 0.2), d["dispatch"]
        assert share is None or share > 0
    convs = [d for d in dispatches if d["root"] and d["root"]["kind"] == "convolution"]
    assert convs
    for d in convs:
        flops = 2 * math.prod(d["root"]["loop_sizes"]) * d["launches"]
        assert d["gflops"] == pytest.approx(flops / d["seconds"] / 1e9)
        assert d["bound_bytes"] > 0 and d["intensity"] == pytest.approx(flops / (d["bound_bytes"] * d["launches"]))
        assert d["tune_space"] is None or d["tune_space"].endswith("space")
    assert sum(d["time_share"] for d in dispatches) == pytest.approx(1.0)


def test_text_has_a_table_per_thread_count_and_the_machine(capsys: pytest.CaptureFixture[str]) -> None:
    """Two counts, two tables: the columns, one row per dispatch with the 256^3 matmul first,
    and a footer naming the machine and where the roofline came from (the cache, the second
    time). A bound on traffic is exact here: three 256x256 f32 buffers."""
    argv = ["ops", str(SMALL_BESIDE_LARGE), "--target", "cpu", "--profile", "-q"]
    assert main([*argv, "--json", "--threads", "1"]) == 0
    [big] = [d for d in json.loads(capsys.readouterr().out)["dispatches"] if "256x256x256" in d["dispatch"]]
    assert big["bound_bytes"] == 3 * 256 * 256 * 4 and big["intensity"] == pytest.approx(
        2 * 256**3 / big["bound_bytes"]
    )
    assert main([*argv, "--threads", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "profile at 1 thread:" in out and "profile at 2 threads:" in out
    headers = [line.split() for line in out.splitlines() if line.strip().startswith("time ")]
    assert headers == [["time", "ms", "achieved", "roofline", "covered", "by", "dispatch"]] * 2
    rows = [line for line in out.splitlines() if line.rstrip().endswith(("_f32",)) and "%" in line]
    assert len(rows) == 4 and "256x256x256" in rows[0] and "GFLOP/s" in rows[0]
    footers = [line for line in out.splitlines() if line.strip().startswith("roofline of ")]
    assert len(footers) == 2 and "1 thread:" in footers[0] and "2 threads:" in footers[1]
    assert all("GFLOP/s" in f and "GB/s" in f and "cached at" in f for f in footers)
    assert "measured now" not in footers[0]  # the JSON run measured it


def test_threads_needs_profile_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ops", str(SMALL_BESIDE_LARGE), "--target", "cpu", "-q"]
    assert main([*argv, "--threads", "1"]) == 2
    [error] = capsys.readouterr().err.strip().splitlines()
    assert "--threads" in error and "--profile" in error
    assert main([*argv, "--profile", "--threads", "0"]) == 2
    [error] = capsys.readouterr().err.strip().splitlines()
    assert "thread counts" in error and "'0'" in error
