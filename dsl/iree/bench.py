"""Benchmarking a strategy side by side with IREE's paths and numpy, in one run.

``bench(payload, strategies)`` compiles the payload for llvm-cpu three ways -- with the
strategies, with IREE's default pipeline and with ``--iree-opt-data-tiling`` (IREE 3.13's
best CPU path; off by default) -- and, where a function is a plain matmul / batch matmul
/ convolution, also times numpy (OpenBLAS, in a fresh process with
``OPENBLAS_CORETYPE`` unset: this environment may export ``Haswell``, which caps
OpenBLAS at AVX2). Each sample is one process: ``iree-benchmark-module`` (the real
binary, ``--benchmark_min_time``, warm-up) or the numpy timer. Repetitions are
interleaved in a shuffled order per round, so every variant sees the same machine
noise; the report gives medians, ratios against the strategy and GFLOP/s where the
flop count is known. Weights are runtime inputs when every operand is a function argument
(packed on every call), compile-time constants when the payload loads them from a
``util.global`` (IREE can then pack them once, at compile time); the report says which.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import bindings as mlir
from ..spec.loader import as_strategy_set
from .compile import compile
from .numerics import compile_default, payload_signatures
from .iree_compile import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S
from ..errors import BenchFailed
from ..files import staged
from .execute import make_inputs, numpy_reference
from ..spec.strategy_set import StrategySet
from ..targets import CpuTarget

STRATEGY = "strategy"
DEFAULT = "iree-default"
DATA_TILING = "iree-data-tiling"
NUMPY = "numpy"

_NUMPY_TIMER = r"""
import json, sys, time
import numpy as np
args = json.loads(sys.argv[1])
arrays = [np.load(p) for p in args["inputs"]]
kind = args["kind"]
def call():
    if kind == "matmul":
        return arrays[0] @ arrays[1]
    x, w = arrays  # conv: im2col + GEMM, both timed
    if args["layout"] == "nchw":
        x, w = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    kh, kw, c, f = w.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))
    cols = np.ascontiguousarray(windows.transpose(0, 1, 2, 4, 5, 3)).reshape(-1, kh * kw * c)
    return cols @ w.reshape(kh * kw * c, f)
end = time.perf_counter() + args["warmup"]
while time.perf_counter() < end:
    call()
calls, start = 0, time.perf_counter()
while True:
    call(); calls += 1
    elapsed = time.perf_counter() - start
    if elapsed >= args["min_time"]:
        break
print(json.dumps({"seconds_per_call": elapsed / calls}))
"""


@dataclass(frozen=True)
class Row:
    """One (function, thread count, variant) cell: its samples in seconds per call."""

    function: str
    threads: int
    variant: str
    samples: tuple[float, ...]
    flops: float | None

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def gflops(self) -> float | None:
        return None if self.flops is None else self.flops / self.median / 1e9


@dataclass
class BenchReport:
    """Medians, ratios and samples of one benchmark run."""

    payload: str
    rows: list[Row]
    notes: list[str] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=dict)

    def row(self, function: str, threads: int, variant: str) -> Row | None:
        for r in self.rows:
            if (r.function, r.threads, r.variant) == (function, threads, variant):
                return r
        return None

    def speedup(self, function: str, threads: int, baseline: str) -> float | None:
        """``median(baseline) / median(strategy)``: above 1 the strategy is faster."""
        base, ours = self.row(function, threads, baseline), self.row(function, threads, STRATEGY)
        if base is None or ours is None:
            return None
        return base.median / ours.median

    def to_json(self) -> dict[str, Any]:
        return {
            "payload": self.payload,
            "machine": self.machine,
            "notes": self.notes,
            "rows": [
                {
                    "function": r.function,
                    "threads": r.threads,
                    "variant": r.variant,
                    "median_ms": r.median * 1e3,
                    "gflops": r.gflops,
                    "speedup_of_strategy": self.speedup(r.function, r.threads, r.variant),
                    "samples_ms": [s * 1e3 for s in r.samples],
                }
                for r in self.rows
            ],
        }

    def table(self) -> str:
        header = f"{'function':<16} {'thr':>3} {'variant':<17} {'median ms':>10} {'GFLOP/s':>8} {'strategy x':>10}"
        lines = [header, "-" * len(header)]
        for r in self.rows:
            speed = self.speedup(r.function, r.threads, r.variant)
            gflops = f"{r.gflops:8.1f}" if r.gflops is not None else f"{'-':>8}"
            ratio = f"{speed:10.2f}" if speed is not None and r.variant != STRATEGY else f"{'':>10}"
            lines.append(f"{r.function:<16} {r.threads:>3} {r.variant:<17} {r.median * 1e3:10.3f} {gflops} {ratio}")
        lines.append("strategy x = median(variant) / median(strategy): above 1 the strategy is faster.")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


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


def _iree_sample(vmfb: Path, function: str, inputs: Sequence[Path], threads: int, min_time_s: float) -> float:
    command = [
        benchmark_tool(),
        f"--module={vmfb}",
        f"--function={function}",
        *(f"--input=@{p}" for p in inputs),
        *_device_flags(threads),
        "--benchmark_repetitions=1",
        f"--benchmark_min_time={min_time_s}s",
        "--benchmark_min_warmup_time=0.05",
        "--benchmark_format=json",
    ]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise BenchFailed(f"iree-benchmark-module ran past 600 s on {vmfb.name} ({function}) and was killed") from None
    if proc.returncode != 0:
        raise BenchFailed(f"iree-benchmark-module failed on {vmfb.name}: {proc.stderr.strip()[-400:]}")
    runs = [b for b in json.loads(proc.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[runs[0].get("time_unit", "ns")]
    return float(runs[0]["real_time"]) * unit


def _numpy_sample(kind: str, layout: str, inputs: Sequence[Path], threads: int, min_time_s: float) -> float:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    args = {"inputs": [str(p) for p in inputs], "kind": kind, "layout": layout, "min_time": min_time_s, "warmup": 0.05}
    try:
        proc = subprocess.run([sys.executable, "-c", _NUMPY_TIMER, json.dumps(args)], capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        raise BenchFailed(f"the numpy timer ran past 600 s ({kind}) and was killed") from None
    if proc.returncode != 0:
        raise BenchFailed(f"numpy timer failed: {proc.stderr.strip()[-400:]}")
    return float(json.loads(proc.stdout)["seconds_per_call"])


def _numpy_kind(text: str, function: str, inputs: Sequence[np.ndarray]) -> tuple[str, str, float] | None:
    """(kind, layout, flops) when numpy can compute ``function``; else None."""
    if numpy_reference(text, function, inputs) is None:
        return None
    ops = {op.name for op in mlir.walk(text) if op.function == function}
    a, b = inputs
    if "linalg.conv_2d_nhwc_hwcf" in ops or "linalg.conv_2d_nchw_fchw" in ops:
        nchw = "linalg.conv_2d_nchw_fchw" in ops
        out = numpy_reference(text, function, inputs)
        assert out is not None
        f, c, kh, kw = (b.shape if nchw else (b.shape[3], b.shape[2], b.shape[0], b.shape[1]))
        return "conv", "nchw" if nchw else "nhwc", 2.0 * out[0].size * c * kh * kw
    batch = a.shape[0] if a.ndim == 3 else 1
    m, k = a.shape[-2:]
    return "matmul", "", 2.0 * batch * m * k * b.shape[-1]


def _machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model or platform.processor(),
        "cores": os.cpu_count(),
        "OPENBLAS_CORETYPE (environment)": os.environ.get("OPENBLAS_CORETYPE"),
        "numpy OPENBLAS_CORETYPE": "unset (autodetected)",
    }


class _Progress:
    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.tty = sys.stderr.isatty()

    def step(self, what: str) -> None:
        self.done += 1
        if self.tty:
            width = 30
            filled = width * self.done // self.total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {what:<40.40}")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def bench(
    payload: Path | str,
    strategies: StrategySet | str | Path,
    target: str = "cpu",
    *,
    threads: Sequence[int] = (1,),
    repetitions: int = 5,
    min_time_s: float = 0.1,
    seed: int = 0,
    numpy_baseline: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_gb: float = DEFAULT_MEMORY_GB,
) -> BenchReport:
    """Times every public function of ``payload`` under each variant; see the module docstring."""
    payload = Path(payload)
    strategy_set = as_strategy_set(strategies)
    target_model = strategy_set.target(target)
    if not isinstance(target_model, CpuTarget):
        raise BenchFailed(f"tdsl bench measures on this CPU; target {target!r} is {target_model.backend}")
    if repetitions < 1 or any(t < 1 for t in threads):
        raise BenchFailed("repetitions and thread counts must be at least 1")
    text, functions = payload_signatures(payload)
    report = BenchReport(str(payload), [], machine=_machine())
    if "util.global.load" in text:
        report.notes.append("weights are compile-time constants (util.global): packs of them can run at compile time")
    else:
        report.notes.append("weights are runtime inputs: every operand is a function argument, packed per call")
    with tempfile.TemporaryDirectory(prefix="tdsl-bench-") as tmp:
        work = Path(tmp)
        modules = {STRATEGY: work / "strategy.vmfb", DEFAULT: work / "default.vmfb", DATA_TILING: work / "dt.vmfb"}
        compile(payload, strategy_set, target, modules[STRATEGY], timeout_s=timeout_s, memory_gb=memory_gb)
        # IREE's own paths keep IREE's default ukernels (data tiling uses the mmt4d ukernel);
        # only the strategy build carries the target's ukernel override.
        flags = target_model.baseline().compile_flags()
        compile_default(payload, flags, modules[DEFAULT], timeout_s, memory_gb)
        compile_default(payload, [*flags, "--iree-opt-data-tiling"], modules[DATA_TILING], timeout_s, memory_gb)
        plan: list[tuple[str, int, str, Any]] = []
        flop_of: dict[str, float | None] = {}
        for sig in functions:
            arrays = make_inputs(sig, seed)
            paths = []
            for i, array in enumerate(arrays):
                path = work / f"{sig.name}_{i}.npy"
                np.save(path, array)
                paths.append(path)
            kind = _numpy_kind(text, sig.name, arrays) if numpy_baseline else None
            flop_of[sig.name] = kind[2] if kind else None
            for t in threads:
                for variant, module in modules.items():
                    plan.append((sig.name, t, variant, (module, paths)))
                if kind is not None:
                    plan.append((sig.name, t, NUMPY, (kind, paths)))
        samples: dict[tuple[str, int, str], list[float]] = {(f, t, v): [] for f, t, v, _ in plan}
        rng = random.Random(seed)
        progress = _Progress(len(plan) * repetitions)
        for _ in range(repetitions):
            order = list(plan)
            rng.shuffle(order)
            for function, t, variant, how in order:
                if variant == NUMPY:
                    (kind_name, layout, _), paths = how
                    seconds = _numpy_sample(kind_name, layout, paths, t, min_time_s)
                else:
                    module, paths = how
                    seconds = _iree_sample(module, function, paths, t, min_time_s)
                samples[(function, t, variant)].append(seconds)
                progress.step(f"{function} {variant} {t}T")
    order_of = {STRATEGY: 0, DEFAULT: 1, DATA_TILING: 2, NUMPY: 3}
    for (function, t, variant), values in sorted(samples.items(), key=lambda kv: (kv[0][0], kv[0][1], order_of[kv[0][2]])):
        report.rows.append(Row(function, t, variant, tuple(values), flop_of.get(function)))
    if any(f is None for f in flop_of.values()):
        report.notes.append("no numpy baseline or GFLOP/s for functions that are not a plain matmul, batch matmul or convolution")
    report.notes.append("numpy runs in a fresh process per sample with OPENBLAS_CORETYPE unset (AVX-512 kernels where available)")
    return report


def plot(report: BenchReport, path: Path | str) -> Path:
    """A bar chart of medians per function and variant, written atomically as PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BenchFailed("--plot needs matplotlib: pip install matplotlib") from None
    groups = sorted({(r.function, r.threads) for r in report.rows})
    variants = [v for v in (STRATEGY, DEFAULT, DATA_TILING, NUMPY) if any(r.variant == v for r in report.rows)]
    fig, ax = plt.subplots(figsize=(max(6, 2 * len(groups)), 4))
    width = 0.8 / len(variants)
    for i, variant in enumerate(variants):
        rows = [report.row(f, t, variant) for f, t in groups]
        values = [r.median * 1e3 if r is not None else 0.0 for r in rows]
        ax.bar([g + i * width for g in range(len(groups))], values, width, label=variant)
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))], [f"{f} {t}T" for f, t in groups])
    ax.set_ylabel("median ms per call (lower is better)")
    ax.legend()
    fig.tight_layout()
    with staged(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
    return Path(path)

