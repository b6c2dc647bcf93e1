"""The tuning loop of ``tdsl tune`` for CPU: program-level knobs, then one op at a time,
then the whole model, keeping IREE's path wherever nothing measured better.

The tuner is :class:`CpuTuner` (the :class:`~tdsl.tune.target_tuner.TargetTuner` of kind
``llvm-cpu``); it runs its stages in order: :class:`~tdsl.tune.stages.ProgramStage`, an
:class:`~tdsl.tune.stages.OpStage` per job, :class:`~tdsl.tune.model_stage.ModelStage`.

1. **Pick the work.** The program's dispatches come from the op listing
   (:func:`tdsl.compiler.ops.list_dispatches`); every contraction and convolution with an
   op-level space (:func:`tdsl.strategies.cpu.space.tunable`,
   :func:`~tdsl.strategies.cpu.space.convolution_tunable`) is a tuning job, one per distinct
   graph-level matcher (a shape launched several times is one job), ordered by its share
   of IREE default's time per call, profiled per dispatch after the program level
   (:meth:`TuneSession.dispatch_times`; flops x launches where the profile fails); one below
   :data:`MIN_SHARE` of it is listed but not tuned unless ``ops`` names it.
2. **Program level.** The points of :func:`~tdsl.strategies.cpu.space.program_space`
   (IREE default and data tiling among them) and the ready library's graph-level mmt4d
   packing of every matmul are built and timed on the whole program (a point IREE's own
   vector-size check refuses is built again with the check off, :func:`_with_large_vectors`);
   the fastest is the *base* the op-level candidates start from.
3. **Op level.** For each job, the candidates of its spaces -- its pinned tiles
   (:func:`~tdsl.strategies.cpu.space.contraction_space`, or for a convolution
   :func:`~tdsl.strategies.cpu.space.convolution_space`, on the channels-last op where the
   base rewrites it so, :func:`rewritten_convolution`; an op IREE rebuilds before codegen
   is tuned as listed under ``fold_batch_matmuls``, :func:`fold_rebuilt`), then, for a 2-D matmul (or a
   batch-1 batch matmul, folded first), its graph-level packing (:func:`~tdsl.strategies.cpu.layout_spaces.packing_space`, on its own
   target: ukernels off) and its RHS panels (:func:`~tdsl.strategies.cpu.layout_spaces.panel_space`:
   the RHS alone packed, the op pinned); the best winner is the op's -- (the budget's
   share per space, seeded sample; pruned ones counted) are built in parallel by the executor and timed on the
   whole program, interleaved with the base in repeated rounds (the base first and last in
   every round); a first round screens, the best few get the remaining rounds. A candidate
   whose rules matched nothing is stood in for by the point its space names, where it names
   one (:meth:`tdsl.sets.space.Space.without_unmatched`: a packing whose LHS pack IREE fused
   into its producer, with IREE's pack configuration). A candidate
   sample has a timeout relative to the base's time. A candidate wins only where it beats
   the base round by round by more than the measured noise (:func:`tdsl.tune.measure.wins`).
4. **Model pass.** The base plus every op's winning rule (also on each winner's own
   target where it differs from the base's) is timed against IREE default,
   data tiling and the base; the faster of the base and the base with the rules is
   emitted only if it beats the better IREE path, and its rules the base, by more than the noise (where it is
   faster in the median but in too few rounds, as many rounds again decide), otherwise the
   better IREE path is emitted (data tiling as a target flag, where it beats IREE default
   the same way, or no rules at all).
5. **Numerics.** The emitted set's outputs are compared with IREE default's
   (:func:`tdsl.run`, dtype tolerance); a rule whose outputs differ is dropped.
6. **Deployment.** The emitted build, IREE default and data tiling, and the runtimes users
   deploy an ``.onnx`` model with (onnxruntime, OpenVINO) are timed in interleaved rounds at
   the thread count tuned for and at every ``compare_threads``
   (:class:`~tdsl.tune.peer_stage.DeploymentStage`).

An ``.onnx`` model's candidates build from its import with the large weights in a parameter
archive (:func:`tdsl.programs.parameters.externalize_weights`) that every run reads at load: a
module is code only (a 150 MB model's data-tiling build: 126 KB in 2.5 s instead of 152 MB in 3.6 s),
while each call runs as with the weights inline. The numeric check runs the model with its
weights inline, as the user's program has them.

Everything built and measured goes through the cache (:mod:`tdsl.tune.cache`): builds are
reused from any machine, samples only from the same machine model; a stage whose variants
all have enough samples on this machine is not measured again. Ctrl-C stops after the
sample running: what was measured is kept and emitted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, cast, get_args

from ..compiler.ops import ProgramOps
from ..compiler.progress import NO_PROGRESS, Progress
from ..errors import TdslError
from ..measure.dispatch_profile import with_measured_launches
from ..measure.machine import Machine
from ..measure.numerics import RunReport
from ..measure.peers import choose_peers
from ..programs.load import load_program
from ..programs.parameters import check_runnable, externalize_weights
from ..programs.program import Program
from ..sets.space import Space
from ..sets.strategy_set import Rule, StrategySet
from ..targets import CpuTarget
from ..targets.host import Isa, detect_isa
from .cache_keys import ArtifactKey, Verdict
from .candidates import better_iree, tuned_set
from .database import Database
from .executor import Executor
from .measure import Variant
from .model_stage import ModelStage
from .op_jobs import OpJob, fold_rebuilt, op_jobs, rebuilt
from .peer_stage import DeploymentStage
from .result import TuneResult
from .search import search
from .session import DATA_TILING, IREE_DEFAULT, Stop, TuneFailed, TuneOptions, TuneSession, tuning_session
from .stages import OpStage, ProgramStage
from .target_tuner import Report, register_tuner

__all__ = ["CpuTuner", "DATA_TILING", "IREE_DEFAULT", "TuneFailed", "TuneOptions", "TuneResult", "tune"]


@dataclass
class _Run:
    """What one CPU tuning has so far (what the stages leave for the next)."""

    listing: ProgramOps
    program: list[Variant] = field(default_factory=list)
    base: Variant | None = None
    jobs: list[OpJob] = field(default_factory=list)
    share_basis: str = "flops"
    share_note: str = ""
    interrupted: bool = False


class CpuTuner:
    """The :class:`~tdsl.tune.target_tuner.TargetTuner` of CPU targets (kind ``llvm-cpu``):
    the module docstring's stages, ``budget`` candidates per op and space."""

    kind = CpuTarget.kind_name()
    searches_user_spaces = True

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
    ) -> TuneResult:
        """Tunes ``program`` for this CPU (module docstring). With ``space`` (a user's set
        with knobs, for this CPU), that space is searched as one job instead of the ready
        op-level spaces: each candidate set is built as it is and timed against the program
        stage's fastest point, then in the model pass against IREE's paths."""
        started = time.monotonic()
        check_runnable(program)
        choose_peers(options.peers, program.onnx_path is not None, 1, [])  # a named peer not installed: before any work
        built = externalize_weights(program)  # candidates build and run with the weights in an archive
        session = TuneSession(built, options, executor, cache, progress)
        run = _Run(listing=session.listing(CpuTarget()))
        try:
            self._program_and_ops(session, run, space, report)
        except (KeyboardInterrupt, Stop) as stop:
            run.interrupted = isinstance(stop, KeyboardInterrupt)
            report(
                "interrupted: emitting what was measured"
                if run.interrupted
                else "time budget spent: emitting what was measured"
            )
        if run.base is None:
            raise TuneFailed("interrupted before the baselines were measured: nothing to emit")
        try:
            final, chosen, margin = ModelStage(session).run(run.program, run.base, run.jobs)
        except (KeyboardInterrupt, Stop):
            run.interrupted = True
            final, chosen, margin = run.program, run.base, 0.0
        tuned = chosen.strategies or tuned_set([CpuTarget()])
        numerics: Verdict = {"checked": False}
        if options.check_numerics and not _is_iree_default(tuned):
            tuned, numerics, chosen = _numerics(program, session, tuned, final, chosen)
        deployment = None
        if not run.interrupted:
            try:
                counts = tuple(dict.fromkeys((options.threads, *options.compare_threads)))
                iree = [v for v in final if v.label in (IREE_DEFAULT, DATA_TILING)]
                deployment = DeploymentStage(session, program).run(chosen, iree, counts, options.rounds)
            except (KeyboardInterrupt, Stop):
                run.interrupted = True
        return TuneResult(
            payload=str(program.source),
            target=CpuTarget.default_name,
            machine=session.machine,
            options=options,
            tuned=tuned,
            program=run.program,
            jobs=run.jobs,
            final=final,
            chosen=chosen.label,
            noise=margin,
            numerics=numerics,
            interrupted=run.interrupted,
            seconds=time.monotonic() - started,
            cache_stats=cache.stats(),
            share_basis=run.share_basis,
            share_note=run.share_note,
            deployment=deployment,
        )

    @staticmethod
    def _program_and_ops(session: TuneSession, run: _Run, space: Space | None, report: Report) -> None:
        """The program stage, then the jobs (by share), each op's stage (or the user's space)."""
        options, progress = session.options, session.progress
        isa = host_isa(session.machine)
        dispatches = run.listing.dispatches
        has_convs = any(d.graph_op is not None and d.graph_op.kind == "convolution" for d in dispatches)
        contractions = any(d.graph_op is not None and d.graph_op.kind == "contraction" for d in dispatches)
        odd = any(d.odd_loops for d in dispatches)
        run.program, base = ProgramStage(session).run(CpuTarget(), has_convs, isa, contractions, odd)
        run.base = base
        report(f"program: fastest {base.label} ({(base.median or 0) * 1e3:.3f} ms)")
        run.jobs = (
            _jobs(session, run, report)
            if space is None
            else [OpJob(name="space", dispatch=None, share=1.0, space=space)]
        )
        if any(rebuilt(job) for job in run.jobs):
            fold_rebuilt(run.jobs, session.listing(CpuTarget(fold_batch_matmuls=True)))
        tunable_jobs = [j for j in run.jobs if not j.skipped]
        progress.expect("tune", len(tunable_jobs))
        stage = OpStage(session, isa, options.budget)
        for job in tunable_jobs:
            progress.begin("tune", f"{job.name} {job.what}")
            if job.dispatch is None and job.space is not None:
                search(session, job, job.space, base, options.budget, lambda c: (c.strategies, c.strategies.rules))
            else:
                stage.run(job, base)
            progress.advance("tune")
            gain = job.gain if job.winner else None
            report(
                f"{job.name}: "
                + (
                    job.skipped
                    if job.skipped
                    else f"{job.winner.label} {gain:.2f}x over {base.label}"
                    if job.winner and gain
                    else f"no candidate beat {base.label} by more than {job.noise:.1%}"
                )
            )


def _jobs(session: TuneSession, run: _Run, report: Report) -> list[OpJob]:
    """The op jobs, by their share of IREE default's time (the listing's dispatches are IREE
    default's); by flops where it cannot be profiled."""
    times: dict[str, float] | None = None
    try:
        profile = session.dispatch_times(next(v for v in run.program if v.label == IREE_DEFAULT))
        times = {name: d.seconds for name, d in profile.items()}
        run.listing = with_measured_launches(run.listing, profile)
        run.share_basis = "time"
    except TdslError as err:
        run.share_note = f"no per-dispatch profile of {IREE_DEFAULT} ({err}); shares are of the flops"
        report(run.share_note)
    return op_jobs(run.listing, session.options.ops, times)


def _numerics(
    program: Program, session: TuneSession, tuned: StrategySet, final: list[Variant], chosen: Variant
) -> tuple[StrategySet, Verdict, Variant]:
    """``tuned`` checked against IREE default's outputs (:func:`_checked`): what to emit,
    the verdict and the variant emitted (IREE's faster path where the set fell back)."""
    reference = next((v for v in final if v.vmfb is not None), None)
    iree_best = better_iree(final, reference) if reference is not None else None
    # IREE's faster path, unless that is the build whose outputs are checked.
    default = next((v for v in final if v.label == IREE_DEFAULT), Variant(IREE_DEFAULT, None))
    fallback = iree_best if iree_best is not None and iree_best is not chosen else default
    tuned, numerics = _checked(program, tuned, session.options, session.cache, session.key(tuned), fallback)
    if numerics.get("fell_back"):
        numerics["instead_of"] = chosen.label
        chosen = fallback
    return tuned, numerics, chosen


def tune(
    payload: Path | str | Program,
    *,
    options: TuneOptions = TuneOptions(),
    executor: Executor | None = None,
    cache: Database | None = None,
    progress: Progress = NO_PROGRESS,
    report: Callable[[str], None] = lambda line: None,
    space: Space | None = None,
) -> TuneResult:
    """Tunes ``payload`` (an ``.onnx`` model or ``.mlir`` program) for this CPU; see the
    module docstring and :meth:`CpuTuner.tune`. ``report`` receives one line per stage (best
    so far). A local executor and the default cache are used where none are given."""
    program = payload if isinstance(payload, Program) else load_program(payload)
    with tuning_session(executor, cache, progress) as (running, store):
        return CpuTuner().tune(
            program, options=options, executor=running, cache=store, progress=progress, report=report, space=space
        )


def _is_iree_default(strategies: StrategySet) -> bool:
    """True for a set without rules whose target is IREE's own default for its CPU (nothing
    to check: it is the numerics reference)."""
    target = strategies.targets[0]
    return not strategies.rules and target == target.baseline()


def _checked(
    program: Program, tuned: StrategySet, options: TuneOptions, cache: Database, key: ArtifactKey, fallback: Variant
) -> tuple[StrategySet, Verdict]:
    """``tuned`` if its outputs match IREE default's within tolerance, else ``tuned`` without
    the rules whose outputs differ (each checked alone with the target); where the target's
    own knobs (a program-level winner: ukernels, im2col, channels-last) give outputs that
    differ, ``fallback``'s set (IREE's faster path) with ``fell_back`` set. With the verdict."""
    from ..measure.run import run

    reference = IREE_DEFAULT
    verdict = cache.get_verdict(key, reference)
    if verdict is None:
        verdict = _verdict(run, program, tuned, options)
        cache.put_verdict(key, reference, verdict)
    if verdict["ok"]:
        return tuned, verdict | {"checked": True, "dropped": []}
    bare = tuned_set(tuned.targets)
    if tuned.rules and (_is_iree_default(bare) or _verdict(run, program, bare, options)["ok"]):
        kept: list[Rule] = []
        dropped: list[Rule] = []
        for rule in tuned.rules:
            alone = tuned_set(tuned.targets, [rule])
            (kept if _verdict(run, program, alone, options)["ok"] else dropped).append(rule)
        return tuned_set(tuned.targets, kept), verdict | {
            "checked": True,
            "dropped": [r.strategy.name for r in dropped],
        }
    back = fallback.strategies or tuned_set([CpuTarget()])
    knobs = (
        ", ".join(f"{k}={v}" for k, v in tuned.targets[0].model_dump(exclude_defaults=True).items() if k != "name")
        or "the target"
    )
    return back, verdict | {
        "checked": True,
        "dropped": [*(r.strategy.name for r in tuned.rules), f"program knobs {knobs}"],
        "fell_back": fallback.label,
    }


def _verdict(run: Callable[..., RunReport], program: Program, strategies: StrategySet, options: TuneOptions) -> Verdict:
    report = run(
        program,
        strategies,
        CpuTarget.default_name,
        check=False,
        timeout_s=options.timeout_s,
        memory_gb=options.memory_gb,
        extra_flags=options.extra_flags,
    )
    data = report.to_json()
    comparisons = [
        {
            "function": f["function"],
            **{
                k: c.get(k)
                for k in (
                    "reference",
                    "result",
                    "max_abs_error",
                    "max_rel_error",
                    "tolerance",
                    "tolerance_kind",
                    "mismatched",
                    "ok",
                )
            },
        }
        for f in data.get("functions", [])
        for c in f.get("comparisons", [])
    ]
    return {"ok": bool(report.ok), "reference": IREE_DEFAULT, "comparisons": comparisons}


def host_isa(machine: Machine) -> Isa:
    """The ISA of the runner's ``machine`` (as :meth:`Executor.machines` describes it), else
    of this one."""
    found = machine.get("isa")
    return cast(Isa, found) if found in get_args(Isa) else detect_isa()


register_tuner(CpuTuner())
