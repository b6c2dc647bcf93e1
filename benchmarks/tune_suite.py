"""Tunes the issue-4 CPU suite with ``tdsl tune`` and prints, per shape, the tuned program
against the better of IREE default and IREE data tiling, measured side by side in the
tuning's model pass (interleaved rounds, medians), with the geomean, the lowest ratio and
the wall time of the whole tuning. Run it twice: the second run reuses the cache (builds
and samples on this machine) and shows the warm-cache wall time.

    python benchmarks/tune_suite.py [--weights constant|runtime] [--budget 24] [--only mm256]
                                    [--cache PATH] [--out DIR]

1 thread, IREE's default allocator; the ISA is detected and printed with the figures.

``rules`` counts the op-level rules the tuning chose (the ready library's rules a tuned
base keeps are not counted).

The roofline of this core comes first (``tdsl.measure.roofline.machine_roofline``, cached per
machine): the f32 FMA peak and the read bandwidth from memory. ``GFLOP/s`` is the tuned
program's. ``ceiling`` is the most any tuning could gain over the better IREE path on a
compute-bound shape (flops per byte moved above the machine balance, peak / bandwidth;
bytes: every operand read once and the result written once): the time of that path over
``flops / peak``; the last line is its geomean over those shapes. A memory-bound shape
says ``memory`` (its operands may sit partly in the L3 cache between calls, so the
bandwidth from memory gives it no honest bound).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from cpu_suite import BYTES, FLOPS, payloads
from tdsl.measure.machine import ISA_NAMES, machine
from tdsl.measure.roofline import machine_roofline
from tdsl.tune import LocalExecutor, TuneCache, TuneOptions, tune, write_outputs
from tdsl.tune.measure import speedup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", choices=("constant", "runtime"), default="constant")
    parser.add_argument("--budget", type=int, default=TuneOptions().budget)
    parser.add_argument("--rounds", type=int, default=TuneOptions().rounds)
    parser.add_argument("--only", default="", help="substring of the shape names to tune")
    parser.add_argument("--cache", type=Path, default=None, help="tuning cache (default: the user cache dir)")
    parser.add_argument(
        "--out", type=Path, default=None, help="write each shape's tuned.py / report.json under DIR/<shape>"
    )
    args = parser.parse_args()
    if not any(args.only in name for name in payloads(False)):
        parser.error(
            f"--only: expected a substring of a shape name ({', '.join(payloads(False))}), received {args.only!r}"
        )
    m = machine()
    print(
        f"machine: {m['cpu']}, ISA {ISA_NAMES.get(m['isa'], m['isa'])}, {m['cores']} cores; 1 thread; weights {args.weights}; budget {args.budget}"
    )
    roofline = machine_roofline(1)
    peak, bandwidth = roofline.peak_gflops, roofline.bandwidth_gb_s
    print(roofline.footer(), roofline.methods())
    options = TuneOptions(budget=args.budget, rounds=args.rounds)
    ratios: dict[str, float] = {}
    ceilings: dict[str, float] = {}
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="tdsl-tune-suite-") as tmp,
        TuneCache(args.cache) as cache,
        LocalExecutor() as executor,
    ):
        print(
            f"{'shape':<18} {'IREE default':>13} {'data tiling':>12} {'tuned':>10} {'vs best':>8} {'rules':>5}  {'s':>5} {'GFLOP/s':>8} {'ceiling':>8}"
        )
        for name, text in payloads(args.weights == "constant").items():
            if args.only and args.only not in name:
                continue
            payload = Path(tmp) / f"{name}.mlir"
            payload.write_text(text)
            shape_start = time.monotonic()
            result = tune(payload, options=options, executor=executor, cache=cache)
            if args.out:
                write_outputs(result, args.out / name)
            by = {v.label: v for v in result.final}
            default, tiling = by.get("iree-default"), by.get("iree-data-tiling")
            best = min((v for v in (default, tiling) if v is not None and v.median), key=lambda v: v.median or math.inf)
            chosen = by[result.chosen]
            ratio = speedup(chosen, best) or 0.0
            ratios[name] = ratio

            def ms(v: object) -> str:
                median = getattr(v, "median", None)
                return f"{median * 1e3:.3f}" if median else "-"

            compute_bound = FLOPS[name] / BYTES[name] > peak / bandwidth
            if compute_bound and best.median:
                ceilings[name] = best.median / (FLOPS[name] / (peak * 1e9))
            rate = f"{FLOPS[name] / chosen.median / 1e9:.0f}" if chosen.median else "-"
            ceiling = f"{ceilings[name]:.2f}x" if name in ceilings else "memory"
            print(
                f"{name:<18} {ms(default):>13} {ms(tiling):>12} {ms(chosen):>10} {ratio:>7.2f}x {len(chosen.rules):>5}  {time.monotonic() - shape_start:>5.0f} {rate:>8} {ceiling:>8}"
            )
    wall = time.monotonic() - started
    values = [r for r in ratios.values() if r > 0]
    geomean = _geomean(values)
    print(
        f"geomean tuned / best of IREE default and data tiling: {geomean:.2f}x; lowest {min(values):.2f}x; shapes {len(values)}"
    )
    if ceilings:
        print(
            f"ceiling (at the FMA peak, over the better IREE path), geomean of the {len(ceilings)} compute-bound shapes: {_geomean(list(ceilings.values())):.2f}x"
        )
    print(f"tuning wall time: {wall:.0f} s ({wall / 60:.1f} min); cache: {cache.path}")
    return 0


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


if __name__ == "__main__":
    raise SystemExit(main())
