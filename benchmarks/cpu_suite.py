"""The issue-4 CPU suite: tdsl.strategies.cpu.auto() against IREE default, IREE with data
tiling and numpy, side by side (interleaved) per shape, single-threaded by default.

Weights are runtime inputs (every operand is a function argument). Prints one line per
shape with medians and ratios, then geomeans. Usage:

    python benchmarks/cpu_suite.py [--threads 1] [--repetitions 3] [--min-time 0.1] [--only 1024]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from tdsl.bench import DATA_TILING, DEFAULT, NUMPY, STRATEGY, bench
from tdsl.strategies.cpu import auto

MATMULS = {
    "mm256": (256, 256, 256),
    "mm512": (512, 512, 512),
    "mm1024": (1024, 1024, 1024),
    "mm2048": (2048, 2048, 2048),
    "mm1000": (1000, 1000, 1000),
    "mm384x128x384": (384, 128, 384),
    "mm3136x128x64": (3136, 128, 64),
    "mv1x4096x4096": (1, 4096, 4096),
}


def matmul_payload(name: str, m: int, n: int, k: int) -> str:
    return f"""func.func @{name}(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.1)
    parser.add_argument("--only", default="", help="substring of the shape names to run")
    args = parser.parse_args()
    threads = tuple(int(t) for t in args.threads.split(","))
    strategies = auto()
    vs_best, vs_numpy = [], []
    print(f"{'shape':<16} {'thr':>3} {'tdsl ms':>9} {'default':>9} {'DT':>9} {'numpy':>9} {'x best IREE':>11} {'x numpy':>8} {'GFLOP/s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (m, n, k) in MATMULS.items():
            if args.only not in name:
                continue
            payload = Path(tmp) / f"{name}.mlir"
            payload.write_text(matmul_payload(name, m, n, k))
            report = bench(payload, strategies, threads=threads, repetitions=args.repetitions, min_time_s=args.min_time)
            for t in threads:
                rows = {v: report.row(name, t, v) for v in (STRATEGY, DEFAULT, DATA_TILING, NUMPY)}
                med = {v: r.median * 1e3 for v, r in rows.items() if r is not None}
                best = min(med[DEFAULT], med[DATA_TILING])
                ratio_best = best / med[STRATEGY]
                ratio_np = med[NUMPY] / med[STRATEGY] if NUMPY in med else float("nan")
                if t == 1:
                    vs_best.append(ratio_best)
                    vs_numpy.append(ratio_np)
                gflops = rows[STRATEGY].gflops if rows[STRATEGY] else None
                print(
                    f"{name:<16} {t:>3} {med[STRATEGY]:9.3f} {med[DEFAULT]:9.3f} {med[DATA_TILING]:9.3f} "
                    f"{med.get(NUMPY, float('nan')):9.3f} {ratio_best:11.2f} {ratio_np:8.2f} {gflops or 0:8.1f}",
                    flush=True,
                )
    if vs_best:
        geo = math.exp(sum(math.log(r) for r in vs_best) / len(vs_best))
        geo_np = math.exp(sum(math.log(r) for r in vs_numpy) / len(vs_numpy))
        print(f"1-thread geomean: {geo:.2f}x the better of IREE default / data tiling (target 1.15x, none below 0.95x); "
              f"{geo_np:.2f}x numpy (target 0.9x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
