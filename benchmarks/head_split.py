"""Exported head splits (``tdsl.strategies.cpu.fusion.head_transpose_fusion``) on an ONNX
model: the same build with and without the fusion rules, side by side in one run.

Builds, per base build (``auto()``, i.e. IREE data tiling on AVX-512, and IREE default):
no fusion rule, each head layout alone (``hsd``: queries/values, ``hds``: transposed
keys) and both. Prints per build the launches per call (and at load) from the compile
report, then the median and the minimum of interleaved single-thread samples
(``iree-benchmark-module``, ``--device=local-sync`` for 1 thread, one process per sample,
shuffled order per round) and ``ratio`` = median(base without fusion) / median(build): above 1 is faster.
The machine's ISA heads the output. Needs ``tdsl[onnx]`` for ``.onnx`` models. Usage:

    python benchmarks/head_split.py [MODEL.onnx] [--repetitions 7] [--min-time 0.2]
        [--bases auto,default] [--layouts none,hsd,hds,hsd+hds] [--threads 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np
import tdsl
from tdsl import CpuTarget, StrategySet
from tdsl.measure.timing import iree_sample
from tdsl.programs.inputs import make_inputs
from tdsl.programs.load import load_program
from tdsl.programs.signatures import signatures
from tdsl.strategies.cpu import auto, detect_isa
from tdsl.strategies.cpu.fusion import HEAD_LAYOUTS, HeadLayout, head_transpose_fusion

HERE = Path(__file__).resolve().parent
BERT = HERE.parent / "examples" / "models" / "bert" / "model.onnx"
LAYOUT: dict[str, HeadLayout] = {layout: layout for layout in HEAD_LAYOUTS}


def base_set(base: str) -> StrategySet:
    """``auto()`` (data tiling on AVX-512) or IREE's default pipeline (no rules)."""
    if base == "auto":
        return auto()
    return StrategySet(name="iree_default", targets=[CpuTarget()], rules=[])


def variant(base: str, layouts: Sequence[HeadLayout]) -> StrategySet:
    """``base`` alone, or the fusion rules for ``layouts`` ahead of it."""
    start = base_set(base)
    if not layouts:
        return start
    data_tiling = any(getattr(t, "data_tiling", False) for t in start.targets)
    rules = head_transpose_fusion(layouts=layouts, data_tiling=data_tiling)
    return tdsl.combine(rules, start, name=f"{start.name}_heads")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", type=Path, default=BERT)
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--bases", default="auto,default")
    parser.add_argument("--layouts", default="none,hsd,hds,hsd+hds")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    program = load_program(args.model)
    (signature,) = signatures(program)
    threads = f"{args.threads} thread{'s' if args.threads > 1 else ''}"
    print(
        f"ISA: {detect_isa()}; {args.model}; {threads}; {args.repetitions} interleaved rounds of {args.min_time} s samples"
    )
    with tempfile.TemporaryDirectory(prefix="head-split-") as tmp:
        work = Path(tmp)
        inputs = []
        for i, array in enumerate(make_inputs(signature, 0)):
            inputs.append(work / f"input{i}.npy")
            np.save(inputs[-1], array)
        builds: dict[str, tuple[Path, str]] = {}
        for base in args.bases.split(","):
            for spelled in args.layouts.split(","):
                layouts = () if spelled == "none" else tuple(LAYOUT[layout] for layout in spelled.split("+"))
                key = f"{base}+{spelled}"
                out = work / f"{base}_{spelled.replace('+', '_')}.vmfb"
                report = tdsl.compile(program.mlir_path, variant(base, layouts), "cpu", out)
                counts = report.launch_counts
                load = f" + {counts.total_at_load} at load" if counts is not None and counts.total_at_load else ""
                builds[key] = (out, f"{report.launches}{load}")
        samples: dict[str, list[float]] = {key: [] for key in builds}
        rng = random.Random(0)
        for _ in range(args.repetitions):
            order = list(builds)
            rng.shuffle(order)
            for key in order:
                samples[key].append(
                    iree_sample(builds[key][0], signature.function, inputs, args.threads, args.min_time)
                )
    print(f"{'build':<22} {'launches/call':>20} {'median ms':>10} {'min ms':>8} {'ratio':>6}")
    for key, values in samples.items():
        base = key.split("+")[0] + "+none"
        reference = statistics.median(samples[base]) if base in samples else float("nan")
        median = statistics.median(values)
        print(f"{key:<22} {builds[key][1]:>20} {median * 1e3:10.3f} {min(values) * 1e3:8.3f} {reference / median:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
