"""Per-dispatch times of a compiled module (tdsl.measure.dispatch_profile), as ``tdsl tune``
orders its jobs by them: real builds, the IREE runtime's own host-execution profile."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tdsl import CpuTarget
from tdsl.compiler.ops import ProgramOps, list_dispatches
from tdsl.errors import BenchFailed
from tdsl.measure.dispatch_profile import dispatch_times, with_measured_launches
from tdsl.tune.op_jobs import op_jobs

pytestmark = pytest.mark.e2e

SMALL_BESIDE_LARGE = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "small_beside_large.mlir"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], ProgramOps]:
    """The two-matmul payload compiled for this CPU, its inputs and its op listing."""
    import tdsl

    tmp = tmp_path_factory.mktemp("profile")
    payload = SMALL_BESIDE_LARGE
    vmfb = tmp / "two.vmfb"
    tdsl.compile(payload, tdsl.StrategySet(name="none", targets=[CpuTarget()], rules=[]), "cpu", output=vmfb)
    rng = np.random.default_rng(0)
    inputs = []
    for i, shape in enumerate([(256, 256), (256, 256), (4, 8), (8, 16)]):
        inputs.append(tmp / f"in{i}.npy")
        np.save(inputs[-1], rng.standard_normal(shape).astype(np.float32))
    return vmfb, inputs, list_dispatches(payload, CpuTarget())


def test_each_dispatch_of_the_listing_gets_its_measured_time(built: tuple[Path, list[Path], ProgramOps]) -> None:
    """Every dispatch of the op listing is in the profile under its own name, and the 256^3
    matmul takes far more of the time than the 4x8x16 one (32768 times its flops)."""
    vmfb, inputs, ops = built
    dispatches = ops.dispatches
    times = dispatch_times(vmfb, "two", inputs, calls=30)
    assert {d.name for d in dispatches} <= set(times)
    assert all(times[d.name].launches == d.launches == 1 for d in dispatches)
    big = next(d.name for d in dispatches if "256x256x256" in d.name)
    small = next(d.name for d in dispatches if "4x16x8" in d.name)
    assert times[big].seconds > 20 * times[small].seconds > 0


def test_jobs_are_ordered_by_the_time_given_and_by_flops_without_it(built: tuple[Path, list[Path], ProgramOps]) -> None:
    """With per-dispatch times the jobs' shares are of the time (here made up to put the
    small matmul first, as a slow op with few flops would be), and the cut-off names time;
    with none, or none that names the listing's dispatches, they are of the flops."""
    _, _, ops = built
    dispatches = ops.dispatches
    big = next(d.name for d in dispatches if "256x256x256" in d.name)
    small = next(d.name for d in dispatches if "4x16x8" in d.name)
    by_time = op_jobs(ops, times={big: 1.0, small: 3.0})
    assert [j.dispatch.name for j in by_time] == [small, big] and by_time[0].share == pytest.approx(0.75)
    by_flops = op_jobs(ops, times={"elsewhere": 1.0})
    assert [j.dispatch.name for j in by_flops] == [big, small] and by_flops[1].share < 0.01
    assert "of the work" in by_flops[1].skipped
    tiny = op_jobs(ops, times={big: 1000.0, small: 1.0})
    assert "of the time" in tiny[1].skipped


def test_a_module_that_cannot_run_is_one_line(tmp_path: Path) -> None:
    """A file that is no module fails with one BenchFailed line, not a traceback."""
    bad = tmp_path / "bad.vmfb"
    bad.write_bytes(b"not a module")
    with pytest.raises(BenchFailed) as err:
        dispatch_times(bad, "f", [], calls=3)
    assert "\n" not in str(err.value) and "bad.vmfb" in str(err.value)


def test_every_timing_tool_failure_is_one_line(tmp_path: Path) -> None:
    """The one runner of the timing tools (iree-benchmark-module, iree-profile, the
    onnxruntime and numpy timers): a tool that cannot start, exits non-zero or runs past
    its timeout is one BenchFailed line naming it."""
    from tdsl.measure.timing import run_tool

    with pytest.raises(BenchFailed, match=r"^the probe could not start: .*no-such-tool") as missing:
        run_tool([str(tmp_path / "no-such-tool")], "the probe")
    failing = ["sh", "-c", "echo first >&2; echo last >&2; exit 3"]
    with pytest.raises(BenchFailed, match=r"^the probe failed \(exit 3\): first last$") as failed:
        run_tool(failing, "the probe")
    with pytest.raises(BenchFailed, match=r"^the probe ran past 0.2 s and was killed$") as slow:
        run_tool(["sleep", "5"], "the probe", timeout_s=0.2)
    assert all("\n" not in str(e.value) for e in (missing, failed, slow))
    assert run_tool(["sh", "-c", "echo ok"], "the probe") == "ok\n"


LOOP = """
func.func @loop(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %x) -> (tensor<8x16xf32>) {
    %e = tensor.empty() : tensor<8x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %m = linalg.matmul ins(%acc, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
    scf.yield %m : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}
"""


def test_a_dispatch_in_a_loop_launches_once_per_iteration(tmp_path: Path) -> None:
    """IREE's static count says one launch per call for a dispatch inside a loop (an LSTM's
    gate matmuls, once per time step); the profile counts every launch, and the tuner's
    listing takes that count."""
    import tdsl

    payload = tmp_path / "loop.mlir"
    payload.write_text(LOOP)
    vmfb = tmp_path / "loop.vmfb"
    tdsl.compile(payload, tdsl.StrategySet(name="none", targets=[CpuTarget()], rules=[]), "cpu", output=vmfb)
    inputs = []
    for i, shape in enumerate([(8, 16), (16, 16)]):
        inputs.append(tmp_path / f"in{i}.npy")
        np.save(inputs[-1], np.full(shape, 0.1, dtype=np.float32))
    ops = list_dispatches(payload, CpuTarget())
    [matmul] = [d for d in ops.dispatches if "matmul" in d.name]
    assert matmul.launches == 1  # IREE's static count
    profile = dispatch_times(vmfb, "loop", inputs, calls=7)
    assert profile[matmul.name].launches == 5
    [job] = op_jobs(with_measured_launches(ops, profile), times={k: t.seconds for k, t in profile.items()})
    assert job.launches == 5 and job.dispatch is not None and job.dispatch.launches == 5


def test_ops_profile_lists_dispatches_by_time_with_counted_launches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tdsl ops --profile` runs the build on this CPU: each dispatch gets its share of the
    time (one function's shares add up to 1) and the launches the runtime counted; the
    text lists them largest first. On gfx942 it is refused in one line."""
    from tdsl.cli import main

    payload = tmp_path / "loop.mlir"
    payload.write_text(LOOP)
    assert main(["ops", str(payload), "--target", "cpu", "--profile", "--json", "-q"]) == 0
    listing = json.loads(capsys.readouterr().out)
    [matmul] = [d for d in listing["dispatches"] if "matmul" in d["dispatch"]]
    assert matmul["launches"] == 5 and 0 < matmul["time_share"] <= 1
    assert sum(d["time_share"] for d in listing["dispatches"]) == pytest.approx(1.0)
    assert main(["ops", str(SMALL_BESIDE_LARGE), "--target", "cpu", "--profile", "-q"]) == 0
    listed = capsys.readouterr().out.splitlines()
    lines = [line for line in listed if "of the time" in line and line.lstrip().startswith("two_dispatch")]
    assert len(lines) == 2 and "256x256x256" in lines[0] and "4x16x8" in lines[1], lines
    # dispatch functions named without the function's '$' (a synchronous function's
    # "conv1d_dispatch_0_..") still share one function's time
    conv1d = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "conv1d_stack.mlir"
    assert main(["ops", str(conv1d), "--target", "cpu", "--profile", "--json", "-q"]) == 0
    shares = [d["time_share"] for d in json.loads(capsys.readouterr().out)["dispatches"]]
    assert len(shares) == 3 and sum(shares) == pytest.approx(1.0), shares
    assert main(["ops", str(payload), "--target", "gfx942", "--profile", "-q"]) == 2
    [error] = capsys.readouterr().err.strip().splitlines()
    assert "--profile" in error and "cpu" in error
