"""What ``tdsl bench`` reports: one row of samples per (function, thread count, variant),
medians, GFLOP/s, the strategy's speed-up over every other variant (paired by repetition)
and over the faster peer runtime, as a table and as JSON."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Mapping, Sequence, TypedDict

from .peers import ONNXRUNTIME, OPENVINO, PEERS

STRATEGY = "strategy"
DEFAULT = "iree-default"
DATA_TILING = "iree-data-tiling"
NUMPY = "numpy"
BUILT_IN_VARIANTS = (STRATEGY, DEFAULT, DATA_TILING, NUMPY, ONNXRUNTIME, OPENVINO)
"""The variants ``bench`` names itself; a compared strategy set (``also``) takes another name."""

__all__ = [
    "BUILT_IN_VARIANTS",
    "DATA_TILING",
    "DEFAULT",
    "NUMPY",
    "ONNXRUNTIME",
    "OPENVINO",
    "STRATEGY",
    "BenchJson",
    "BenchReport",
    "BenchRowJson",
    "Row",
    "paired_speedup",
    "variant_order",
]


def paired_speedup(baseline: Sequence[float], ours: Sequence[float]) -> float:
    """The median over rounds of ``baseline / ours``, each round's two samples taken side by
    side (``median(baseline) / median(ours)`` where the sample counts differ): above 1 ours
    is faster. Both must hold samples."""
    if len(baseline) != len(ours):
        return statistics.median(baseline) / statistics.median(ours)
    return statistics.median(b / o for b, o in zip(baseline, ours))


def variant_order(variant: str) -> tuple[int, str]:
    """Where a variant's row goes: the strategy, compared sets (by name), IREE's builds,
    numpy, the peers."""
    fixed = {STRATEGY: 0, DEFAULT: 2, DATA_TILING: 3, NUMPY: 4, ONNXRUNTIME: 5, OPENVINO: 6}
    return (fixed.get(variant, 1), variant)


@dataclass(frozen=True)
class Row:
    """One (function, thread count, variant) cell: its samples in seconds per call."""

    function: str
    threads: int
    variant: str
    samples: tuple[float, ...]
    flops: float | None
    not_comparable: str = ""
    """Why this row is no fair baseline (a numpy row on f16 data, ...); empty if it is."""

    @property
    def comparable(self) -> bool:
        return not self.not_comparable

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def gflops(self) -> float | None:
        return None if self.flops is None else self.flops / self.median / 1e9


class BenchRowJson(TypedDict):
    """One row of ``tdsl bench --json``."""

    function: str
    threads: int
    variant: str
    median_ms: float
    gflops: float | None
    flops: float | None
    comparable: bool
    not_comparable: str | None
    speedup_of_strategy: float | None
    samples_ms: list[float]


class PeerVerdictJson(TypedDict):
    """The strategy against the faster peer runtime, per function and thread count."""

    function: str
    threads: int
    faster_peer: str
    peer_median_ms: float
    speedup_of_strategy: float | None


class BenchJson(TypedDict):
    """``tdsl bench --json`` after the header: the payload, the machine, notes, rows and the
    strategy's verdict against the faster peer."""

    payload: str
    machine: Mapping[str, object]
    notes: list[str]
    rows: list[BenchRowJson]
    peers: list[PeerVerdictJson]


@dataclass
class BenchReport:
    """Medians, ratios and samples of one benchmark run."""

    payload: str
    rows: list[Row]
    notes: list[str] = field(default_factory=list)
    machine: Mapping[str, object] = field(default_factory=dict)

    def row(self, function: str, threads: int, variant: str) -> Row | None:
        for r in self.rows:
            if (r.function, r.threads, r.variant) == (function, threads, variant):
                return r
        return None

    def speedup(self, function: str, threads: int, baseline: str) -> float | None:
        """The median over repetitions of ``baseline / strategy``, each repetition's two samples
        taken in one round (``median(baseline) / median(strategy)`` where the rows have
        different sample counts): above 1 the strategy is faster. None when a row is missing
        or the baseline is not comparable."""
        base, ours = self.row(function, threads, baseline), self.row(function, threads, STRATEGY)
        if base is None or ours is None or not base.comparable:
            return None
        return paired_speedup(base.samples, ours.samples)

    def faster_peer(self, function: str, threads: int) -> Row | None:
        """The peer runtime's row with the lowest median for ``function`` at ``threads``."""
        rows = [r for r in self.rows if (r.function, r.threads) == (function, threads) and r.variant in PEERS]
        return min(rows, key=lambda r: r.median) if rows else None

    def peer_verdicts(self) -> list[PeerVerdictJson]:
        """Per function and thread count with a peer row: the faster peer and the strategy's
        speed-up over it (above 1 the strategy is faster)."""
        verdicts: list[PeerVerdictJson] = []
        for function, threads in dict.fromkeys((r.function, r.threads) for r in self.rows):
            peer = self.faster_peer(function, threads)
            if peer is not None:
                verdicts.append(
                    {
                        "function": function,
                        "threads": threads,
                        "faster_peer": peer.variant,
                        "peer_median_ms": peer.median * 1e3,
                        "speedup_of_strategy": self.speedup(function, threads, peer.variant),
                    }
                )
        return verdicts

    @property
    def threads(self) -> list[int]:
        return sorted({r.threads for r in self.rows})

    def to_json(self) -> BenchJson:
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
                    "flops": r.flops,
                    "comparable": r.comparable,
                    "not_comparable": r.not_comparable or None,
                    "speedup_of_strategy": self.speedup(r.function, r.threads, r.variant),
                    "samples_ms": [s * 1e3 for s in r.samples],
                }
                for r in self.rows
            ],
            "peers": self.peer_verdicts(),
        }

    def table(self) -> str:
        width = max([16] + [len(r.function) for r in self.rows])
        vwidth = max([17] + [len(r.variant) for r in self.rows])
        header = f"{'function':<{width}} {'thr':>3} {'variant':<{vwidth}} {'median ms':>10} {'GFLOP/s':>8} {'strategy x':>14}"
        lines = [header, "-" * len(header)]
        for r in self.rows:
            speed = self.speedup(r.function, r.threads, r.variant)
            gflops = f"{r.gflops:8.1f}" if r.gflops is not None else f"{'-':>8}"
            if not r.comparable:
                ratio = f"{'not comparable':>14}"
            elif speed is not None and r.variant != STRATEGY:
                ratio = f"{speed:14.2f}"
            else:
                ratio = f"{'':>14}"
            lines.append(
                f"{r.function:<{width}} {r.threads:>3} {r.variant:<{vwidth}} {r.median * 1e3:10.3f} {gflops} {ratio}"
            )
        lines.append(
            "strategy x = median over repetitions of variant / strategy, timed in the same repetition: above 1 the strategy is faster."
        )
        for v in self.peer_verdicts():
            speed = v["speedup_of_strategy"]
            lines.append(
                f"strategy vs the faster peer, {v['function']} at {v['threads']} thread(s): "
                + (f"{speed:.2f}x" if speed is not None else "-")
                + f" ({v['faster_peer']}, {v['peer_median_ms']:.3f} ms)"
            )
        for r in self.rows:
            if not r.comparable:
                lines.append(f"not comparable: {r.function} {r.variant} ({r.threads}T): {r.not_comparable}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
