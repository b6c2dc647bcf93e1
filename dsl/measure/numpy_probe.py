"""The roofline probes without a C compiler, run by path (imports only numpy): ``peak``
times numpy's float32 GEMM (its BLAS, one thread: the caller sets the BLAS thread
variables), ``bandwidth`` a numpy sum over an array of MIB MiB. Each prints its best rate
first, as the C probes do:

    python numpy_probe.py peak|bandwidth SECONDS [MIB]
"""

from __future__ import annotations

import sys
import time

import numpy as np

GEMM_SIZE = 512
"""The square GEMM timed for the peak: large enough for the BLAS kernel's steady state,
small enough to sit in a core's L2 and L3."""


def peak(seconds: float) -> str:
    """Best float32 GEMM rate over ``seconds`` of back-to-back calls, in GFLOP/s."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((GEMM_SIZE, GEMM_SIZE), dtype=np.float32)
    b = rng.standard_normal((GEMM_SIZE, GEMM_SIZE), dtype=np.float32)
    out = np.empty_like(a)
    best, start, calls = 0.0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds or calls < 3:
        t0 = time.perf_counter()
        np.matmul(a, b, out=out)
        best = max(best, 2 * GEMM_SIZE**3 / (time.perf_counter() - t0) / 1e9)
        calls += 1
    return f"{best:.1f} GFLOP/s f32 (numpy float32 GEMM {GEMM_SIZE}^3, best of {calls} calls)"


def bandwidth(seconds: float, mib: int) -> str:
    """Best rate of a numpy sum over ``mib`` MiB of float32 over ``seconds``, in GB/s."""
    data = np.arange(mib * (1 << 20) // 4, dtype=np.float32) * np.float32(1e-3)
    best, start, passes = 0.0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds or passes < 3:
        t0 = time.perf_counter()
        data.sum()
        best = max(best, data.nbytes / (time.perf_counter() - t0) / 1e9)
        passes += 1
    return f"{best:.1f} GB/s read (numpy sum, best of {passes} passes over {mib} MiB)"


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("peak", "bandwidth"):
        print("usage: numpy_probe.py peak|bandwidth SECONDS [MIB]", file=sys.stderr)
        return 2
    seconds = float(argv[1])
    print(peak(seconds) if argv[0] == "peak" else bandwidth(seconds, int(argv[2]) if len(argv) > 2 else 256))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
