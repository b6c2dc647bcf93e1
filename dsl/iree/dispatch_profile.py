"""Where a module's time goes: the time each dispatch function takes in back-to-back calls of
one function, measured by the IREE runtime itself.

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
import tempfile
from pathlib import Path
from typing import Sequence

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


def dispatch_times(vmfb: Path, function: str, inputs: Sequence[Path], min_time_s: float = 0.5, parameters: Sequence[str] = ()) -> dict[str, float]:
    """Seconds each dispatch function of ``vmfb`` took in total over back-to-back calls of
    ``function`` (1 thread, ``inputs`` as ``.npy`` files, weights from the ``parameters``
    archives), by its executable function name (``main$async_dispatch_3_matmul_..``).
    Raises :class:`~tdsl.errors.BenchFailed` (one line) where a tool fails."""
    with tempfile.TemporaryDirectory(prefix="tdsl-profile-") as tmp:
        bundle = Path(tmp) / "profile.ireeprof"
        command = [*benchmark_command(vmfb, function, inputs, 1, min_time_s, parameters=parameters),
                   f"--device_profiling_mode={PROFILE_MODE}", f"--device_profiling_output={bundle}"]
        run_tool(command, f"iree-benchmark-module (profiling {vmfb.name})", env=benchmark_env())
        rows = run_tool([profile_tool(), "statistics", "--format=jsonl", str(bundle)], f"iree-profile on {vmfb.name}")
    times: dict[str, float] = {}
    for line in rows.splitlines():
        row = json.loads(line)
        if row.get("row_type") == "host_execution_function" and row.get("function_name"):
            times[row["function_name"]] = times.get(row["function_name"], 0.0) + row["total_duration_ns"] * 1e-9
    if not times:
        raise BenchFailed(f"iree-profile found no dispatch of {vmfb.name} ({function}) in its profile")
    return times

