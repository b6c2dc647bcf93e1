"""Measures the example models: dispatches and launches per call, and the latency of IREE's
default llvm-cpu pipeline, ``--iree-opt-data-tiling`` and onnxruntime, each on one thread.

Needs ``tdsl[onnx]`` (no torch). Run from the repository root (it is slow: minutes):

    .venv/bin/python examples/models/measure.py                 # all models, 7 rounds
    .venv/bin/python examples/models/measure.py bert --rounds 3 --json out.json

Counts: the compile report of the build that is timed (:func:`tdsl.compile` with IREE's
default pipeline; executables = the dispatch functions IREE configured, launches = the
``stream.cmd.dispatch`` ops per call in IREE's stream statistics of the same run, the count
``tdsl compile`` and ``tdsl ops`` print).
Latency: each sample is one process -- ``iree-benchmark-module`` (the runtime wheel's
binary, ``--device=local-sync``: one thread, ``--benchmark_min_time``, warm-up) or an
onnxruntime timer (one intra-op and one inter-op thread, same minimum time and warm-up).
The variants run in a shuffled order in every round, so they see the same machine noise;
the table gives medians over rounds. Weights are compile-time constants (as deployed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import tdsl
from tdsl.measure.peers import ONNXRUNTIME, peer_round
from tdsl.measure.timing import benchmark_tool
from tdsl.programs.inputs import make_inputs
from tdsl.programs.load import load_program
from tdsl.programs.signatures import signatures
from tdsl.targets.host import detect_isa

HERE = Path(__file__).resolve().parent
MODELS = ["bert", "gpt2_block", "resnet"]


def iree_sample(vmfb: Path, function: str, inputs: list[Path], min_time_s: float) -> float:
    command = [
        benchmark_tool(),
        f"--module={vmfb}",
        f"--function={function}",
        *(f"--input=@{p}" for p in inputs),
        "--device=local-sync",
        "--benchmark_repetitions=1",
        f"--benchmark_min_time={min_time_s}s",
        "--benchmark_min_warmup_time=0.1",
        "--benchmark_format=json",
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    runs = [b for b in json.loads(proc.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[runs[0].get("time_unit", "ns")]
    return float(runs[0]["real_time"]) * unit


def ort_sample(model: Path, inputs: list[Path], min_time_s: float) -> float:
    """onnxruntime, one thread: the timer ``tdsl bench`` uses."""
    return peer_round([ONNXRUNTIME], model, inputs, 1, min_time_s)[ONNXRUNTIME]


def measure(name: str, work: Path, rounds: int, min_time_s: float) -> dict[str, Any]:
    program = load_program(HERE / name / "model.onnx", weights_seed=0)
    assert program.onnx_path is not None
    [sig] = signatures(program)
    variants = {"iree-default": [], "iree-data-tiling": ["--iree-opt-data-tiling"]}
    counts: dict[str, dict[str, int | None]] = {}
    modules: dict[str, Path] = {}
    for variant, extra in variants.items():
        modules[variant] = work / f"{name}.{variant}.vmfb"
        report = tdsl.compile(program.mlir_path, None, "cpu", modules[variant], extra_flags=extra)
        counts[variant] = {
            "executables": len(report.dispatches),
            "launches": report.launches,
            "launches_at_load": report.launches_at_load,
        }
    inputs = make_inputs(sig, seed=1)
    paths = []
    for arg, array in zip(sig.inputs, inputs):
        paths.append(work / f"{name}.{arg.name}.npy")
        np.save(paths[-1], array)
    samples: dict[str, list[float]] = {v: [] for v in [*variants, "onnxruntime"]}
    order = list(samples)
    for _ in range(rounds):
        random.shuffle(order)
        for variant in order:
            if variant == "onnxruntime":
                samples[variant].append(ort_sample(program.onnx_path, paths, min_time_s))
            else:
                samples[variant].append(iree_sample(modules[variant], sig.function, paths, min_time_s))
    return {
        "model": name,
        "counts": counts,
        "median_ms": {v: statistics.median(s) * 1e3 for v, s in samples.items()},
        "samples_ms": {v: [x * 1e3 for x in s] for v, s in samples.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=MODELS)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per sample")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    isa = detect_isa()
    model_name = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    print(f"machine: {model_name}, ISA {isa}; one thread; medians of {args.rounds} interleaved rounds")
    header = f"{'model':<11} {'exec':>4} {'launch':>6} {'exec(dt)':>8} {'launch(dt)':>10} {'default ms':>10} {'data-tiling ms':>14} {'onnxruntime ms':>14}"
    print(header)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            r = measure(name, Path(tmp), args.rounds, args.min_time)
            results.append(r)
            c, m = r["counts"], r["median_ms"]
            print(
                f"{name:<11} {c['iree-default']['executables']:>4} {c['iree-default']['launches']:>6} "
                f"{c['iree-data-tiling']['executables']:>8} {c['iree-data-tiling']['launches']:>10} "
                f"{m['iree-default']:>10.3f} {m['iree-data-tiling']:>14.3f} {m['onnxruntime']:>14.3f}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps({"machine": {"cpu": model_name, "isa": isa}, "results": results}, indent=2))


if __name__ == "__main__":
    main()
