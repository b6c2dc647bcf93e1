"""Measuring variants side by side: interleaved rounds, medians, noise and the verdict.

A :class:`Variant` is one build of the program (a baseline or a candidate). ``rounds``
builds the sample jobs of repeated rounds: each round has every variant once, in a seeded
shuffled order, with the reference (the baseline every candidate is compared with) first
and last, so the baseline runs before and after the candidates of each round. The noise
is the reference's own spread (the interquartile range of its samples over their median,
at least :data:`MIN_NOISE`); a candidate wins only where its median is below the
reference's by more than that.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..spec.strategy_set import StrategySet

MIN_NOISE = 0.02
"""The smallest relative noise assumed (identical builds timed side by side differ by up to
about this much on a quiet machine)."""


@dataclass
class Variant:
    """One build of the program and what is known of it: its label, the set it compiles
    with (None: IREE's default), the knob values, its cache key, build outcome and samples."""

    label: str
    strategies: StrategySet | None
    key: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    op: str = ""
    vmfb: bytes | None = None
    build_error: str = ""
    build_seconds: float = 0.0
    build_report: dict[str, Any] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)
    sample_errors: list[str] = field(default_factory=list)
    cached_samples: int = 0
    rules: tuple[Any, ...] = ()
    """The op-level rules this variant puts before its base's (none for a program-level point)."""

    @property
    def ok(self) -> bool:
        return self.vmfb is not None and not self.sample_errors

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def spread(self) -> float:
        """(max - min) / median of the samples (0 without two samples)."""
        m = self.median
        return (max(self.samples) - min(self.samples)) / m if m and len(self.samples) > 1 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "op": self.op,
            "knobs": self.values,
            "key": self.key,
            "compile": "ok" if self.vmfb is not None else ("failed: " + self.build_error if self.build_error else "not built"),
            "compile_seconds": round(self.build_seconds, 3),
            "samples_s": self.samples,
            "median_s": self.median,
            "errors": self.sample_errors,
        }


def noise(reference: Variant) -> float:
    """The relative noise of ``reference``'s samples: interquartile range over median, at
    least :data:`MIN_NOISE`."""
    samples = sorted(reference.samples)
    if len(samples) < 4 or not reference.median:
        return max(MIN_NOISE, reference.spread() / 2)
    q = statistics.quantiles(samples, n=4)
    return max(MIN_NOISE, (q[2] - q[0]) / reference.median)


def round_order(variants: Sequence[Variant], reference: Variant, seed: int) -> list[Variant]:
    """One round: ``reference`` first and last, the others between in a seeded shuffle."""
    others = [v for v in variants if v is not reference]
    random.Random(seed).shuffle(others)
    return [reference, *others, reference]


def wins(candidate: Variant, reference: Variant, margin: float) -> bool:
    """``candidate``'s median is below ``reference``'s by more than ``margin`` (relative)."""
    c, r = candidate.median, reference.median
    return c is not None and r is not None and candidate.ok and c < r * (1 - margin)


def speedup(candidate: Variant, reference: Variant) -> float | None:
    """reference median / candidate median."""
    c, r = candidate.median, reference.median
    return r / c if c and r else None
