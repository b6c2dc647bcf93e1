"""``tdsl tune --target gfx942``: candidates ranked by a cost model, compiled, and -- on a
machine with an AMD GPU (``--device hip://0``) -- measured.

1. **Pick the work.** The program's dispatches for gfx942 (the op listing); every
   contraction and convolution the chooser can express is a job, one per distinct codegen
   matcher, ordered by flops x launches.
2. **Rank.** The job's space (:func:`tdsl.strategies.gpu.space.gfx942_space`: the chooser's
   knobs around its own choice) is enumerated; every valid candidate (pruning counted) is
   ranked by the chooser's documented cost model (:func:`~tdsl.strategies.gpu.space.rank`:
   MFMA utilization, occupancy, LDS and global traffic).
3. **Compile.** The best ``min(budget, 6)`` are built for gfx942 in parallel (the whole
   program with that one rule); each kernel's resources are read from the code object
   (VGPRs, AGPRs, spills, LDS) and the candidates re-ranked with them
   (:func:`~tdsl.strategies.gpu.space.rerank_with_resources`: real occupancy, spills last).
   A candidate that fails to compile is dropped with its one-line error.
4. **Measure (only with ``--device``).** The top ``finalists`` and IREE's default are timed
   on the device in interleaved rounds; a candidate is emitted only where it beats IREE
   by more than the noise. **Without a device** the first of the re-ranked list is emitted,
   marked in its comment as ranked by the model and not measured.

The emitted set holds one rule per job, commented with the ranking's figures.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..compiler.hsaco import KernelResources
from ..compiler.ops import Dispatch, list_dispatches, python_source
from ..compiler.options import CompileOptions
from ..compiler.progress import NO_PROGRESS, Progress
from ..measure.machine import ISA_NAMES, Machine
from ..programs.load import load_program
from ..programs.parameters import check_runnable, externalize_weights
from ..programs.program import Program
from ..sets.space import Pruned, Space
from ..sets.strategy_set import Rule, StrategySet
from ..targets import AmdGpuTarget
from .cache_keys import CacheStats
from .candidates import tuned_set
from .database import Database
from .executor import Executor
from .measure import Variant, noise, speedup, wins
from .op_jobs import job_head, work
from .ready import Gfx942Problem, RankedCandidate, gfx942_spaces
from .session import IREE_DEFAULT, Stop, TuneOptions, TuneSession, tuning_session
from .target_tuner import Report, register_tuner

COMPILED = 6
"""The most candidates per job compiled to read their resources."""


@dataclass
class RankedJob:
    """One gfx942 job: the dispatch, the space's size and pruning, the ranking (as JSON),
    the compiled candidates, the measured variants (with a device) and the rule emitted."""

    name: str
    dispatch: Dispatch
    share: float
    skipped: str = ""
    merged: list[Dispatch] = field(default_factory=list)
    """The other dispatches the job's problem key selects."""
    space_size: int = 0
    valid: int = 0
    pruned: Pruned = field(default_factory=Pruned)
    ranking: list[dict[str, object]] = field(default_factory=list)
    compiled: list[Variant] = field(default_factory=list)
    measured: list[Variant] = field(default_factory=list)
    reference: Variant | None = None
    noise: float = 0.0
    rule: Rule | None = None
    why: str = ""

    @property
    def launches(self) -> int:
        """Launches per call of every dispatch the job covers."""
        return sum(d.launches for d in [self.dispatch, *self.merged])

    def to_json(self) -> dict[str, object]:
        return job_head(self.name, [self.dispatch, *self.merged], self.dispatch.root, self.share, self.skipped) | {
            "space_size": self.space_size,
            "valid": self.valid,
            "pruned": self.pruned.to_json(),
            "ranking": self.ranking,
            "compiled": [v.to_json() | {"resources": v.build_report.get("kernels", [])} for v in self.compiled],
            "measured": [v.to_json() for v in self.measured],
            "emitted": self.why if self.rule is not None else None,
        }


@dataclass
class Gfx942Result:
    """A gfx942 tuning: the emitted set and every job; ``measured`` when a device timed it."""

    payload: str
    options: TuneOptions
    machine: Machine
    tuned: StrategySet
    jobs: list[RankedJob]
    measured: bool
    interrupted: bool
    seconds: float
    cache_stats: CacheStats
    target: str = AmdGpuTarget.default_name

    @property
    def command(self) -> str:
        return "tdsl tune --target gfx942"

    def comments(self) -> list[str]:
        return [job.why for job in self.jobs if job.rule is not None]

    def report(self) -> dict[str, object]:
        return self.to_json()

    def plot(self, path: Path) -> bool:
        """Nothing to plot: without a device nothing was timed."""
        return False

    def notes(self) -> list[str]:
        how = (
            f"measured on {self.options.device} against IREE default"
            if self.measured
            else "ranked by tdsl's gfx942 cost model and compile-checked here; NOT measured on a GPU"
        )
        lines = [f"Tuned {self.payload} for gfx942: {how}."]
        if self.interrupted:
            lines.append("Interrupted: only what was ranked before the stop is here.")
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "payload": self.payload,
            "target": self.target,
            "measured": self.measured,
            "device": self.options.device or None,
            "seconds": round(self.seconds, 1),
            "interrupted": self.interrupted,
            "ops": [job.to_json() for job in self.jobs],
            "cache": self.cache_stats,
        }

    def table(self) -> str:
        isa = ISA_NAMES.get(str(self.machine.get("isa")), str(self.machine.get("isa")))
        lines = [
            f"tuned {self.payload} for gfx942 ({'measured on ' + self.options.device if self.measured else 'cost model, compile-checked, not measured'}) "
            f"on {self.machine.get('cpu')} ({isa}) in {self.seconds:.0f} s"
        ]
        lines.append(
            f"  {'op':<5} {'shapes':<44} {'x':>3} {'space':>6} {'valid':>6} {'est. us':>9} {'VGPR':>5} {'waves':>5}  emitted"
        )
        for job in self.jobs:
            root = job.dispatch.root
            shapes = (root.shapes() if root else job.dispatch.name)[:44]
            if job.skipped:
                lines.append(
                    f"  {job.name:<5} {shapes:<44} {job.launches:>3} {'-':>6} {'-':>6} {'-':>9} {'-':>5} {'-':>5}  {job.skipped}"
                )
                continue
            top = job.ranking[0] if job.ranking else {}
            kernel = top.get("resources")
            res = kernel if isinstance(kernel, dict) else {}
            lines.append(
                f"  {job.name:<5} {shapes:<44} {job.launches:>3} {job.space_size:>6} {job.valid:>6} "
                f"{top.get('time_us', 0):>9.2f} {res.get('vgprs', '-')!s:>5} {res.get('waves_per_simd', top.get('waves_per_simd', '-'))!s:>5}  "
                f"{'yes' if job.rule is not None else 'no: ' + job.why}"
            )
        return "\n".join(lines)


def _flops(d: Dispatch) -> float:
    return work(d, d.root)


class Gfx942Tuner:
    """The :class:`~tdsl.tune.target_tuner.TargetTuner` of AMD GPU targets (kind ``rocm``):
    the module docstring's ranking, ``budget`` candidates per op at most compiled."""

    kind = AmdGpuTarget.kind_name()
    searches_user_spaces = False

    def tune(
        self,
        program: Program,
        *,
        options: TuneOptions,
        executor: Executor,
        cache: Database,
        progress: Progress,
        report: Report,
        space: Space | None = None,
    ) -> Gfx942Result:
        """Tunes ``program`` for gfx942 as the module docstring says."""
        started = time.monotonic()
        built = externalize_weights(program)
        if options.device:
            check_runnable(built)  # the finalists run on the device
        target = AmdGpuTarget()
        session = TuneSession(built, options, executor, cache, progress, target=target)
        listing = list_dispatches(
            built.mlir_path,
            target,
            options=CompileOptions(
                extra_flags=options.extra_flags, timeout_s=options.timeout_s, memory_gb=options.memory_gb
            ),
        )
        ordered = _jobs(listing.dispatches, options.ops)
        ranker = _Ranker(session, target, report)
        interrupted = False
        progress.expect("tune", sum(1 for job, _ in ordered if not job.skipped))
        try:
            for job, problem in ordered:
                if not job.skipped and problem is not None:
                    ranker.run(job, problem)
        except (KeyboardInterrupt, Stop) as stop:
            interrupted = isinstance(stop, KeyboardInterrupt)
            report(
                "interrupted: emitting what was ranked"
                if interrupted
                else "time budget spent: emitting what was ranked"
            )
        return Gfx942Result(
            payload=str(built.source),
            options=options,
            machine=session.machine,
            tuned=tuned_set([target], ranker.rules),
            jobs=[job for job, _ in ordered],
            measured=bool(options.device),
            interrupted=interrupted,
            seconds=time.monotonic() - started,
            cache_stats=cache.stats(),
        )


def _jobs(dispatches: Sequence[Dispatch], ops: Sequence[str]) -> list[tuple[RankedJob, Gfx942Problem | None]]:
    """One job per distinct matcher of the dispatches ``ops`` selects (all where empty), by
    flops x launches, largest first, with its problem (None where it was skipped)."""
    ready = gfx942_spaces()
    total = sum(_flops(d) for d in dispatches) or 1.0
    jobs: dict[str, tuple[RankedJob, Gfx942Problem | None]] = {}
    for d in dispatches:
        text = f"{d.name} {d.root.shapes() if d.root else ''}"
        if ops and not any(o in text for o in ops):
            continue
        found = ready.problem(d)
        key = python_source(found.match) if not isinstance(found, str) else d.name
        if key in jobs:
            jobs[key][0].share += _flops(d) / total
            jobs[key][0].merged.append(d)
            continue
        job = RankedJob(name="", dispatch=d, share=_flops(d) / total, skipped=found if isinstance(found, str) else "")
        jobs[key] = (job, None if isinstance(found, str) else found)
    ordered = sorted(jobs.values(), key=lambda item: -item[0].share)
    for i, (job, _) in enumerate(ordered):
        job.name = f"op{i}"
    return ordered


class _Ranker:
    """Ranks, compiles and (with a device) measures one job at a time; collects the rules."""

    def __init__(self, session: TuneSession, target: AmdGpuTarget, report: Report) -> None:
        self.session, self.target, self.report = session, target, report
        self.rules: list[Rule] = []
        self.reference: Variant | None = None

    def run(self, job: RankedJob, problem: Gfx942Problem) -> None:
        """Ranks ``job``'s space, compiles the best and picks its rule (module docstring)."""
        options, progress = self.session.options, self.session.progress
        progress.begin("tune", job.name)
        try:
            space = problem.space(job.name)
        except Exception as err:  # noqa: BLE001 - a TdslError naming why the chooser has no space
            job.skipped = f"no space: {err}"
            progress.advance("tune")
            return
        ranked = problem.rank(space)
        job.space_size, job.valid, job.pruned = space.size, len(ranked), space.pruned
        top = list(ranked[: min(options.budget, COMPILED)])
        reranked = self._compiled(job, top, ranked)
        if not any(v.vmfb is not None for v in job.compiled):
            job.why = "no candidate compiled: " + next((v.build_error for v in job.compiled if v.build_error), "?")
            progress.advance("tune")
            return
        rule = self._measured(job, top, reranked) if options.device else self._ranked(job, reranked[0])
        if rule is None:
            progress.advance("tune")
            return
        job.rule = rule.model_copy(update={"optional": False})
        self.rules.append(job.rule)
        self.report(f"{job.name}: {job.why}")
        progress.advance("tune")
        self.session.check_time()

    def _compiled(
        self, job: RankedJob, top: list[RankedCandidate], ranked: Sequence[RankedCandidate]
    ) -> list[RankedCandidate]:
        """Builds ``top`` and re-ranks it with its kernels' resources (the failed dropped),
        the rest of ``ranked`` after it; sets the job's compiled variants and ranking."""
        budget = self.session.options.budget
        job.compiled = [
            Variant(
                f"{job.name}#{r.candidate.index}",
                tuned_set([self.target], r.candidate.strategies.rules),
                values=r.candidate.values,
                op=job.name,
            )
            for r in top
        ]
        self.session.build(job.compiled)
        resources: dict[int, KernelResources | Mapping[str, Any]] = {}
        for r, v in zip(top, job.compiled):
            dispatches = set(v.build_report.get("rule_dispatches", {}).get("0", []))
            kernels = [k for k in v.build_report.get("kernels", []) if k.get("name") in dispatches]
            if v.vmfb is not None and kernels:
                resources[r.candidate.index] = kernels[0]
        built = {r.candidate.index for r, v in zip(top, job.compiled) if v.vmfb is not None}
        reranked = [r for r in gfx942_spaces().rerank(top, resources) if r.candidate.index in built] + list(
            ranked[len(top) :]
        )
        job.ranking = [r.to_json() for r in reranked[: max(budget, COMPILED)]]
        return reranked

    def _measured(self, job: RankedJob, top: list[RankedCandidate], reranked: list[RankedCandidate]) -> Rule | None:
        """The rule of the finalist that beat IREE default on the device, else None (why in the job)."""
        options = self.session.options
        if self.reference is None:
            self.reference = Variant(IREE_DEFAULT, None)
            self.session.build([self.reference])
        reference = self.reference
        by_index = {r.candidate.index: v for r, v in zip(top, job.compiled)}
        finalists = [
            by_index[r.candidate.index] for r in reranked[: options.finalists] if r.candidate.index in by_index
        ]
        job.measured, job.reference = finalists, reference
        reference.samples, reference.by_round = [], []
        self.session.measure([reference, *finalists], reference, options.rounds, options.seed, f"{job.name}:gfx942")
        job.noise = noise(reference)
        winner = min((v for v in finalists if v.ok and v.median), key=lambda v: v.median or math.inf, default=None)
        if winner is None or not wins(winner, reference, job.noise):
            job.why = f"no candidate beat IREE default on {options.device} by more than {job.noise:.1%}"
            return None
        rule = next(r.candidate.strategies.rules[0] for r in reranked if by_index.get(r.candidate.index) is winner)
        job.why = (
            f"{job.name} ({job.dispatch.root.shapes() if job.dispatch.root else job.dispatch.name}, x{job.launches}): "
            f"{speedup(winner, reference) or 0:.2f}x over IREE default on {options.device} (noise {job.noise:.1%}); knobs {winner.values}"
        )
        return rule

    def _ranked(self, job: RankedJob, best: RankedCandidate) -> Rule:
        """The rule of the cost model's first, with why in the job (not measured)."""
        res = best.resources
        job.why = (
            f"{job.name} ({job.dispatch.root.shapes() if job.dispatch.root else job.dispatch.name}, x{job.launches}): "
            f"ranked 1 of {job.valid} valid ({job.space_size} in the space) by the cost model, est. {best.to_json()['time_us']:.2f} us, "
            f"MFMA utilization {best.estimate.utilization:.0%}"
            + (
                f"; compiled: {res.vgprs} VGPR, {res.agprs} AGPR, {res.spills} spills, {res.waves_per_simd} waves/SIMD"
                if res
                else ""
            )
            + f"; not measured on a GPU; knobs {best.candidate.values}"
        )
        return best.candidate.strategies.rules[0]


def tune_gfx942(
    payload: Path | str | Program,
    *,
    options: TuneOptions = TuneOptions(),
    executor: Executor | None = None,
    cache: Database | None = None,
    progress: Progress = NO_PROGRESS,
    report: Report = lambda line: None,
) -> Gfx942Result:
    """Tunes ``payload`` (an ``.onnx`` model or ``.mlir`` program) for gfx942 as the module
    docstring says, with a local executor and the default cache where none are given."""
    program = payload if isinstance(payload, Program) else load_program(payload)
    with tuning_session(executor, cache, progress) as (running, store):
        return Gfx942Tuner().tune(
            program, options=options, executor=running, cache=store, progress=progress, report=report
        )


register_tuner(Gfx942Tuner())
