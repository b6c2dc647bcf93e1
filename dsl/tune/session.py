"""One tuning's plumbing: the options, the program and its inputs, building through the
executor and the database (cached builds reused), timing in interleaved rounds (cached
samples reused per stage), per-dispatch profiles and op listings, and the time budget.

:class:`TuneSession` is what every stage and both target tuners build and measure with.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..compiler.ops import ProgramOps, list_dispatches
from ..compiler.options import DEFAULT_MEMORY_GB, CompileOptions
from ..compiler.progress import Progress
from ..errors import TdslError
from ..measure.dispatch_profile import DispatchTime
from ..measure.machine import versions
from ..measure.timing import MALLOC_STEADY_STATE
from ..programs.inputs import make_inputs
from ..programs.program import Program
from ..programs.signatures import signatures
from ..sets.loader import to_data
from ..sets.strategy_set import Rule, StrategySet
from ..targets import AmdGpuTarget, CpuTarget
from .cache import TuneCache
from .cache_keys import ArtifactKey, MachineKey, canonical_hash
from .database import Database
from .executor import BuildJob, BuildResult, Executor, LocalExecutor, SampleJob, SampleResult
from .measure import Variant, round_order

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
    """What ``tdsl tune`` does: ``budget`` candidates built per op and space, whatever the
    target (a gfx942 tuning compiles the cost model's best, at most
    :data:`~tdsl.tune.gfx942.COMPILED`; a CPU one builds and times them), or until ``time_s``
    seconds have passed, ``rounds`` interleaved rounds of ``min_time_s`` samples on ``threads``
    threads with ``allocator``, ``finalists`` candidates per op kept after the first round,
    ``ops`` substrings of the dispatch names or shapes to tune (empty: all), ``seed`` for
    sampling and round order."""

    budget: int = 24
    time_s: float | None = None
    rounds: int = 5
    min_time_s: float = 0.05
    threads: int = 1
    """The thread count the tuning is for: every sample of the search runs on it, and each
    op-level candidate gives every thread a workgroup."""
    compare_threads: tuple[int, ...] = ()
    """More thread counts the emitted set is compared at (with IREE's paths and the peers)."""
    peers: bool | tuple[str, ...] = True
    """The runtimes the emitted set is compared with on an ``.onnx`` model
    (:func:`tdsl.measure.peers.choose_peers`)."""
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


class Stop(Exception):
    """The time budget is spent."""


class TuneSession:
    """One tuning's program, options, executor and database (see the module docstring)."""

    def __init__(
        self,
        program: Program,
        options: TuneOptions,
        executor: Executor,
        cache: Database,
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
        self.source_hash = (
            canonical_hash(
                {"program": canonical_hash(self.payload), "parameters": [a.digest for a in program.parameters]}
            )
            if program.parameters
            else canonical_hash(self.payload)
        )
        self.iree_version = versions()["iree-base-compiler"]
        machines = executor.machines()
        self.machine = machines[0]
        self.machine_key = MachineKey(
            str(self.machine["cpu"]),
            str(self.machine["isa"]),
            int(self.machine["cores"] or 0),
            options.device or "local",
        )
        functions = signatures(program)
        if len(functions) != 1:
            raise TuneFailed(
                f"{program.source}: expected a program with one public function, received {len(functions)}"
            )
        self.signature = functions[0]
        self.inputs = tuple(_npy(a) for a in make_inputs(self.signature, seed=0))
        self.setup = canonical_hash(
            {
                "function": self.signature.function,
                "threads": options.threads,
                "allocator": options.allocator,
                "min_time_s": options.min_time_s,
                "device": options.device,
                "inputs": canonical_hash(b"".join(self.inputs)),
                "malloc": MALLOC_STEADY_STATE,
                "sampling": SAMPLING,
            }
        )

    # -- building -----------------------------------------------------------------------

    def key(self, strategies: StrategySet | None) -> ArtifactKey:
        target = strategies.targets[0] if strategies is not None else self.target
        return ArtifactKey(
            iree_version=self.iree_version,
            target=target.name,
            target_flags=" ".join(target.compile_flags()),
            source_hash=self.source_hash,
            candidate_hash=canonical_hash(to_data(strategies)) if strategies is not None else IREE_DEFAULT,
            flags_hash=canonical_hash(
                {"extra_flags": list(self.options.extra_flags), "serial_loading": self.options.serial_loading}
            ),
            schema_version=TUNE_SCHEMA_VERSION,
        )

    def build(self, variants: Sequence[Variant]) -> None:
        """Builds ``variants`` (cached builds reused) in parallel."""
        jobs: list[BuildJob] = []
        keys: dict[str, tuple[Variant, ArtifactKey]] = {}
        for v in variants:
            key = self.key(v.strategies)
            v.artifact, v.key = key, key.digest()
            cached = self.cache.get_build(key)
            if cached is not None:
                v.vmfb, v.build_error, v.build_seconds, v.build_report = (
                    cached.vmfb,
                    cached.error,
                    cached.seconds,
                    cached.report,
                )
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
                stored = list(cached[id(v)])[-rounds * per(v) :]
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
                    timeout_s=max(30.0, 20 * (self.options.min_time_s + 50 * base_time))
                    if v is not reference
                    else 600.0,
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
                    self.cache.add_samples(
                        v.artifact,
                        self.machine_key,
                        setup,
                        [result.seconds],
                        [result.error] if result.seconds is None else None,
                    )
            for v in built:
                v.by_round.append(this_round[id(v)])
            if reference.median:
                base_time = reference.median
            self.check_time()

    def dispatch_times(self, variant: Variant) -> dict[str, DispatchTime]:
        """Seconds and launches per call of each dispatch function of ``variant``'s build in
        back-to-back calls on this machine, about half a second of them (cached per build,
        machine model and setup). Raises :class:`~tdsl.errors.TdslError` (one line) where
        the build or the profile fails."""
        import tempfile

        from ..measure.dispatch_profile import calls_for, dispatch_times

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
            times = dispatch_times(
                vmfb,
                self.signature.function,
                inputs,
                calls_for(variant.median),
                parameters=[a.spec for a in self.program.parameters],
            )
        self.cache.put_profile(variant.artifact, here, self.setup, times)
        return times

    def listing(self, target: CpuTarget) -> ProgramOps:
        """The program's dispatches as ``target`` compiles it (listed once per target)."""
        key = target.model_dump_json()
        if key not in self._listings:
            self._listings[key] = list_dispatches(
                self.program.mlir_path,
                target,
                options=CompileOptions(
                    extra_flags=self.options.extra_flags,
                    timeout_s=self.options.timeout_s,
                    memory_gb=self.options.memory_gb,
                ),
            )
        return self._listings[key]

    def check_time(self) -> None:
        """Raises :class:`Stop` once the options' time budget is spent."""
        limit = self.options.time_s
        if limit is not None and time.monotonic() - self.started > limit:
            raise Stop()


def _npy(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


@contextmanager
def tuning_session(
    executor: Executor | None, cache: Database | None, progress: Progress
) -> Iterator[tuple[Executor, Database]]:
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


def unapplied(variant: Variant) -> list[Rule]:
    """The rules ``variant`` adds (:attr:`Variant.rules`) that its build reports as matching
    nothing (none before it is built)."""
    if variant.strategies is None or not variant.rules:
        return []
    unmatched = set(variant.build_report.get("unmatched", ()))
    return [r for i, r in enumerate(variant.strategies.rules) if i in unmatched and r in variant.rules]
