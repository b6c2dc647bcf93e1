"""The probes of a machine's roofline: the f32 FMA peak (GFLOP/s) and the read bandwidth
from memory (GB/s) of ``threads`` threads, each measured by that many single-threaded probe
processes side by side (no more than the CPUs this process may use), their rates summed.

The probes are C programs shipped with tdsl (``c_probes/fma_peak.c`` and
``c_probes/read_bandwidth.c``), built with ``cc -O2 -march=native`` into the user cache on
first use (``probes/`` under :func:`tdsl.files.cache_root`, named by a hash of the sources
and the compiler's path). Without a C compiler, or where a probe does not build or run (a
CPU with neither AVX2 nor AVX-512), :mod:`tdsl.measure.numpy_probe` stands in: numpy's
float32 GEMM for the peak, a numpy sum for the bandwidth; the method says which.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..errors import BenchFailed
from ..files import cache_root
from .machine import usable_cpus
from .timing import run_tool

C_PROBES = Path(__file__).with_name("c_probes")
"""The C sources of the probes (package data) and the header they share."""
NUMPY_PROBE = Path(__file__).with_name("numpy_probe.py")
PROBE_SECONDS = 1.0
"""Seconds each probe process runs (it reports its best pass)."""
BUILD_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 120.0
"""Seconds a probe process gets before it is stopped (its own loop runs PROBE_SECONDS)."""
ONE_THREAD_ENV = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
"""What keeps numpy's BLAS on one thread in a numpy probe process."""


@dataclass(frozen=True)
class Probed:
    """A rate the probes measured, summed over their copies (GFLOP/s or GB/s), how it was
    measured, and why a stand-in measured it (empty where the C probe did)."""

    rate: float
    method: str
    notes: tuple[str, ...] = ()


def bandwidth_mib(copies: int) -> int:
    """MiB each bandwidth probe reads: 256 MiB in all, at least 64 MiB each (far beyond the
    cache a core has)."""
    return max(64, 256 // copies)


def c_compiler() -> str | None:
    """The C compiler on PATH (``cc``, ``gcc`` or ``clang``), or None."""
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _probe_dir(scratch: Path) -> Path:
    """Where built probes are kept: ``probes/`` in the user cache, else ``scratch`` (a
    cache that cannot be made or written)."""
    directory = cache_root() / "probes"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return scratch
    return directory if os.access(directory, os.W_OK | os.X_OK) else scratch


def _built(name: str, scratch: Path) -> tuple[Path | None, str]:
    """The probe ``name`` built (from the cache, else compiled into it; into ``scratch``
    where the cache cannot be written), or None and why."""
    cc = c_compiler()
    if cc is None:
        return None, "no C compiler (cc, gcc, clang) on PATH"
    source = C_PROBES / f"{name}.c"
    digest = hashlib.sha256(cc.encode())
    for path in (source, C_PROBES / "vec.h"):
        digest.update(path.read_bytes())
    directory = _probe_dir(scratch)
    exe = directory / f"{name}-{digest.hexdigest()[:16]}"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe, ""
    staged = directory / f".{exe.name}.{os.getpid()}"
    command = [cc, "-O2", "-march=native", str(source), "-o", str(staged)]
    try:
        built = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"{source.name} did not build in {BUILD_TIMEOUT_S:g} s"
    except OSError as err:
        return None, f"{source.name} did not build: {err}"
    if built.returncode != 0:
        last = (built.stderr.strip().splitlines() or ["no message"])[-1]
        return None, f"{source.name} did not build with {cc} -march=native: {' '.join(last.split())}"
    os.replace(staged, exe)
    return exe, ""


_RATE = re.compile(r"\s*([0-9.]+) ")


def _side_by_side(command: list[str], copies: int, what: str, env: dict[str, str] | None = None) -> float:
    """The sum of the first numbers that ``copies`` processes of ``command``, started
    together, print. Raises BenchFailed (one line) where one fails."""
    with ThreadPoolExecutor(max_workers=copies) as pool:
        outputs = list(pool.map(lambda _: run_tool(command, what, env=env, timeout_s=RUN_TIMEOUT_S), range(copies)))
    rates = []
    for out in outputs:
        found = _RATE.match(out)
        if found is None:
            raise BenchFailed(f"{what}: expected a rate first, received {out.strip()[:80]!r}")
        rates.append(float(found.group(1)))
    return sum(rates)


def _measured(
    name: str, c_args: list[str], numpy_args: list[str], copies: int, c_method: str, np_method: str
) -> Probed:
    """The C probe ``name`` run ``copies`` times side by side, else the numpy stand-in."""
    with tempfile.TemporaryDirectory(prefix="tdsl-probe-") as scratch:
        exe, why = _built(name, Path(scratch))
        if exe is not None:
            try:
                return Probed(_side_by_side([str(exe), *c_args], copies, f"the {name} probe"), c_method)
            except BenchFailed as failed:
                why = str(failed)
    env = {**os.environ, **ONE_THREAD_ENV}
    rate = _side_by_side([sys.executable, str(NUMPY_PROBE), *numpy_args], copies, f"the numpy {name} probe", env)
    return Probed(rate, f"{np_method}: no C probe", (f"{name}: {why}; numpy measured instead",))


def probe_copies(threads: int) -> int:
    """How many probe processes measure ``threads`` threads: one per thread, but no more
    than the CPUs this process may use (more threads than CPUs share them)."""
    return max(1, min(threads, usable_cpus()))


def measure_peak(threads: int, seconds: float = PROBE_SECONDS) -> Probed:
    """The f32 FMA peak of ``threads`` threads in GFLOP/s: one FMA loop per thread
    (:func:`probe_copies`), side by side (numpy's float32 GEMM where no C probe runs)."""
    copies = probe_copies(threads)
    return _measured(
        "fma_peak",
        [str(seconds)],
        ["peak", str(seconds)],
        copies,
        f"FMA loop x {copies}, cc -O2 -march=native",
        f"numpy float32 GEMM x {copies}",
    )


def measure_bandwidth(threads: int, seconds: float = PROBE_SECONDS) -> Probed:
    """The read bandwidth from memory of ``threads`` threads in GB/s: one read loop per
    thread (:func:`probe_copies`) over :func:`bandwidth_mib` MiB each, side by side (a
    numpy sum where no C probe runs)."""
    copies = probe_copies(threads)
    mib = bandwidth_mib(copies)
    return _measured(
        "read_bandwidth",
        [str(seconds), str(mib)],
        ["bandwidth", str(seconds), str(mib)],
        copies,
        f"read loop x {copies} over {mib} MiB each",
        f"numpy sum x {copies} over {mib} MiB each",
    )
