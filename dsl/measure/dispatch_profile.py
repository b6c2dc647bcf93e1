"""Where a module's time goes: the time each dispatch function takes, and how often it
launches, in back-to-back calls of one function, measured by the IREE runtime itself (a
dispatch in a loop launches once per iteration, where IREE's static count says once).

:func:`dispatch_times` runs ``iree-benchmark-module`` with the HAL's host-execution profiling
(``--device_profiling_mode=host-execution``: the local CPU devices time every dispatch they
execute) and reads the bundle with ``iree-profile statistics --format=jsonl``; both tools
ship in the pinned ``iree-base-runtime`` wheel, so no ``perf`` or debug symbols are needed.
``tdsl tune`` orders its jobs by these times (the share of the baseline's time, where flops
misjudge: a grouped, dilated 3x3 convolution of a ResNet block was 7.9 % of its flops and
33 % of IREE default's time).
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple, Sequence

from ..compiler.ops import Dispatch, ProgramOps
from ..errors import BenchFailed
from .timing import benchmark_command, benchmark_env, benchmark_tool, run_tool

PROFILE_MODE = "host-execution"
"""The HAL profiling data family the local CPU devices record per dispatch (3.13 refuses
``dispatch-events`` on them: 'unsupported local profiling data families')."""


def profile_tool() -> str:
    """The ``iree-profile`` binary beside ``iree-benchmark-module`` in the runtime wheel."""
    path = Path(benchmark_tool()).with_name("iree-profile")
    if not path.is_file():
        raise BenchFailed(f"iree-profile not found at {path}")
    return str(path)


class DispatchTime(NamedTuple):
    """One dispatch function's share of a call: seconds and launches per call, as measured."""

    seconds: float
    launches: float
    """Launches per call: more than IREE's static count where the dispatch sits in a loop (an
    LSTM's time steps launch its gate matmuls once per step)."""


def calls_for(seconds_per_call: float | None, min_time_s: float = 0.5) -> int:
    """How many back-to-back calls of a function taking ``seconds_per_call`` fill
    ``min_time_s`` (3 to 10,000; 20 where the time is not known)."""
    if not seconds_per_call or seconds_per_call <= 0:
        return 20
    return max(3, min(10_000, math.ceil(min_time_s / seconds_per_call)))


def dispatch_times(
    vmfb: Path,
    function: str,
    inputs: Sequence[Path],
    calls: int = 20,
    parameters: Sequence[str] = (),
    threads: int = 1,
) -> dict[str, DispatchTime]:
    """Seconds and launches per call of each dispatch function of ``vmfb`` (by its executable
    function name, ``main$async_dispatch_3_matmul_..``) over exactly ``calls`` back-to-back
    calls of ``function`` on ``threads`` threads (IREE's task topology, as
    :func:`~tdsl.measure.timing.benchmark_command` sets it; a dispatch's seconds are its
    wall time, not summed over threads), with no warm-up call, so that launches divide by
    the calls; ``inputs`` as ``.npy`` files, weights from the ``parameters`` archives.
    Raises :class:`~tdsl.errors.BenchFailed` (one line) where a tool fails."""
    if calls < 1:
        raise BenchFailed(f"calls: expected at least 1, received {calls}")
    with tempfile.TemporaryDirectory(prefix="tdsl-profile-") as tmp:
        bundle = Path(tmp) / "profile.ireeprof"
        command = [
            *(
                flag
                for flag in benchmark_command(vmfb, function, inputs, threads, 0.0, parameters=parameters)
                if not flag.startswith(("--benchmark_min_time=", "--benchmark_min_warmup_time="))
            ),
            f"--benchmark_min_time={calls}x",
            "--benchmark_min_warmup_time=0",
            f"--device_profiling_mode={PROFILE_MODE}",
            f"--device_profiling_output={bundle}",
        ]
        run_tool(command, f"iree-benchmark-module (profiling {vmfb.name})", env=benchmark_env())
        rows = run_tool([profile_tool(), "statistics", "--format=jsonl", str(bundle)], f"iree-profile on {vmfb.name}")
    totals: dict[str, tuple[float, int]] = {}
    for line in rows.splitlines():
        row = json.loads(line)
        if row.get("row_type") == "host_execution_function" and row.get("function_name"):
            seconds, count = totals.get(row["function_name"], (0.0, 0))
            totals[row["function_name"]] = (seconds + row["total_duration_ns"] * 1e-9, count + int(row["sample_count"]))
    if not totals:
        raise BenchFailed(f"iree-profile found no dispatch of {vmfb.name} ({function}) in its profile")
    return {name: DispatchTime(seconds / calls, count / calls) for name, (seconds, count) in totals.items()}


def with_measured_launches(ops: ProgramOps, profile: dict[str, DispatchTime]) -> ProgramOps:
    """``ops`` with each dispatch's launches per call as ``profile`` measured them where they
    differ from IREE's static count (a dispatch in a loop launches once per iteration: an
    LSTM's gate matmuls, once per time step)."""

    def measured(d: Dispatch) -> Dispatch:
        found = profile.get(d.name)
        return replace(d, launches=round(found.launches)) if found is not None and round(found.launches) >= 1 else d

    return replace(ops, dispatches=tuple(measured(d) for d in ops.dispatches))


def time_shares(profile: dict[str, DispatchTime]) -> dict[str, float]:
    """Each dispatch's share of the time per call in ``profile`` (one function's calls: the
    shares add up to 1)."""
    total = sum(t.seconds for t in profile.values())
    return {name: t.seconds / total for name, t in profile.items()} if total > 0 else {}
