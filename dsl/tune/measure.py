"""Measuring variants side by side: interleaved rounds, medians, noise and the verdict.

A :class:`Variant` is one build of the program (a baseline or a candidate). ``rounds``
builds the sample jobs of repeated rounds: each round has every variant once, in a seeded
shuffled order, with the reference (the baseline every candidate is compared with) first
and last, so the baseline runs before and after the candidates of each round.

**Noise** is measured, not assumed: the reference's two runs of each round are identical
builds timed side by side, so the median of ``|first / last - 1|`` over the rounds is how
much two runs of one build differ here (at least :data:`MIN_NOISE`).

**Verdict** (:func:`wins`): the candidate and the reference are compared round by round
(the reference's mean in that round over the candidate's), which cancels the slow drifts
and bimodal runs (a transient buffer that page-faults in some runs) that a comparison of
medians across rounds mixes in. A candidate wins where the median of those ratios is
above 1 + noise and it was faster in at least 80 % of the rounds (all of them, up to 3).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Sequence, TypedDict

from ..sets.space import Values
from ..sets.strategy_set import Rule, StrategySet
from .cache_keys import ArtifactKey, BuildSummary

MIN_NOISE = 0.02
"""The smallest relative noise assumed (identical builds timed side by side differ by up to
about this much on a quiet machine)."""


class VariantJson(TypedDict):
    """A variant in a tuning's JSON (:meth:`Variant.to_json`)."""

    label: str
    op: str
    knobs: Values
    key: str
    compile: str
    compile_seconds: float
    samples_s: list[float]
    rounds_s: list[list[float]]
    median_s: float | None
    errors: list[str]


@dataclass
class Variant:
    """One build of the program and what is known of it: its label, the set it compiles
    with (None: IREE's default), the knob values, its cache key, build outcome and samples."""

    label: str
    strategies: StrategySet | None
    key: str = ""
    artifact: ArtifactKey | None = None
    """The cache key of its build (set by the tuner when it builds it); ``key`` is its digest."""
    values: Values = field(default_factory=dict)
    op: str = ""
    vmfb: bytes | None = None
    build_error: str = ""
    build_seconds: float = 0.0
    build_report: BuildSummary = field(default_factory=BuildSummary)
    samples: list[float] = field(default_factory=list)
    sample_errors: list[str] = field(default_factory=list)
    cached_samples: int = 0
    by_round: list[list[float]] = field(default_factory=list)
    """The samples of each round (two for the reference: its runs first and last)."""
    rules: tuple[Rule, ...] = ()
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

    def to_json(self) -> VariantJson:
        return {
            "label": self.label,
            "op": self.op,
            "knobs": self.values,
            "key": self.key,
            "compile": "ok"
            if self.vmfb is not None
            else ("failed: " + self.build_error if self.build_error else "not built"),
            "compile_seconds": round(self.build_seconds, 3),
            "samples_s": self.samples,
            "rounds_s": self.by_round,
            "median_s": self.median,
            "errors": self.sample_errors,
        }


def noise(reference: Variant) -> float:
    """How much two runs of ``reference`` differ here: the median over the rounds of
    ``|first / last - 1|`` of its two runs per round, at least :data:`MIN_NOISE` (without
    such pairs: the interquartile range of its samples over their median)."""
    pairs = [abs(r[0] / r[-1] - 1) for r in reference.by_round if len(r) >= 2 and r[-1] > 0]
    if pairs:
        return max(MIN_NOISE, statistics.median(pairs))
    samples = sorted(reference.samples)
    if len(samples) < 4 or not reference.median:
        return max(MIN_NOISE, reference.spread() / 2)
    q = statistics.quantiles(samples, n=4)
    return max(MIN_NOISE, (q[2] - q[0]) / reference.median)


def paired_ratios(candidate: Variant, reference: Variant) -> list[float]:
    """Per round where both have samples: the reference's mean time over the candidate's."""
    return [
        statistics.fmean(r) / statistics.fmean(c)
        for c, r in zip(candidate.by_round, reference.by_round)
        if c and r and min(c) > 0
    ]


def round_order(variants: Sequence[Variant], reference: Variant, seed: int) -> list[Variant]:
    """One round: ``reference`` first and last, the others between in a seeded shuffle."""
    others = [v for v in variants if v is not reference]
    random.Random(seed).shuffle(others)
    return [reference, *others, reference]


def wins(candidate: Variant, reference: Variant, margin: float) -> bool:
    """``candidate`` beats ``reference`` by more than ``margin`` (see the module docstring:
    round by round; medians where the rounds are not known)."""
    if not candidate.ok or candidate.median is None or reference.median is None:
        return False
    ratios = paired_ratios(candidate, reference)
    if not ratios:
        return candidate.median < reference.median * (1 - margin)
    need = len(ratios) if len(ratios) <= 3 else math.ceil(0.8 * len(ratios))
    return statistics.median(ratios) > 1 + margin and sum(1 for r in ratios if r > 1) >= need


def inconclusive(candidate: Variant, reference: Variant, margin: float) -> bool:
    """``candidate`` does not win against ``reference`` (:func:`wins`) only because too few
    rounds agree: its median per-round ratio is above ``1 + margin``. More rounds decide."""
    ratios = paired_ratios(candidate, reference) if candidate.ok else []
    return bool(ratios) and statistics.median(ratios) > 1 + margin and not wins(candidate, reference, margin)


def speedup(candidate: Variant, reference: Variant) -> float | None:
    """How much faster ``candidate`` is than ``reference``: the median of the per-round
    ratios (:func:`paired_ratios`) where both were timed in the same rounds, else reference
    median / candidate median. Rounds drift together, so the ratio inside each round is
    what holds still; medians taken over rounds mix the drift in."""
    if candidate.ok and candidate.by_round and len(candidate.by_round) == len(reference.by_round):
        ratios = paired_ratios(candidate, reference)
        if ratios:
            return statistics.median(ratios)
    c, r = candidate.median, reference.median
    return r / c if c and r else None


def fastest(variants: Sequence[Variant], reference: Variant) -> Variant | None:
    """The variant of ``variants`` (timed in the same rounds as ``reference``) with the
    largest :func:`speedup` over it; None if none was timed."""
    timed = [v for v in variants if v.ok and v.median]
    return max(timed, key=lambda v: 1.0 if v is reference else (speedup(v, reference) or 0.0), default=None)
