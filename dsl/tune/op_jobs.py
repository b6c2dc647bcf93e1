"""The op-level jobs of a CPU tuning: one per distinct graph-level matcher of a contraction
or convolution with a ready space, by its share of the program; which of them IREE rebuilds
before codegen, and where a base's conv path rewrites them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence, TypedDict

from ..compiler.ops import Dispatch, OpView, ProgramOps, python_source
from ..sets.space import Pruned, Space
from .measure import MIN_NOISE, Variant
from .ready import cpu_spaces


class JobHeadJson(TypedDict):
    """The fields every tuning job's JSON starts with (:func:`job_head`)."""

    op: str
    dispatch: str | None
    dispatches: list[str]
    shapes: str | None
    launches: int | None
    share: float
    skipped: str


def job_head(name: str, dispatches: Sequence[Dispatch], view: OpView | None, share: float, skipped: str) -> JobHeadJson:
    """The fields every tuning job's JSON starts with: op, dispatch (the first of
    ``dispatches``, the executables the job's matcher selects), every dispatch, shapes (of
    ``view``), launches per call (all of them), share of the work and why it was skipped
    ("" when it was not)."""
    return {
        "op": name,
        "dispatch": dispatches[0].name if dispatches else None,
        "dispatches": [d.name for d in dispatches],
        "shapes": view.shapes() if view else None,
        "launches": sum(d.launches for d in dispatches) if dispatches else None,
        "share": share,
        "skipped": skipped,
    }


@dataclass
class OpJob:
    """One op-level tuning job: the dispatch, its space, the variants tried, the winner."""

    name: str
    dispatch: Dispatch | None
    """The dispatch of an op-level job; None for a user's whole space (``tune(space=...)``)."""
    share: float
    space: Space | None = None
    """The space searched first (the pinned tiles of an op; a user's whole space)."""
    merged: list[Dispatch] = field(default_factory=list)
    """The other dispatches the job's matcher selects (the same op launched from several
    executables, e.g. Q/K/V and output projections of one shape)."""
    skipped: str = ""
    folded: Dispatch | None = None
    """The op's dispatch listed under :attr:`tdsl.CpuTarget.fold_batch_matmuls`, where that
    makes the graph-level op the one codegen sees (a batch matmul whose RHS is broadcast over
    the batch, as ``nn.Linear`` on a 3-D input exports, becomes the matmul IREE would rebuild
    before codegen); its candidates are then built with the knob on."""
    rewritten: Dispatch | None = None
    """The convolution's dispatch as the base's target lists it, where the base's conv path
    (``channels_last_convs``) rewrites the op before a pin on its original form reaches it:
    the channels-last convolution, tuned in its place."""
    spaces: list[Space] = field(default_factory=list)
    """Every space searched (an op's pinned tiles, then its packing where it has one)."""
    variants: list[Variant] = field(default_factory=list)
    reference: Variant | None = None
    winner: Variant | None = None
    gain: float | None = None
    """The winner's speed-up over the reference in the rounds it won in."""
    noise: float = 0.0
    pruned: Pruned = field(default_factory=Pruned)
    fastest: tuple[Variant, Variant, float] | None = None
    """The fastest finalist of any search, the reference timed in the same rounds and its
    speed-up over it there (the winner's when the job has one): what the table reports, as
    medians of one stage's rounds are comparable and those of different stages are not."""

    @property
    def what(self) -> str:
        """The op's shapes (graph level), else its dispatch, else the space's name."""
        if self.dispatch is None:
            return f"space {self.space.template.name}" if self.space else self.name
        view = self.dispatch.graph_op
        return view.shapes() if view else self.dispatch.name

    @property
    def near_winner(self) -> Variant | None:
        """Without a winner: the fastest finalist if it was faster than the reference in the
        median, but not by a margin the op's share of the program resolves (the model pass
        times it with the winners); else None."""
        if self.winner is None and self.fastest is not None and self.fastest[2] > 1:
            return self.fastest[0]
        return None

    @property
    def launches(self) -> int:
        """Launches per call of every dispatch the job covers (1 for a user's space)."""
        return sum(d.launches for d in [self.dispatch, *self.merged]) if self.dispatch else 1

    def to_json(self) -> dict[str, object]:
        dispatches = [self.dispatch, *self.merged] if self.dispatch else []
        return job_head(
            self.name, dispatches, self.dispatch.graph_op if self.dispatch else None, self.share, self.skipped
        ) | {
            "tuned_as": self.rewritten.graph_op.shapes() if self.rewritten and self.rewritten.graph_op else None,
            "space_size": sum(space.size for space in self.spaces)
            if self.spaces
            else (self.space.size if self.space else 0),
            "pruned": self.pruned.to_json(),
            "noise": self.noise,
            "reference": self.reference.label if self.reference else None,
            "winner": self.winner.label if self.winner else None,
            "speedup": self.gain,
            "candidates": [v.to_json() for v in self.variants],
        }


def work(dispatch: Dispatch, view: OpView | None) -> float:
    """A dispatch's share-of-work weight: 2 x the product of ``view``'s loop sizes (its
    flops, for a contraction or convolution) x its launches per call; 0 without a view."""
    if view is None:
        return 0.0
    return 2.0 * math.prod(max(1, s) for s in view.loop_sizes) * max(1, dispatch.launches)


def flops(dispatch: Dispatch) -> float:
    return work(dispatch, dispatch.graph_op or dispatch.root)


MIN_SHARE = MIN_NOISE / 2
"""Jobs with a smaller share of the program's flops are not tuned unless ``--ops`` names
them: candidates are timed on the whole program, and even an op made free would move it by
at most half the noise floor (:data:`~tdsl.tune.measure.MIN_NOISE`), so a "win" measured
there is noise. (Flops stand in for time here, as in the jobs' order.)"""


def op_jobs(ops: ProgramOps, only: Sequence[str] = (), times: dict[str, float] | None = None) -> list[OpJob]:
    """The op-level jobs of a program (see the module docstring): one per distinct
    graph-level matcher of a contraction or convolution, by share, largest first: of the
    time in ``times`` (seconds per dispatch function of IREE default's build, whose
    dispatches the listing's are), else of the flops; below :data:`MIN_SHARE` (unless
    ``only`` selects them) a job is listed but skipped."""
    ready = cpu_spaces()
    by_time = times if times and any(d.name in times for d in ops.dispatches) else None
    total = (sum(by_time.values()) if by_time else sum(flops(d) for d in ops.dispatches)) or 1.0

    def _share(d: Dispatch) -> float:
        return (by_time.get(d.name, 0.0) if by_time else flops(d)) / total

    jobs: dict[str, OpJob] = {}
    for d in ops.dispatches:
        view = d.graph_op
        if view is None or d.graph_matcher is None:
            continue
        text = f"{d.name} {view.shapes()}"
        if only and not any(o in text for o in only):
            continue
        key = python_source(d.graph_matcher)
        if key in jobs:
            jobs[key].share += _share(d)
            jobs[key].merged.append(d)
            continue
        job = OpJob(name=f"op{len(jobs)}", dispatch=d, share=_share(d))
        job.skipped = ready.convolution_tunable(view, d.pipeline) if view.kind == "convolution" else ready.tunable(view)
        jobs[key] = job
    ordered = sorted(jobs.values(), key=lambda j: -j.share)
    for i, job in enumerate(ordered):
        job.name = f"op{i}"
        if not job.skipped and not only and job.share < MIN_SHARE:
            job.skipped = f"{job.share:.1%} of the {'time' if by_time else 'work'}, too small for whole-program timing to resolve (--ops tunes it anyway)"
    return ordered


def rebuilt(job: OpJob) -> bool:
    """Whether ``job``'s op is tuned and IREE rebuilds it before codegen
    (:func:`tdsl.strategies.cpu.space.restructured`)."""
    ready = cpu_spaces()
    d = job.dispatch
    return (
        not job.skipped
        and d is not None
        and d.graph_op is not None
        and d.root is not None
        and ready.restructured(d.graph_op, d.root)
    )


def rewritten_convolution(original: Dispatch, ops: ProgramOps) -> Dispatch | None:
    """The dispatch of ``ops`` (a listing under a target whose conv path rewrites
    convolutions, such as ``channels_last_convs``) whose graph-level op is ``original``'s
    convolution in its rewritten layout: the same sizes in every loop role, the same strides
    and dilations, a convolution at codegen too (not the transpose the rewrite adds before
    it), with an op-level space. None where there is not exactly one."""
    ready = cpu_spaces()
    view = original.graph_op
    assert view is not None

    def signature(v: OpView) -> tuple[object, ...]:
        return (
            tuple(sorted((role, tuple(v.sizes(role))) for role in v.roles)),
            v.strides,
            v.dilations,
            tuple(o.element for o in v.operands),
        )

    found = [
        d
        for d in ops.dispatches
        if d.graph_op is not None
        and d.graph_matcher is not None
        and d.root is not None
        and d.root.kind == "convolution"
        and d.graph_op.maps != view.maps
        and signature(d.graph_op) == signature(view)
        and not ready.convolution_tunable(d.graph_op, d.pipeline)
    ]
    return (
        found[0] if len({python_source(d.graph_matcher) for d in found if d.graph_matcher is not None}) == 1 else None
    )


def fold_rebuilt(jobs: Sequence[OpJob], folded: ProgramOps) -> None:
    """Sets :attr:`OpJob.folded` of each job whose op IREE rebuilds before codegen to its
    dispatch in ``folded`` (the program listed under ``fold_batch_matmuls``: the same codegen
    op) where there the graph-level op is the one codegen sees and has a space."""
    ready = cpu_spaces()
    by_root: dict[str, list[Dispatch]] = {}
    for d in folded.dispatches:
        if d.codegen_matcher is not None:
            by_root.setdefault(python_source(d.codegen_matcher), []).append(d)
    for job in jobs:
        if not rebuilt(job):
            continue
        assert job.dispatch is not None and job.dispatch.codegen_matcher is not None
        found = by_root.get(python_source(job.dispatch.codegen_matcher), [])
        same = [d for d in found if d.name == job.dispatch.name] or found
        for d in same:
            if (
                d.graph_op is not None
                and d.graph_matcher is not None
                and d.root is not None
                and not ready.restructured(d.graph_op, d.root)
                and not ready.tunable(d.graph_op)
            ):
                job.folded = d
                break
