"""Searching one space against a base: the :class:`SearchStrategy` protocol (proposes
candidates, is told how they did), the ready :class:`ScreenThenNeighbours`, and
:func:`search`, which builds and times what a strategy proposes and keeps the winner.

A search with ``budget`` candidates: the space's seeds and a seeded sample spread over it
(2/3 of the budget) are built and screened in one round; then the neighbours of the best
two (one knob one step away, the rest of the budget); then the finalists (the best few and
every seed that built) are timed in full rounds against the base, and the fastest wins if
it beats the base round by round by more than the noise (:func:`tdsl.tune.measure.wins`).
A candidate whose rules matched nothing is stood in for by the point its space names
(:meth:`tdsl.sets.space.Space.without_unmatched`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from ..sets.space import Candidate, Space, Values
from ..sets.strategy_set import Rule, StrategySet
from .measure import Variant, fastest, inconclusive, noise, speedup, wins
from .op_jobs import OpJob
from .session import TuneSession, unapplied

MakeSet = Callable[[Candidate], tuple[StrategySet, tuple[Rule, ...]]]
"""Turns a candidate into the set to build and the rules it adds to its base."""


@dataclass(frozen=True)
class Trial:
    """What a strategy is told of one candidate: its knob values and median time (None:
    it did not build or run)."""

    values: Values
    median: float | None


class SearchStrategy(Protocol):
    """Proposes the candidates of a space to try, a wave at a time, and is told how they did."""

    def propose(self, count: int) -> list[Candidate]:
        """Up to ``count`` candidates not proposed nor told of before (none: the search is done)."""
        ...

    def tell(self, trials: Sequence[Trial]) -> None:
        """How candidates did (those proposed, and any others tried, such as stand-ins)."""
        ...

    @property
    def seeded(self) -> int:
        """How many of the first proposals are the space's seeds (they reach the finals)."""
        ...


class ScreenThenNeighbours:
    """The ready strategy: first the space's seeds and a seeded sample spread over the
    space; after that, the neighbours of the two fastest candidates told of."""

    def __init__(self, space: Space, budget: int, seed: int) -> None:
        self.space, self.budget, self.seed = space, budget, seed
        self.seeded = 0
        """How many of the first wave are the space's seeds (they always reach the finals)."""
        self._tried: set[int] = set()
        self._timed: list[Trial] = []
        self._waves = 0

    def propose(self, count: int) -> list[Candidate]:
        self._waves += 1
        found = self._first(count) if self._waves == 1 else self._near(count)
        self._tried.update(c.index for c in found)
        return found

    def tell(self, trials: Sequence[Trial]) -> None:
        for trial in trials:
            index = self.space.index_of(trial.values)
            if index is not None:
                self._tried.add(index)
            if trial.median:
                self._timed.append(trial)

    def _first(self, count: int) -> list[Candidate]:
        """The seeds, then a sample spread over ``budget * 4`` seeded draws, ``count`` in all."""
        sampled = list(self.space.candidates(count=self.budget * 4, seed=self.seed))
        seeds = list(self.space.take(iter([(self.space.index_of(v), v) for v in self.space.seeds])))
        fresh = [c for c in sampled if c.index not in {s.index for s in seeds}]
        picked = seeds[:count]
        self.seeded = len(picked)
        rest = count - len(picked)
        if rest > 0:
            picked += fresh[:: max(1, len(fresh) // rest)][:rest]
        return picked

    def _near(self, count: int) -> list[Candidate]:
        """The untried neighbours of the two fastest trials, up to ``count``."""
        leaders = sorted(self._timed, key=lambda t: t.median or math.inf)[:2]
        near: list[tuple[int, Values]] = []
        for leader in leaders:
            for values in self.space.neighbors(leader.values):
                index = self.space.index_of(values)
                if index is not None and index not in self._tried and len(near) < count:
                    self._tried.add(index)
                    near.append((index, values))
        return list(self.space.take(iter(near)))


class _Wave:
    """The variants of one search: the base's copy first, then each candidate tried."""

    def __init__(self, session: TuneSession, job: OpJob, space: Space, base: Variant, make: MakeSet, tag: str) -> None:
        self.session, self.job, self.space, self.make, self.tag = session, job, space, make, tag
        self.reference = Variant(f"{base.label}", base.strategies, values=base.values, op=job.name)
        self.reference.vmfb, self.reference.key, self.reference.artifact = base.vmfb, base.key, base.artifact
        self.variants = [self.reference]

    def add(self, found: Sequence[Candidate]) -> list[Variant]:
        new = []
        for c in found:
            built, rules = self.make(c)
            new.append(
                Variant(
                    f"{self.job.name}{':' + self.tag if self.tag else ''}#{c.index}",
                    built,
                    values=c.values,
                    op=self.job.name,
                    rules=rules,
                )
            )
        self.variants.extend(new)
        return new

    def build(self, found: list[Variant]) -> list[Variant]:
        """Builds ``found``, then, for each whose rules matched nothing, the point the
        space says stands for it (:meth:`Space.without_unmatched`) where not tried yet."""
        self.session.build(found)
        known = {self.space.index_of(v.values) for v in self.variants[1:]}
        stand_ins: list[tuple[int, Values]] = []
        for v in found:
            lost = [r.strategy.name for r in unapplied(v)]
            point = self.space.without_unmatched(v.values, lost) if lost else None
            index = self.space.index_of(point) if point is not None else None
            if point is not None and index is not None and index not in known:
                known.add(index)
                stand_ins.append((index, point))
        again = self.add(list(self.space.take(iter(stand_ins))))
        if again:
            self.session.build(again)
        return [*found, *again]

    def show_best(self) -> None:
        """Shows the best screened candidate on the progress bar."""
        best = min(
            (v for v in self.variants[1:] if v.ok and v.median), key=lambda v: v.median or math.inf, default=None
        )
        gain = speedup(best, self.reference) if best is not None else None
        if gain:
            self.session.progress.begin(
                "tune",
                f"{self.job.name}: best so far {gain:.2f}x over {self.reference.label} ({best.label if best else ''})",
            )


def _told(variants: Sequence[Variant]) -> list[Trial]:
    return [Trial(v.values, v.median if v.ok else None) for v in variants]


def search(
    session: TuneSession,
    job: OpJob,
    space: Space,
    base: Variant,
    budget: int,
    make: MakeSet,
    tag: str = "",
    strategy: SearchStrategy | None = None,
) -> None:
    """Searches ``space`` against ``base`` with ``budget`` candidates (module docstring);
    ``make`` turns a candidate into the set to build, ``tag`` names the space in the labels;
    ``strategy`` proposes the candidates (default: :class:`ScreenThenNeighbours`).
    Adds to ``job``'s variants and pruning, sets its reference and noise, and makes the best
    finalist its winner if it wins and gains more than an earlier search's."""
    options = session.options
    proposer = strategy or ScreenThenNeighbours(space, budget, options.seed)
    # Each search times the base in stages of its own: samples are cached per stage, and
    # a second search of the job must not read (and re-judge with) the first one's.
    stage = f"{job.name}:{tag}" if tag else job.name
    wave = _Wave(session, job, space, base, make, tag)
    first = max(1, (2 * budget) // 3)
    picked = proposer.propose(first)
    wave.build(wave.add(picked))
    session.measure(wave.variants, wave.reference, 1, options.seed + 1, f"{stage}:screen")
    wave.show_best()
    proposer.tell(_told(wave.variants[1:]))
    second = wave.add(proposer.propose(budget - len(picked)))
    if second:
        second = wave.build(second)
        session.measure([wave.reference, *second], wave.reference, 1, options.seed + 4, f"{stage}:near")
        wave.show_best()
        proposer.tell(_told(second))
    job.spaces.append(space)
    job.pruned = job.pruned.add(space.pruned)
    _finals(session, job, wave, min(proposer.seeded, first), stage)


def _finals(session: TuneSession, job: OpJob, wave: _Wave, seeded: int, stage: str) -> None:
    """Times the finalists (the fastest few and the seeds that were timed) in full rounds
    and keeps the fastest as ``job``'s winner where it wins."""
    options, reference, variants = session.options, wave.reference, wave.variants
    timed = sorted((v for v in variants[1:] if v.ok and v.median), key=lambda v: v.median or math.inf)
    # The seeds (the ready library's points) always reach the finals: one screening
    # sample is one sample, and a noisy one must not drop the point most likely to win.
    seeds = [v for v in variants[1 : 1 + seeded] if v.ok and v.median and v not in timed[: options.finalists]]
    finalists = [reference, *timed[: options.finalists], *seeds]
    for v in finalists:
        v.samples, v.by_round, v.cached_samples = [], [], 0
    session.measure(finalists, reference, options.rounds, options.seed + 2, f"{stage}:final")
    job.variants.extend(variants[1:])
    margin = noise(reference)
    best = fastest(finalists[1:], reference)
    if best is not None and inconclusive(best, reference, margin):
        # Faster in the median but not in enough rounds (a noisy spell): as many rounds
        # again, judged on all of them, as in the model pass.
        session.measure(finalists, reference, options.rounds, options.seed + 6, f"{stage}:final:more")
        margin = noise(reference)
        best = fastest(finalists[1:], reference)
    gain = speedup(best, reference) if best is not None else None
    if best is not None and gain and wins(best, reference, margin) and (job.gain is None or gain > job.gain):
        job.winner, job.gain, job.reference, job.noise = best, gain, reference, margin
        job.fastest = (best, reference, gain)
    elif job.winner is None:
        job.reference, job.noise = reference, margin
        if best is not None and gain and (job.fastest is None or gain > job.fastest[2]):
            job.fastest = (best, reference, gain)
