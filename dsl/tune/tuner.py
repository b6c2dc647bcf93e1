"""The tuning loop of ``tdsl tune`` for CPU: program-level knobs, then one op at a time,
then the whole model, keeping IREE's path wherever nothing measured better.

1. **Pick the work.** The program's dispatches come from the op listing
   (:func:`tdsl.iree.ops.list_dispatches`); every contraction and convolution with an
   op-level space (:func:`tdsl.strategies.cpu.space.tunable`,
   :func:`~tdsl.strategies.cpu.space.convolution_tunable`) is a tuning job, one per distinct
   graph-level matcher (a shape launched several times is one job), ordered by its share
   of IREE default's time per call, profiled per dispatch after the program level
   (:meth:`Tuner.dispatch_times`; flops x launches where the profile fails); one below
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
   batch-1 batch matmul, folded first), its graph-level packing (:func:`~tdsl.strategies.cpu.space.packing_space`, on its own
   target: ukernels off) and its RHS panels (:func:`~tdsl.strategies.cpu.space.panel_space`:
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

An ``.onnx`` model's candidates build from its import with the large weights in a parameter
archive (:func:`tdsl.iree.frontend.externalize_weights`) that every run reads at load: a
module is code only (a 150 MB model's data-tiling build: 126 KB in 2.5 s instead of 152 MB in 3.6 s),
while each call runs as with the weights inline. The numeric check runs the model with its
weights inline, as the user's program has them.

Everything built and measured goes through the cache (:mod:`tdsl.tune.cache`): builds are
reused from any machine, samples only from the same machine model; a stage whose variants
all have enough samples on this machine is not measured again. Ctrl-C stops after the
sample running: what was measured is kept and emitted.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, cast, get_args

import numpy as np

from ..errors import StrategyError, TdslError
from ..iree.dispatch_profile import DispatchTime, with_measured_launches
from ..iree.frontend import Program, check_runnable, externalize_weights, load_program, make_inputs, signatures
from ..iree.timing import MALLOC_STEADY_STATE
from ..iree.iree_compile import DEFAULT_MEMORY_GB
from ..iree.machine import versions
from ..iree.ops import Dispatch, OpView, ProgramOps, list_dispatches, python_source
from ..iree.progress import NO_PROGRESS, Progress
from ..sets.loader import to_data
from ..sets.space import Pruned, Space
from ..sets.strategy_set import Rule, StrategySet
from ..targets import AmdGpuTarget, CpuTarget
from ..targets.host import Isa, detect_isa
from .cache import ArtifactKey, MachineKey, TuneCache, canonical_hash
from .executor import BuildJob, BuildResult, Executor, LocalExecutor, SampleJob, SampleResult
from .ready import cpu_spaces
from .measure import MIN_NOISE, Variant, fastest, inconclusive, noise, round_order, speedup, wins

SAMPLING = "round-in-one-process:bursts:instance-per-slot"
"""How a round is timed (:func:`tdsl.tune.executor.sample_round`); part of the samples'
cache key, so samples taken another way are not mixed in."""
TUNE_SCHEMA_VERSION = 2
"""Version of what a tuning stores and reports, and of how tdsl renders a strategy into what a
build compiles; part of every cache key. Bump it when the scripts rendered for an existing
strategy change (2: a set with several fold_unit_dims layouts applies all of them), so that
cached builds of the old scripts are not reused."""
IREE_DEFAULT = "iree-default"
DATA_TILING = "iree-data-tiling"


class TuneFailed(TdslError):
    """Tuning could not start or go on (no tunable program, every baseline build failed)."""


@dataclass(frozen=True)
class TuneOptions:
    """What ``tdsl tune`` does: ``budget`` candidates per op and space (or until ``time_s`` seconds
    have passed), ``rounds`` interleaved rounds of ``min_time_s`` samples on ``threads``
    threads with ``allocator``, ``finalists`` candidates per op kept after the first round,
    ``ops`` substrings of the dispatch names or shapes to tune (empty: all), ``seed`` for
    sampling and round order."""

    budget: int = 24
    time_s: float | None = None
    rounds: int = 5
    min_time_s: float = 0.05
    threads: int = 1
    allocator: str = "default"
    finalists: int = 4
    ops: tuple[str, ...] = ()
    seed: int = 0
    check_numerics: bool = True
    timeout_s: float = 300.0
    memory_gb: float = DEFAULT_MEMORY_GB
    extra_flags: tuple[str, ...] = ()
    serial_loading: bool = True
    """As in :func:`tdsl.compile`."""
    device: str = ""
    """The IREE device the runner times on (``hip://0`` on a machine with an AMD GPU); empty:
    this CPU."""


def job_head(name: str, dispatches: Sequence[Dispatch], view: OpView | None, share: float, skipped: str) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
        dispatches = [self.dispatch, *self.merged] if self.dispatch else []
        return job_head(self.name, dispatches, self.dispatch.graph_op if self.dispatch else None, self.share, self.skipped) | {
            "tuned_as": self.rewritten.graph_op.shapes() if self.rewritten and self.rewritten.graph_op else None,
            "space_size": sum(space.size for space in self.spaces) if self.spaces else (self.space.size if self.space else 0),
            "pruned": self.pruned.to_json(),
            "noise": self.noise,
            "reference": self.reference.label if self.reference else None,
            "winner": self.winner.label if self.winner else None,
            "speedup": self.gain,
            "candidates": [v.to_json() for v in self.variants],
        }


@dataclass
class TuneResult:
    """A tuning's outcome: the emitted set, the baselines, the model pass, every job."""

    payload: str
    target: str
    machine: dict[str, Any]
    options: TuneOptions
    tuned: StrategySet
    program: list[Variant]
    jobs: list[OpJob]
    final: list[Variant]
    chosen: str
    noise: float
    numerics: dict[str, Any]
    interrupted: bool
    seconds: float
    cache_stats: dict[str, Any]
    share_basis: str = "flops"
    """What the jobs' shares are shares of: ``time`` (IREE default's time per dispatch,
    profiled on this machine: :func:`tdsl.iree.dispatch_profile.dispatch_times`) or
    ``flops`` (flops x launches, where the profile failed; :attr:`share_note` says why)."""
    share_note: str = ""

    def variant(self, label: str) -> Variant | None:
        return next((v for v in self.final if v.label == label), None)


class _Stop(Exception):
    """The time budget is spent."""


class Tuner:
    """One tuning run (see the module docstring); :func:`tune` drives it."""

    def __init__(
        self,
        program: Program,
        options: TuneOptions,
        executor: Executor,
        cache: TuneCache,
        progress: Progress,
        target: CpuTarget | AmdGpuTarget | None = None,
    ) -> None:
        self.target = target or CpuTarget()
        """The target a build without strategies (IREE's default) compiles for."""
        self.program = program
        self._listings: dict[str, ProgramOps] = {}
        self.options = options
        self.executor = executor
        self.cache = cache
        self.progress = progress
        self.started = time.monotonic()
        self.payload = program.text().encode()
        # The weights a module reads at load are part of what is timed.
        self.source_hash = canonical_hash({"program": canonical_hash(self.payload), "parameters": [a.digest for a in program.parameters]}) if program.parameters else canonical_hash(self.payload)
        self.iree_version = versions()["iree-base-compiler"]
        machines = executor.machines()
        self.machine = machines[0]
        self.machine_key = MachineKey(str(self.machine["cpu"]), str(self.machine["isa"]), int(self.machine["cores"]), options.device or "local")
        functions = signatures(program)
        if len(functions) != 1:
            raise TuneFailed(f"{program.source}: expected a program with one public function, received {len(functions)}")
        self.signature = functions[0]
        self.inputs = tuple(_npy(a) for a in make_inputs(self.signature, seed=0))
        self.setup = canonical_hash(
            {"function": self.signature.function, "threads": options.threads, "allocator": options.allocator,
             "min_time_s": options.min_time_s, "device": options.device, "inputs": canonical_hash(b"".join(self.inputs)),
             "malloc": MALLOC_STEADY_STATE, "sampling": SAMPLING}
        )

    # -- building -----------------------------------------------------------------------

    def _key(self, strategies: StrategySet | None) -> ArtifactKey:
        target = strategies.targets[0] if strategies is not None else self.target
        return ArtifactKey(
            iree_version=self.iree_version,
            target=target.name,
            target_flags=" ".join(target.compile_flags()),
            source_hash=self.source_hash,
            candidate_hash=canonical_hash(to_data(strategies)) if strategies is not None else IREE_DEFAULT,
            flags_hash=canonical_hash({"extra_flags": list(self.options.extra_flags), "serial_loading": self.options.serial_loading}),
            schema_version=TUNE_SCHEMA_VERSION,
        )

    def build(self, variants: Sequence[Variant]) -> None:
        """Builds ``variants`` (cached builds reused) in parallel."""
        jobs: list[BuildJob] = []
        keys: dict[str, tuple[Variant, ArtifactKey]] = {}
        for v in variants:
            key = self._key(v.strategies)
            v.artifact, v.key = key, key.digest()
            cached = self.cache.get_build(key)
            if cached is not None:
                v.vmfb, v.build_error, v.build_seconds, v.build_report = cached.vmfb, cached.error, cached.seconds, cached.report
                continue
            if v.key in keys:
                continue
            keys[v.key] = (v, key)
            jobs.append(
                BuildJob(
                    key=v.key,
                    payload_name="program.mlir",
                    payload=self.payload,
                    strategies=to_data(v.strategies) if v.strategies is not None else None,
                    target=self.target.name,
                    extra_flags=self.options.extra_flags,
                    timeout_s=self.options.timeout_s,
                    memory_gb=self.options.memory_gb,
                    serial_loading=self.options.serial_loading,
                )
            )
        if not jobs:
            return
        self.progress.expect("compile", len(jobs))

        def done(result: BuildResult) -> None:
            variant, key = keys[result.key]
            if result.lasting:
                self.cache.put_build(key, result.vmfb, result.error, result.seconds, result.report)
            self.progress.advance("compile")

        results = {r.key: r for r in self.executor.build_all(jobs, done)}
        for v in variants:
            if v.vmfb is None and not v.build_error and v.key in results:
                r = results[v.key]
                v.vmfb, v.build_error, v.build_seconds, v.build_report = r.vmfb, r.error, r.seconds, r.report
        for v in variants:
            lost = unapplied(v)
            if lost:
                v.vmfb = None
                v.build_error = f"rule {', '.join(r.strategy.name for r in lost)} matched nothing in the program"

    # -- measuring ----------------------------------------------------------------------

    def measure(self, variants: Sequence[Variant], reference: Variant, rounds: int, seed: int, stage: str) -> None:
        """Times ``variants`` (``reference`` among them) in ``rounds`` interleaved rounds,
        unless every one of them already has that many samples of this ``stage`` on this
        machine (samples are cached per stage, so a rerun makes the same decisions)."""
        built = [v for v in variants if v.vmfb is not None]
        setup = f"{self.setup}:{stage}"
        cached = {id(v): self.cache.samples(v.artifact, self.machine_key, setup) for v in built if v.artifact}

        def per(v: Variant) -> int:
            return 2 if v is reference else 1  # the reference runs first and last in a round

        if all(len(cached.get(id(v), ())) >= rounds * per(v) for v in built):
            for v in built:  # as a cold run leaves them: this stage's samples after the earlier ones
                # The stage's latest measurement only: a stage measured again (a candidate of it
                # was new) appends its rounds to the earlier ones of the variants it shares, and
                # the run that measured it decided on those rounds alone.
                stored = list(cached[id(v)])[-rounds * per(v):]
                v.samples.extend(stored)
                v.cached_samples += len(stored)
                v.by_round.extend(stored[i : i + per(v)] for i in range(0, len(stored), per(v)))
            return
        base_time = reference.median or 1.0
        self.progress.expect("sample", rounds * (len(built) + 1))
        for r in range(rounds):
            order = round_order(built, reference, seed * 1000 + r)
            jobs = [
                SampleJob(
                    key=v.key,
                    vmfb=v.vmfb or b"",
                    function=self.signature.function,
                    inputs=self.inputs,
                    threads=self.options.threads,
                    min_time_s=self.options.min_time_s,
                    allocator=self.options.allocator,
                    device=self.options.device,
                    parameters=self.program.parameters,
                    timeout_s=max(30.0, 20 * (self.options.min_time_s + 50 * base_time)) if v is not reference else 600.0,
                )
                for v in order
            ]
            def done(result: SampleResult) -> None:
                self.progress.advance("sample")

            results = self.executor.sample_rounds([jobs], 0, done)[0]
            this_round: dict[int, list[float]] = {id(v): [] for v in built}
            for v, result in zip(order, results):
                if result.seconds is not None:
                    v.samples.append(result.seconds)
                    this_round[id(v)].append(result.seconds)
                else:
                    v.sample_errors.append(result.error)
                if v.artifact:
                    self.cache.add_samples(v.artifact, self.machine_key, setup, [result.seconds], [result.error] if result.seconds is None else None)
            for v in built:
                v.by_round.append(this_round[id(v)])
            if reference.median:
                base_time = reference.median
            self._check_time()

    def dispatch_times(self, variant: Variant) -> dict[str, DispatchTime]:
        """Seconds and launches per call of each dispatch function of ``variant``'s build in
        back-to-back calls on this machine, about half a second of them (cached per build,
        machine model and setup). Raises :class:`~tdsl.errors.TdslError` (one line) where
        the build or the profile fails."""
        import tempfile

        from ..iree.dispatch_profile import calls_for, dispatch_times

        if variant.vmfb is None or variant.artifact is None:
            raise TdslError(f"{variant.label} has no build to profile: {variant.build_error or 'not built'}")
        here = MachineKey.here(self.machine_key.device)
        found = self.cache.get_profile(variant.artifact, here, self.setup)
        if found is not None:
            return found
        with tempfile.TemporaryDirectory(prefix="tdsl-tune-profile-") as tmp:
            vmfb = Path(tmp) / "module.vmfb"
            vmfb.write_bytes(variant.vmfb)
            inputs = []
            for i, data in enumerate(self.inputs):
                inputs.append(Path(tmp) / f"input{i}.npy")
                inputs[-1].write_bytes(data)
            times = dispatch_times(vmfb, self.signature.function, inputs, calls_for(variant.median), parameters=[a.spec for a in self.program.parameters])
        self.cache.put_profile(variant.artifact, here, self.setup, times)
        return times

    def listing(self, target: CpuTarget) -> ProgramOps:
        """The program's dispatches as ``target`` compiles it (listed once per target)."""
        key = target.model_dump_json()
        if key not in self._listings:
            self._listings[key] = list_dispatches(
                self.program.mlir_path, target, extra_flags=self.options.extra_flags, timeout_s=self.options.timeout_s, memory_gb=self.options.memory_gb
            )
        return self._listings[key]

    def _check_time(self) -> None:
        limit = self.options.time_s
        if limit is not None and time.monotonic() - self.started > limit:
            raise _Stop()

    # -- the stages ---------------------------------------------------------------------

    def program_stage(self, target: CpuTarget, has_convolutions: bool, isa: Isa, has_contractions: bool) -> tuple[list[Variant], Variant]:
        """Builds and times the program-level points (and, where the program has
        contractions, the ready library's graph-level mmt4d packing of every matmul,
        :func:`tdsl.strategies.cpu.auto` with ``pack_matmuls=True``); returns them and the
        fastest."""
        ready = cpu_spaces()
        space = ready.program_space(target, has_convolutions, "tuned")
        variants = [Variant(IREE_DEFAULT, None)]
        defaults = target.baseline().model_dump(mode="json")  # IREE's own value of every program knob
        for c in space.candidates():
            changed = {k: v for k, v in c.values.items() if v != defaults[k]}
            if not changed:
                continue  # IREE default itself
            label = DATA_TILING if changed == {"data_tiling": True} else "program:" + ",".join(f"{k}={v}" for k, v in changed.items())
            variants.append(Variant(label, c.strategies, values=c.values))
        if has_contractions:
            packed = ready.packed_program(target, isa, "tuned")
            variants.append(Variant("program:pack_matmuls", packed, values={"pack_matmuls": True}))
        self.build(variants)
        refused = [_with_large_vectors(v) for v in variants if v.vmfb is None and LARGE_VECTOR_REFUSAL in v.build_error and v.strategies is not None]
        if refused:
            self.build(refused)
            variants.extend(refused)
        failed = [v for v in variants if v.vmfb is None]
        if len(failed) == len(variants):
            raise TuneFailed(f"every baseline build failed; first: {failed[0].build_error}")
        reference = next(v for v in variants if v.vmfb is not None)
        self.measure(variants, reference, self.options.rounds, self.options.seed, "program")
        timed = [v for v in variants if v.ok and v.median]
        best = fastest(timed, reference)
        if best is None:
            errors = [e for v in variants for e in v.sample_errors]
            raise TuneFailed(f"no baseline could be timed; first error: {errors[0] if errors else 'no samples'}")
        return variants, best

    def op_stage(self, job: OpJob, base: Variant, isa: Isa, budget: int) -> None:
        """Tunes one op on top of ``base``: its pinned-tile space, each candidate's rule
        before the base's rules, then, for a 2-D or batch-1 matmul, its packing space (each candidate
        on its own target: ukernels off) before the base's rules that
        validate there, and its RHS-panel space (on the base's target, before its rules; see
        the module docstring). The best winner is the op's."""
        ready = cpu_spaces()
        if job.dispatch is not None and job.dispatch.graph_op is not None and job.dispatch.graph_op.kind == "convolution":
            self.convolution_stage(job, base, isa, budget)
            return
        base_set = base.strategies or tuned_set([CpuTarget()])
        target = base_set.targets[0]
        assert isinstance(target, CpuTarget) and job.dispatch is not None
        targets = tuple(base_set.targets)
        dispatch = job.folded or job.dispatch
        view, match = dispatch.graph_op, dispatch.graph_matcher
        assert view is not None and match is not None
        if job.folded is not None:  # the op as IREE rebuilds it, made at the graph level
            target = target.model_copy(update={"fold_batch_matmuls": True})
            targets = (target, *targets[1:])
        root, root_match, at_codegen = job.dispatch.root, job.dispatch.codegen_matcher, False
        if job.folded is None and root is not None and root_match is not None and ready.restructured(view, root) and not ready.tunable(root):
            view, match, at_codegen = root, root_match, True  # IREE rebuilds the op before codegen: pin codegen's op
            if target.data_tiling:
                job.skipped = (
                    f"IREE rebuilds the op before codegen ({root.shapes()}) and the base, {base.label}, data-tiles it "
                    "there: a graph-level pin is lost with the op and a codegen pin with its encodings"
                )
                return
        try:
            job.space = ready.contraction_space(view, match, isa, target, job.name, at_codegen=at_codegen)
        except StrategyError as err:  # the base's target refuses every pin of this op
            job.skipped = f"no space on {base.label}: {err}"
            return
        self.search(job, job.space, base, budget, _before_base(targets, base_set))
        if at_codegen:
            return  # the layouts (packing, panels) act at the graph level, on the op IREE rebuilds
        if not ready.packable(view, match):
            packed = ready.packing_space(view, match, isa, target, f"{job.name}_packed")
            self.search(job, packed, base, budget, lambda c: (with_rules(c.strategies, base_set.rules), c.strategies.rules), tag="packed")
        if not ready.panelable(view, match, isa):
            panels = ready.panel_space(view, match, isa, target, f"{job.name}_panels")
            self.search(job, panels, base, budget, _before_base(targets, base_set), tag="panels")

    def convolution_stage(self, job: OpJob, base: Variant, isa: Isa, budget: int) -> None:
        """Tunes one convolution on top of ``base``: its pinned-tile space
        (:func:`tdsl.strategies.cpu.space.convolution_space`), each candidate's rule before the
        base's rules. The base's conv path may rewrite the op before a graph-level pin reaches
        it (IREE's im2col, the channels-last rewrite): one candidate is built first, and where
        its rule matches nothing the job is skipped with that reason."""
        ready = cpu_spaces()
        dispatch = job.rewritten or job.dispatch
        assert dispatch is not None and dispatch.graph_op is not None and dispatch.graph_matcher is not None
        base_set = base.strategies or tuned_set([CpuTarget()])
        target = base_set.targets[0]
        assert isinstance(target, CpuTarget)
        space = ready.convolution_space(dispatch.graph_op, dispatch.graph_matcher, isa, target, job.name, dispatch.pipeline or "", dispatch.lowering_config)
        make = _before_base(base_set.targets, base_set)
        first = next(iter(space.take(iter([(space.index_of(v), v) for v in space.seeds]))), None) or next(iter(space.candidates(count=budget, seed=self.options.seed)), None)
        if first is None:
            job.skipped = f"every point of its space was pruned: {'; '.join(space.pruned.lines()) or 'no reason recorded'}"
            return
        built, rules = make(first)
        probe = Variant(f"{job.name}#{first.index}", built, values=first.values, op=job.name, rules=rules)
        self.build([probe])
        if unapplied(probe):
            if job.rewritten is None and target.channels_last_convs and not target.im2col_convs:
                # The channels-last rewrite runs before the graph-level rules: the op they
                # see is the channels-last convolution, as the base's target lists it.
                job.rewritten = rewritten_convolution(dispatch, self.listing(target))
                if job.rewritten is not None:
                    self.convolution_stage(job, base, isa, budget)
                    return
            job.skipped = (
                f"a graph-level pin on it matches nothing by codegen on {base.label}: its conv path (IREE's im2col, the "
                "channels-last rewrite) rewrites the op before the pin reaches it or rebuilds it after"
            )
            return
        job.space = space
        self.search(job, space, base, budget, make)

    def search(self, job: OpJob, space: Space, base: Variant, budget: int, make: Callable[[Any], tuple[StrategySet, tuple[Rule, ...]]], tag: str = "") -> None:
        """Searches ``space`` against ``base`` with ``budget`` candidates: the seeds and a
        seeded sample (2/3 of the budget), one screening round, the neighbours of the best
        two, then the finalists (the best few and every seed that built) in full rounds; ``make`` turns a candidate into the set to
        build and the rules it adds; ``tag`` names the space in the candidates' labels.
        Adds to ``job``'s variants and pruning, sets its reference and noise, and makes the
        best finalist its winner if it wins and gains more than an earlier search's."""
        # Screening, wave 1: the space's seeds (the ready library's points), then a seeded
        # sample spread over the space (2/3 of the budget in all).
        sampled = list(space.candidates(count=budget * 4, seed=self.options.seed))
        seeds = list(space.take(iter([(space.index_of(v), v) for v in space.seeds])))
        first = max(1, (2 * budget) // 3)
        fresh = [c for c in sampled if c.index not in {s.index for s in seeds}]
        picked = seeds[:first]
        rest = first - len(picked)
        if rest > 0:
            picked += fresh[:: max(1, len(fresh) // rest)][:rest]
        # Each search times the base in stages of its own: samples are cached per stage, and
        # a second search of the job must not read (and re-judge with) the first one's.
        stage = f"{job.name}:{tag}" if tag else job.name
        reference = Variant(f"{base.label}", base.strategies, values=base.values, op=job.name)
        reference.vmfb, reference.key, reference.artifact = base.vmfb, base.key, base.artifact
        variants = [reference]

        def add(found: list[Any]) -> list[Variant]:
            new = []
            for c in found:
                built, rules = make(c)
                new.append(Variant(f"{job.name}{':' + tag if tag else ''}#{c.index}", built, values=c.values, op=job.name, rules=rules))
            variants.extend(new)
            return new

        def build(found: list[Variant]) -> list[Variant]:
            """Builds ``found``, then, for each whose rules matched nothing, the point the
            space says stands for it (:meth:`Space.without_unmatched`) where not tried yet."""
            self.build(found)
            known = {space.index_of(v.values) for v in variants[1:]}
            stand_ins: list[tuple[int, dict[str, Any]]] = []
            for v in found:
                lost = [r.strategy.name for r in unapplied(v)]
                point = space.without_unmatched(v.values, lost) if lost else None
                index = space.index_of(point) if point is not None else None
                if point is not None and index is not None and index not in known:
                    known.add(index)
                    stand_ins.append((index, point))
            again = add(list(space.take(iter(stand_ins))))
            if again:
                self.build(again)
            return [*found, *again]

        build(add(picked))
        self.measure(variants, reference, 1, self.options.seed + 1, f"{stage}:screen")
        self._best_so_far(job, variants, reference)
        # Wave 2: the neighbours of the two best so far (one knob one step away), the rest of the budget.
        tried = {space.index_of(v.values) for v in variants[1:]}
        leaders = sorted((v for v in variants[1:] if v.ok and v.median), key=lambda v: v.median or math.inf)[:2]
        near: list[tuple[int, dict[str, Any]]] = []
        for leader in leaders:
            for values in space.neighbors(leader.values):
                index = space.index_of(values)
                if index not in tried and len(near) < budget - len(picked):
                    tried.add(index)
                    near.append((index, values))
        second = add(list(space.take(iter(near))))
        if second:
            second = build(second)
            self.measure([reference, *second], reference, 1, self.options.seed + 4, f"{stage}:near")
            self._best_so_far(job, variants, reference)
        job.spaces.append(space)
        job.pruned = job.pruned.add(space.pruned)
        timed = sorted((v for v in variants[1:] if v.ok and v.median), key=lambda v: v.median or math.inf)
        # The seeds (the ready library's points) always reach the finals: one screening
        # sample is one sample, and a noisy one must not drop the point most likely to win.
        seeded = [v for v in variants[1 : 1 + min(len(seeds), first)] if v.ok and v.median and v not in timed[: self.options.finalists]]
        finalists = [reference, *timed[: self.options.finalists], *seeded]
        for v in finalists:
            v.samples, v.by_round, v.cached_samples = [], [], 0
        self.measure(finalists, reference, self.options.rounds, self.options.seed + 2, f"{stage}:final")
        job.variants.extend(variants[1:])
        margin = noise(reference)
        best = fastest(finalists[1:], reference)
        if best is not None and inconclusive(best, reference, margin):
            # Faster in the median but not in enough rounds (a noisy spell): as many rounds
            # again, judged on all of them, as in the model pass.
            self.measure(finalists, reference, self.options.rounds, self.options.seed + 6, f"{stage}:final:more")
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

    def _best_so_far(self, job: OpJob, variants: Sequence[Variant], reference: Variant) -> None:
        """Shows the best screened candidate of ``job`` on the progress bar."""
        best = min((v for v in variants if v is not reference and v.ok and v.median), key=lambda v: v.median or math.inf, default=None)
        gain = speedup(best, reference) if best is not None else None
        if gain:
            self.progress.begin("tune", f"{job.name}: best so far {gain:.2f}x over {reference.label} ({best.label if best else ''})")

    def model_stage(self, program_variants: list[Variant], base: Variant, jobs: list[OpJob]) -> tuple[list[Variant], Variant, float]:
        """Times the base plus every winning rule against IREE default, data tiling and the
        base; returns the variants, the one to emit and the noise."""
        base_set = base.strategies or tuned_set([CpuTarget()])
        # Op jobs' rules go on the base (and on each winner's own target where it differs:
        # a packed op turns ukernels off); a user's whole space (no
        # dispatch) is its own set.
        won = [job.winner for job in jobs if job.winner and job.dispatch is not None]
        baselines = [v for v in program_variants if v.label in (IREE_DEFAULT, DATA_TILING)]
        final = [Variant(v.label, v.strategies, values=v.values) for v in baselines]
        if base.label not in (IREE_DEFAULT, DATA_TILING):
            final.append(Variant(base.label, base.strategies, values=base.values))
        # The near winners (OpJob.near_winner): their gains add up in the model pass, which
        # times them with the winners (label "+near") and keeps them only if that set beats
        # the others there.
        near = [v for v in (job.near_winner for job in jobs if job.dispatch is not None) if v is not None]
        groups = [tuple(winner.rules) for winner in won]  # a winner's rules work together (a packing and its tiles): all or none
        combined = [_combined(label, targets, _reaching(won, targets), base_set) for label, targets in (_target_groups(base_set, won) if won else [])]
        if near:
            for label, targets in _target_groups(base_set, [*won, *near]):
                v = _combined(f"{label}+near", targets, _reaching([*won, *near], targets), base_set)
                if any(r in v.rules for n in near for r in n.rules):
                    combined.append(v)
        groups += [tuple(n.rules) for n in near]
        final.extend(v for v in combined if v.rules)
        for job in jobs:
            if job.dispatch is None and job.winner is not None and job.winner.strategies is not None:
                final.append(Variant(f"tuned:{job.name}", tuned_set(job.winner.strategies.targets, job.winner.strategies.rules), values=job.winner.values))
        self.build(final)
        # Winners measured one at a time may not all apply together (one's graph rewrite may
        # take another's op away). Such a set keeps its build error, under a label that counts
        # its winners, and is timed no further; the set of the winners that did apply takes its
        # label, until every rule of the set applies. A winner whose first rule (its layout or
        # pin) applied but whose later rules found nothing (the tiles of an LHS pack that IREE
        # fused after another winner's unpack) is timed both ways: less those rules (under the
        # label) and left out ("<label> less <its first rule>").
        failed = [v for v in combined if unapplied(v)]
        tried = list(combined)
        while failed:
            again: list[Variant] = []
            for v in failed:
                lost, label = unapplied(v), v.label
                mine = [g for g in groups if all(r in v.rules for r in g)]
                whole = [g for g in mine if not any(r in lost for r in g)]
                cut = [(g, tuple(r for r in g if r not in lost)) for g in mine if g[0] not in lost and g not in whole]
                groups = [*groups, *(part for _, part in cut)]
                v.label = f"{label} ({len(mine)} winners)"
                targets = v.strategies.targets if v.strategies else ()
                retries = [_combined(label, targets, [*whole, *(part for _, part in cut)], base_set)]
                if cut:
                    less = ", ".join(g[0].strategy.name for g, _ in cut)
                    retries.append(_combined(f"{label} less {less}", targets, whole, base_set))
                again.extend(retry for retry in retries if retry.rules)
            self.build(again)
            final.extend(again)
            tried.extend(again)
            failed = [v for v in again if unapplied(v)]
        # Winners that each compile alone may not compile together (one's rule reaching a
        # dispatch another's layout made). Such a set also keeps its build error under a
        # label that counts its winners; under its label, its winners are added one at a
        # time, in order of their ops' share of the work, each kept where the set still
        # compiles with every rule applied.
        for v in [v for v in tried if v.vmfb is None and v.build_error and not unapplied(v)]:
            mine = [g for g in groups if all(r in v.rules for r in g)]
            # a cut winner's part is dropped where the set holds its whole too
            mine = [g for g in mine if not any(h is not g and len(h) > len(g) and all(r in h for r in g) for h in mine)]
            if len(mine) < 2:
                continue
            label, targets = v.label, (v.strategies.targets if v.strategies else ())
            v.label = f"{label} ({len(mine)} winners)"
            together: list[tuple[Rule, ...]] = []
            good: Variant | None = None
            for group in mine:
                trial = _combined(label, targets, [*together, group], base_set)
                if not all(r in trial.rules for r in group):
                    continue  # the set does not validate with it
                self.build([trial])
                if trial.vmfb is not None:
                    together.append(group)
                    good = trial
            if good is not None:
                final.append(good)
        reference = next(v for v in final if v.vmfb is not None)
        self.measure(final, reference, self.options.rounds, self.options.seed + 3, "model")
        best_iree, best, margin = self._model_verdict(final, reference)
        if best is not None and inconclusive(best, best_iree, margin):
            # Faster in the median but not in enough rounds (a noisy spell): as many rounds
            # again, judged on all of them.
            self.measure(final, reference, self.options.rounds, self.options.seed + 5, "model:more")
            best_iree, best, margin = self._model_verdict(final, reference)
        chosen = best if best is not None and wins(best, best_iree, margin) else best_iree
        # The op rules are emitted only where they beat their base, as timed here, by more
        # than the noise: a set of rules within the noise of the base alone is the base.
        plain = next((v for v in final if v.label == base.label and v.ok and v.median), None)
        if chosen.rules and plain is not None and not wins(chosen, plain, margin):
            chosen = plain if plain.label not in (IREE_DEFAULT, DATA_TILING) and wins(plain, best_iree, margin) else best_iree
        # Data tiling within the noise of IREE default (a program it changes nothing
        # measurable in: no contraction, or too little of one) is IREE's own default path.
        default = next((v for v in final if v.label == IREE_DEFAULT and v.ok and v.median), None)
        if chosen.label == DATA_TILING and default is not None and not wins(chosen, default, margin):
            chosen = default
        return final, chosen, margin

    @staticmethod
    def _model_verdict(final: list[Variant], reference: Variant) -> tuple[Variant, Variant | None, float]:
        """The better IREE path, the fastest challenger and the noise of a model pass."""
        best_iree = _better_iree(final, reference)
        if best_iree is None:
            raise TuneFailed("the model pass could time neither IREE default nor data tiling")
        challengers = [v for v in final if v.label not in (IREE_DEFAULT, DATA_TILING) and v.ok]
        best = fastest(challengers, reference)
        return best_iree, best, noise(reference)


def _better_iree(final: Sequence[Variant], reference: Variant) -> Variant | None:
    """The faster of IREE default and data tiling among ``final`` (timed in the same rounds
    as ``reference``); None if neither was timed."""
    return fastest([v for v in final if v.label in (IREE_DEFAULT, DATA_TILING) and v.ok and v.median], reference)


LARGE_VECTOR_REFUSAL = "large vector sizes"
"""What IREE 3.13's vector-size check says where it refuses a configuration of its own (its
data tiling on AVX2 fuses a masked attention's mask into an 8x8-packed elementwise op with a
16 KB vector: the gpt2_block example; see :attr:`tdsl.CpuTarget.allow_large_vectors`)."""


def _with_large_vectors(refused: Variant) -> Variant:
    """The program-level point ``refused`` (whose build IREE's vector-size check failed) with
    the check off, as its own point: the flag changes nothing else, and IREE's path as
    shipped keeps its label and its build error."""
    assert refused.strategies is not None
    name = "program:data_tiling=True" if refused.label == DATA_TILING else refused.label
    targets = tuple(t.model_copy(update={"allow_large_vectors": True}) if isinstance(t, CpuTarget) else t for t in refused.strategies.targets)
    strategies = StrategySet(name=refused.strategies.name, targets=targets, rules=refused.strategies.rules)
    return Variant(f"{name},allow_large_vectors=True", strategies, values={**refused.values, "allow_large_vectors": True})


def unapplied(variant: Variant) -> list[Rule]:
    """The rules ``variant`` adds (:attr:`Variant.rules`) that its build reports as matching
    nothing (none before it is built)."""
    if variant.strategies is None or not variant.rules:
        return []
    unmatched = set(variant.build_report.get("unmatched", ()))
    return [r for i, r in enumerate(variant.strategies.rules) if i in unmatched and r in variant.rules]


GRAPH_KNOBS = ("fold_batch_matmuls", "channels_last_convs")
"""Target knobs that change which ops the graph level has (a folded batch matmul is a 2-D
matmul; a channels-first convolution is a channels-last one between transposes): a winner's
rules reach their op only on targets with its values of these."""


def _reaching(winners: Sequence[Variant], targets: Sequence[Any]) -> list[tuple[Rule, ...]]:
    """The rules of each of ``winners`` (a group each) measured on a target whose
    :data:`GRAPH_KNOBS` are those of ``targets``; the others would match nothing there."""
    def knobs(found: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(getattr(found[0], k, None) for k in GRAPH_KNOBS) if found else ()

    return [tuple(w.rules) for w in winners if w.strategies is None or knobs(w.strategies.targets) == knobs(targets)]


def _before_base(targets: Sequence[Any], base_set: StrategySet) -> Callable[[Any], tuple[StrategySet, tuple[Rule, ...]]]:
    """A search's ``make`` for a space of op rules on ``base_set``: a candidate's rules, then
    the base's rules that validate with them, on ``targets``; and the rules it adds."""
    return lambda c: (with_rules(tuned_set(targets, c.strategies.rules), base_set.rules), c.strategies.rules)


def _combined(label: str, targets: Sequence[Any], groups: Sequence[tuple[Rule, ...]], base_set: StrategySet) -> Variant:
    """The model pass's ``label`` variant: ``groups`` (each all or none) then the base's
    rules on ``targets``; its own rules are the groups' rules the set kept."""
    strategies = with_rules(with_rules(tuned_set(targets), list(groups)), base_set.rules)
    return Variant(label, strategies, rules=tuple(r for g in groups for r in g if r in strategies.rules))


def tuned_set(targets: Sequence[Any], rules: Sequence[Rule] = ()) -> StrategySet:
    """The set ``tdsl tune`` emits and measures: named ``tuned``."""
    return StrategySet(name="tuned", targets=tuple(targets), rules=tuple(rules))


def with_rules(strategies: StrategySet, rules: Sequence[Rule | tuple[Rule, ...]]) -> StrategySet:
    """``strategies`` (named ``tuned``) with ``rules`` added after its own, each (a tuple:
    all of its rules, or none) only where the set still validates with it on
    ``strategies``' targets (e.g. a packing rule needs ukernels off, and the tiles of the
    packed op mean nothing without it)."""
    kept = list(strategies.rules)
    for group in rules:
        added = list(group) if isinstance(group, tuple) else [group]
        try:
            tuned_set(strategies.targets, [*kept, *added])
        except StrategyError:
            continue
        kept.extend(added)
    return tuned_set(strategies.targets, kept)


def _target_groups(base_set: StrategySet, winners: Sequence[Variant]) -> list[tuple[str, tuple[Any, ...]]]:
    """The targets to time the op winners' rules on in the model pass, labelled: the base's
    (``tuned``), then each other target a winner was measured on (``tuned:`` and the fields
    it changes, e.g. ``tuned:ukernels=none``)."""
    groups: list[tuple[str, tuple[Any, ...]]] = [("tuned", tuple(base_set.targets))]
    base = base_set.targets[0].model_dump(mode="json") if base_set.targets else {}
    changes: list[dict[str, Any]] = []
    for winner in winners:
        targets = tuple(winner.strategies.targets) if winner.strategies else ()
        if targets and all(targets != known for _, known in groups):
            changed = {k: v for k, v in targets[0].model_dump(mode="json").items() if base.get(k) != v}
            groups.append(("tuned:" + ",".join(f"{k}={v}" for k, v in changed.items()), targets))
            changes.append(changed)
    # Winners on different targets (a packed op turns ukernels off, an op IREE rebuilds is
    # tuned with fold_batch_matmuls on) are also timed together, on the target with all of
    # those changes, where no two of them set one field differently.
    union: dict[str, Any] = {}
    for changed in changes:
        if any(k in union and union[k] != v for k, v in changed.items()):
            return groups
        union |= changed
    if len(changes) > 1:
        first = base_set.targets[0]
        targets = (first.model_validate(first.model_dump(mode="json") | union), *base_set.targets[1:])
        if all(targets != known for _, known in groups):
            groups.append(("tuned:" + ",".join(f"{k}={v}" for k, v in union.items()), targets))
    return groups


def _npy(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def work(dispatch: Dispatch, view: OpView | None) -> float:
    """A dispatch's share-of-work weight: 2 x the product of ``view``'s loop sizes (its
    flops, for a contraction or convolution) x its launches per call; 0 without a view."""
    if view is None:
        return 0.0
    return 2.0 * math.prod(max(1, s) for s in view.loop_sizes) * max(1, dispatch.launches)


def _flops(dispatch: Dispatch) -> float:
    return work(dispatch, dispatch.graph_op or dispatch.root)


@contextmanager
def tuning_session(executor: Executor | None, cache: TuneCache | None, progress: Progress) -> Iterator[tuple[Executor, TuneCache]]:
    """The executor and cache of one tuning: those given, else a local pool and the default
    cache, which are closed at the end (with ``progress``)."""
    own_executor, own_cache = executor is None, cache is None
    running = executor or LocalExecutor()
    store = cache or TuneCache()
    try:
        yield running, store
    finally:
        progress.close()
        if own_executor:
            running.close()
        if own_cache:
            store.close()


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
    total = (sum(by_time.values()) if by_time else sum(_flops(d) for d in ops.dispatches)) or 1.0

    def _share(d: Dispatch) -> float:
        return (by_time.get(d.name, 0.0) if by_time else _flops(d)) / total

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


def _rebuilt(job: OpJob) -> bool:
    """Whether ``job``'s op is tuned and IREE rebuilds it before codegen
    (:func:`tdsl.strategies.cpu.space.restructured`)."""
    ready = cpu_spaces()
    d = job.dispatch
    return not job.skipped and d is not None and d.graph_op is not None and d.root is not None and ready.restructured(d.graph_op, d.root)


def rewritten_convolution(original: Dispatch, ops: ProgramOps) -> Dispatch | None:
    """The dispatch of ``ops`` (a listing under a target whose conv path rewrites
    convolutions, such as ``channels_last_convs``) whose graph-level op is ``original``'s
    convolution in its rewritten layout: the same sizes in every loop role, the same strides
    and dilations, a convolution at codegen too (not the transpose the rewrite adds before
    it), with an op-level space. None where there is not exactly one."""
    ready = cpu_spaces()
    view = original.graph_op
    assert view is not None

    def signature(v: OpView) -> tuple[Any, ...]:
        return (tuple(sorted((role, tuple(v.sizes(role))) for role in v.roles)), v.strides, v.dilations, tuple(o.element for o in v.operands))

    found = [
        d for d in ops.dispatches
        if d.graph_op is not None and d.graph_matcher is not None and d.root is not None and d.root.kind == "convolution"
        and d.graph_op.maps != view.maps and signature(d.graph_op) == signature(view) and not ready.convolution_tunable(d.graph_op, d.pipeline)
    ]
    return found[0] if len({python_source(d.graph_matcher) for d in found if d.graph_matcher is not None}) == 1 else None


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
        if not _rebuilt(job):
            continue
        assert job.dispatch is not None and job.dispatch.codegen_matcher is not None
        found = by_root.get(python_source(job.dispatch.codegen_matcher), [])
        same = [d for d in found if d.name == job.dispatch.name] or found
        for d in same:
            if d.graph_op is not None and d.graph_matcher is not None and d.root is not None and not ready.restructured(d.graph_op, d.root) and not ready.tunable(d.graph_op):
                job.folded = d
                break


def tune(
    payload: Path | str | Program,
    *,
    options: TuneOptions = TuneOptions(),
    executor: Executor | None = None,
    cache: TuneCache | None = None,
    progress: Progress = NO_PROGRESS,
    report: Callable[[str], None] = lambda line: None,
    space: Space | None = None,
) -> TuneResult:
    """Tunes ``payload`` (an ``.onnx`` model or ``.mlir`` program) for this CPU; see the
    module docstring. ``report`` receives one line per stage (best so far). With ``space``
    (a user's set with knobs, for this CPU), that space is searched as one job instead of
    the ready op-level spaces: each candidate set is built as it is and timed against the
    program stage's fastest point, then in the model pass against IREE's paths."""
    started = time.monotonic()
    program = payload if isinstance(payload, Program) else load_program(payload)
    check_runnable(program)
    built = externalize_weights(program)  # candidates build and run with the weights in an archive
    interrupted = False
    jobs: list[OpJob] = []
    with tuning_session(executor, cache, progress) as (executor, cache):
        tuner = Tuner(built, options, executor, cache, progress)
        isa = host_isa(tuner.machine)
        listing = tuner.listing(CpuTarget())
        has_convs = any(d.graph_op is not None and d.graph_op.kind == "convolution" for d in listing.dispatches)
        share_basis, share_note = "flops", ""
        program_variants: list[Variant] = []
        base: Variant | None = None
        final: list[Variant] = []
        chosen: Variant | None = None
        margin = 0.0
        try:
            contractions = any(d.graph_op is not None and d.graph_op.kind == "contraction" for d in listing.dispatches)
            program_variants, base = tuner.program_stage(CpuTarget(), has_convs, isa, contractions)
            report(f"program: fastest {base.label} ({(base.median or 0) * 1e3:.3f} ms)")
            times: dict[str, float] | None = None
            if space is None:
                # The jobs, by their share of IREE default's time (the listing's dispatches
                # are IREE default's); by flops where it cannot be profiled.
                try:
                    profile = tuner.dispatch_times(next(v for v in program_variants if v.label == IREE_DEFAULT))
                    times = {name: d.seconds for name, d in profile.items()}
                    listing = with_measured_launches(listing, profile)
                    share_basis = "time"
                except TdslError as err:
                    share_note = f"no per-dispatch profile of {IREE_DEFAULT} ({err}); shares are of the flops"
                    report(share_note)
            jobs = op_jobs(listing, options.ops, times) if space is None else [OpJob(name="space", dispatch=None, share=1.0, space=space)]
            if any(_rebuilt(job) for job in jobs):
                fold_rebuilt(jobs, tuner.listing(CpuTarget(fold_batch_matmuls=True)))
            tunable_jobs = [j for j in jobs if not j.skipped]
            progress.expect("tune", len(tunable_jobs))
            for job in tunable_jobs:
                progress.begin("tune", f"{job.name} {job.what}")
                if job.dispatch is None and job.space is not None:
                    tuner.search(job, job.space, base, options.budget, lambda c: (c.strategies, c.strategies.rules))
                else:
                    tuner.op_stage(job, base, isa, options.budget)
                progress.advance("tune")
                gain = job.gain if job.winner else None
                report(f"{job.name}: " + (job.skipped if job.skipped else f"{job.winner.label} {gain:.2f}x over {base.label}" if job.winner and gain else f"no candidate beat {base.label} by more than {job.noise:.1%}"))
        except (KeyboardInterrupt, _Stop) as stop:
            interrupted = isinstance(stop, KeyboardInterrupt)
            report("interrupted: emitting what was measured" if interrupted else "time budget spent: emitting what was measured")
        if base is None:
            raise TuneFailed("interrupted before the baselines were measured: nothing to emit")
        try:
            final, chosen, margin = tuner.model_stage(program_variants, base, jobs)
        except (KeyboardInterrupt, _Stop):
            interrupted = True
            final, chosen, margin = program_variants, base, 0.0
        tuned = chosen.strategies or tuned_set([CpuTarget()])
        numerics: dict[str, Any] = {"checked": False}
        if options.check_numerics and not _is_iree_default(tuned):
            reference = next((v for v in final if v.vmfb is not None), None)
            iree_best = _better_iree(final, reference) if reference is not None else None
            # IREE's faster path, unless that is the build whose outputs are checked.
            default = next((v for v in final if v.label == IREE_DEFAULT), Variant(IREE_DEFAULT, None))
            fallback = iree_best if iree_best is not None and iree_best is not chosen else default
            tuned, numerics = _checked(program, tuned, options, cache, tuner._key(tuned), fallback)
            if numerics.get("fell_back"):
                numerics["instead_of"] = chosen.label
                chosen = fallback
        return TuneResult(
            payload=str(program.source),
            target="cpu",
            machine=tuner.machine,
            options=options,
            tuned=tuned,
            program=program_variants,
            jobs=jobs,
            final=final,
            chosen=chosen.label,
            noise=margin,
            numerics=numerics,
            interrupted=interrupted,
            seconds=time.monotonic() - started,
            cache_stats=cache.stats(),
            share_basis=share_basis,
            share_note=share_note,
        )


def _is_iree_default(strategies: StrategySet) -> bool:
    """True for a set without rules whose target is IREE's own default for its CPU (nothing
    to check: it is the numerics reference)."""
    target = strategies.targets[0]
    return not strategies.rules and isinstance(target, CpuTarget) and target == target.baseline()


def _checked(
    program: Program, tuned: StrategySet, options: TuneOptions, cache: TuneCache, key: ArtifactKey, fallback: Variant
) -> tuple[StrategySet, dict[str, Any]]:
    """``tuned`` if its outputs match IREE default's within tolerance, else ``tuned`` without
    the rules whose outputs differ (each checked alone with the target); where the target's
    own knobs (a program-level winner: ukernels, im2col, channels-last) give outputs that
    differ, ``fallback``'s set (IREE's faster path) with ``fell_back`` set. With the verdict."""
    from ..iree.numerics import run

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
        return tuned_set(tuned.targets, kept), verdict | {"checked": True, "dropped": [r.strategy.name for r in dropped]}
    back = fallback.strategies or tuned_set([CpuTarget()])
    knobs = ", ".join(f"{k}={v}" for k, v in tuned.targets[0].model_dump(exclude_defaults=True).items() if k != "name") or "the target"
    return back, verdict | {"checked": True, "dropped": [*(r.strategy.name for r in tuned.rules), f"program knobs {knobs}"], "fell_back": fallback.label}


def _verdict(run: Any, program: Program, strategies: StrategySet, options: TuneOptions) -> dict[str, Any]:
    report = run(program, strategies, "cpu", check=False, timeout_s=options.timeout_s, memory_gb=options.memory_gb, extra_flags=options.extra_flags)
    data = report.to_json()
    comparisons = [
        {"function": f["function"], **{k: c.get(k) for k in ("reference", "result", "max_abs_error", "max_rel_error", "tolerance", "tolerance_kind", "ok")}}
        for f in data.get("functions", [])
        for c in f.get("comparisons", [])
    ]
    return {"ok": bool(report.ok), "reference": IREE_DEFAULT, "comparisons": comparisons}


def host_isa(machine: dict[str, Any]) -> Isa:
    """The ISA of the runner's ``machine`` (as :meth:`Executor.machines` describes it), else
    of this one."""
    found = machine.get("isa")
    return cast(Isa, found) if found in get_args(Isa) else detect_isa()
