"""Timing IREE modules on this CPU: one module in one ``iree-benchmark-module`` process
(:func:`iree_sample`), or a round of modules side by side in one process
(:func:`time_round`).

:func:`time_round` starts :mod:`tdsl.measure.round_runner` on the modules of one round, which
loads each in its own instance and calls them in turn, a short burst each in a fresh seeded
order per cycle, until every one has had ``min_time_s`` of timed calls. On a shared or
virtual machine one core's speed drifts by tens of percent over seconds; modules called
tens of milliseconds apart see the same spells, separate processes do not, so ratios
within a round hold still where ratios across processes do not. ``tdsl bench`` times
IREE's builds this way, and so does ``tdsl tune`` (through its executors). Every timed
process runs with glibc's malloc pinned (:data:`MALLOC_STEADY_STATE`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import BenchFailed
from ..programs.program import ParameterArchive
from .round_runner import RoundSpec

SAMPLE_TIMEOUT_S = 600.0
"""Seconds of calls one module gets per sample before it is stopped (``tdsl bench``)."""


def benchmark_tool() -> str:
    """The real ``iree-benchmark-module`` binary of the runtime wheel."""
    import iree.runtime

    path = Path(iree.runtime.__file__).resolve().parent.parent / "_runtime_libs" / "iree-benchmark-module"
    if not path.is_file():
        raise BenchFailed(f"iree-benchmark-module not found at {path}")
    return str(path)


def _device_flags(threads: int) -> list[str]:
    if threads == 1:
        return ["--device=local-sync"]
    return ["--device=local-task", f"--task_topology_group_count={threads}"]


ALLOCATORS = ("default", "caching")
"""The IREE runtime's device allocators ``bench`` can time with: ``default`` (every call's
transient buffers come from the C library's ``malloc``, in the steady state of
:data:`MALLOC_STEADY_STATE`) and ``caching`` (``--device_allocator=caching``: IREE reuses
buffers across calls)."""

MALLOC_STEADY_STATE = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}
"""glibc's malloc tunables that every timed ``iree-benchmark-module`` runs with: the steady
state a long-running process reaches once it has freed its largest transient buffer
(glibc raises its mmap threshold to the size of a freed mmapped block, up to 32 MiB, and
its trim threshold to twice that). Without them the state depends on the process's
allocation history: one 1000^3 module measured 8.2 ms with the console report and 11.4 ms
with the JSON report (a 4 MB transient freshly mapped and faulted on every call: 263,000
minor faults against 26,000), while data tiling measured 9.1 ms in both. Other C
libraries ignore these variables."""


def benchmark_env() -> dict[str, str]:
    """The environment of a timed ``iree-benchmark-module``: this one, with glibc's malloc
    pinned to :data:`MALLOC_STEADY_STATE`."""
    return {**os.environ, **MALLOC_STEADY_STATE}


def benchmark_command(
    vmfb: Path,
    function: str,
    inputs: Sequence[Path],
    threads: int,
    min_time_s: float,
    allocator: str = "default",
    device: str = "",
    parameters: Sequence[str] = (),
) -> list[str]:
    """The ``iree-benchmark-module`` command that times ``function`` of ``vmfb`` once: warm-up,
    then back-to-back calls for ``min_time_s``, on ``threads`` threads of this CPU (or on
    ``device``, e.g. ``hip://0``) with ``allocator``, the module's weights read from the
    ``parameters`` archives (``scope=path.irpa``); JSON on stdout."""
    return [
        benchmark_tool(),
        f"--module={vmfb}",
        *(f"--parameters={p}" for p in parameters),
        f"--function={function}",
        *(f"--input=@{p}" for p in inputs),
        *([f"--device={device}"] if device else _device_flags(threads)),
        *([f"--device_allocator={allocator}"] if allocator != "default" else []),
        "--benchmark_repetitions=1",
        f"--benchmark_min_time={min_time_s}s",
        "--benchmark_min_warmup_time=0.05",
        "--benchmark_format=json",
    ]


def iree_sample(
    vmfb: Path,
    function: str,
    inputs: Sequence[Path],
    threads: int,
    min_time_s: float,
    allocator: str = "default",
    parameters: Sequence[str] = (),
) -> float:
    """Seconds per call of ``function`` in ``vmfb`` (one iree-benchmark-module process: warm-up,
    then back-to-back calls for ``min_time_s``) on ``threads`` threads with ``allocator``,
    weights read from the ``parameters`` archives (``scope=path``)."""
    command = benchmark_command(vmfb, function, inputs, threads, min_time_s, allocator, parameters=parameters)
    stdout = run_tool(command, f"iree-benchmark-module on {vmfb.name} ({function})", env=benchmark_env())
    return benchmark_seconds(stdout)


def run_tool(
    command: Sequence[str], what: str, env: dict[str, str] | None = None, timeout_s: float = SAMPLE_TIMEOUT_S
) -> str:
    """stdout of a timing tool's ``command`` (``what`` names it in messages). A timeout, a
    tool that cannot start or a non-zero exit is one :class:`~tdsl.errors.BenchFailed` line
    with the end of its stderr."""
    try:
        proc = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        raise BenchFailed(f"{what} ran past {timeout_s:g} s and was killed") from None
    except OSError as err:
        raise BenchFailed(f"{what} could not start: {err}") from None
    if proc.returncode != 0:
        raise BenchFailed(f"{what} failed (exit {proc.returncode}): {' '.join(proc.stderr.split())[-400:]}")
    return proc.stdout


def benchmark_seconds(stdout: str) -> float:
    """Seconds per call from the JSON ``iree-benchmark-module --benchmark_format=json``
    prints (its first iteration run's real time). Raises ValueError, KeyError, IndexError or
    TypeError where there is no such run."""
    runs = [b for b in json.loads(stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[runs[0].get("time_unit", "ns")]
    return float(runs[0]["real_time"]) * unit


ROUND_RUNNER = Path(__file__).with_name("round_runner.py")
ROUND_LOAD_S = 120.0
"""Seconds a round runner gets to load its modules, beyond its slots' own timeouts."""
WARMUP_S = 0.05
"""Seconds each module of a round runs alone before the timed calls (as
``iree-benchmark-module --benchmark_min_warmup_time``)."""


@dataclass(frozen=True)
class SlotTime:
    """One slot of a round: seconds per call (the median of its timed calls), or None and a
    one-line ``error`` (a module the runtime rejects, a failing call, its timeout)."""

    seconds: float | None
    error: str
    calls: int


def time_round(
    modules: Sequence[Path],
    function: str,
    inputs: Sequence[Path],
    *,
    min_time_s: float,
    timeouts_s: Sequence[float],
    threads: int = 1,
    parameters: Sequence[ParameterArchive] = (),
    seed: int = 0,
) -> list[SlotTime] | None:
    """Times ``function`` of every module in ``modules`` (one slot each; a module may fill
    several slots, each loaded anew) side by side in one runner process on ``threads``
    threads of this CPU with IREE's default allocator, reading weights from
    ``parameters``; each slot is stopped after ``timeouts_s[i]`` seconds of calls. Returns
    one :class:`SlotTime` per slot, or None where the runner itself died, hung or printed no
    result (a module that faults takes the process with it): the caller times those
    modules one process each instead. Raises nothing for a bad module."""
    if len(timeouts_s) != len(modules):
        raise ValueError(f"{len(modules)} modules but {len(timeouts_s)} timeouts")
    spec: RoundSpec = {
        "function": function,
        "inputs": [str(p) for p in inputs],
        "parameters": [[a.scope, str(a.path)] for a in parameters],
        "threads": threads,
        "min_time_s": min_time_s,
        "warmup_s": WARMUP_S,
        "seed": seed,
        "slots": [{"module": str(m), "timeout_s": t} for m, t in zip(modules, timeouts_s)],
    }
    try:
        proc = subprocess.run(
            [sys.executable, str(ROUND_RUNNER)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=ROUND_LOAD_S + sum(timeouts_s),
            env=benchmark_env(),
        )
        slots = json.loads(proc.stdout)["slots"] if proc.returncode == 0 else None
        if not isinstance(slots, list) or len(slots) != len(modules):
            return None
        return [SlotTime(s["seconds"], s["error"], int(s["calls"])) for s in slots]
    except (subprocess.TimeoutExpired, OSError, ValueError, KeyError, TypeError):
        return None
