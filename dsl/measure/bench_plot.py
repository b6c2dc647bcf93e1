"""The chart of a benchmark (``tdsl bench --plot``): every variant's speed-up over IREE's
default build, per function and thread count, on a log scale (needs matplotlib)."""

from __future__ import annotations

from pathlib import Path

from ..errors import BenchFailed
from ..files import staged
from .bench_report import DATA_TILING, DEFAULT, NUMPY, ONNXRUNTIME, OPENVINO, STRATEGY, BenchReport, variant_order
from .machine import ISA_NAMES


def plot_available() -> bool:
    """matplotlib is installed (``pip install 'tdsl[plot]'``)."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def plot_title(report: BenchReport) -> str:
    """The payload, the machine (CPU model), its ISA and the thread counts."""
    isa = ISA_NAMES.get(str(report.machine.get("isa", "")), str(report.machine.get("isa", "?")))
    threads = ",".join(str(t) for t in report.threads)
    payload = Path(report.payload)
    name = f"{payload.parent.name}/{payload.name}" if payload.parent.name else payload.name
    return (
        f"{name}: speed-up over IREE default (log scale, higher is faster)\n"
        f"{report.machine.get('cpu', '?')}, {isa}, threads {threads}"
    )


def plot(report: BenchReport, path: Path | str) -> Path:
    """Speed-up of every variant over IREE's default build, per function and thread count,
    on a log scale (bars grow up from 1 for faster, down for slower, so no bar dwarfs the
    rest), with the spread of the samples (the fastest and slowest sample) as error bars;
    numpy rows that are not comparable are left out. Written atomically as PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BenchFailed("--plot needs matplotlib: pip install 'tdsl[plot]'") from None
    groups = sorted({(r.function, r.threads) for r in report.rows})
    variants = sorted({r.variant for r in report.rows if r.comparable and r.variant != DEFAULT}, key=variant_order)
    fixed = {STRATEGY: "#1f77b4", DATA_TILING: "#ff7f0e", NUMPY: "#2ca02c", ONNXRUNTIME: "#d62728", OPENVINO: "#9467bd"}
    spare = iter(["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"] * len(variants))
    colors = {v: fixed.get(v) or next(spare) for v in variants}
    fig, ax = plt.subplots(figsize=(min(16.0, max(6.4, 1.1 * len(groups) * max(1, len(variants)))), 4.8))
    width = 0.8 / max(1, len(variants))
    values: list[float] = []
    for i, variant in enumerate(variants):
        xs, heights, lows, highs = [], [], [], []
        for g, (function, threads) in enumerate(groups):
            row, base = report.row(function, threads, variant), report.row(function, threads, DEFAULT)
            if row is None or base is None or not row.comparable:
                continue
            speed = base.median / row.median
            fastest, slowest = base.median / min(row.samples), base.median / max(row.samples)
            xs.append(g + (i - (len(variants) - 1) / 2) * width)
            heights.append(speed)
            lows.append(max(0.0, speed - slowest))
            highs.append(max(0.0, fastest - speed))
            values += [speed, fastest, slowest]
        if not xs:
            continue
        ax.bar(xs, [h - 1.0 for h in heights], width * 0.9, bottom=1.0, label=variant, color=colors[variant])
        ax.errorbar(xs, heights, yerr=[lows, highs], fmt="none", ecolor="black", capsize=3, linewidth=1)
        for x, h, low, high in zip(xs, heights, lows, highs):
            anchor = h + high if h >= 1 else h - low  # beyond the error bar
            ax.annotate(
                f"{h:.2f}x",
                (x, anchor),
                textcoords="offset points",
                xytext=(0, 3 if h >= 1 else -11),
                ha="center",
                fontsize=8,
            )
    ax.set_yscale("log")
    low, high = min(values + [1.0]), max(values + [1.0])
    ax.set_ylim(low / 1.4, high * 1.4)
    ax.axhline(1.0, color="gray", linewidth=1, linestyle="--", label=f"{DEFAULT} (1x)")
    ax.set_xticks(range(len(groups)), [f"@{f}\n{t} thread{'s' if t > 1 else ''}" for f, t in groups])
    ax.set_ylabel(f"median({DEFAULT}) / median(variant)")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs="auto"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(plot_title(report), fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="y", which="major", alpha=0.3)
    left_out = sorted({f"@{r.function} {r.variant}" for r in report.rows if not r.comparable})
    if left_out:
        fig.text(0.01, 0.01, "left out, not comparable: " + ", ".join(left_out), fontsize=7, color="gray")
    fig.tight_layout(rect=(0, 0.03 if left_out else 0, 1, 1))
    with staged(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    return Path(path)
