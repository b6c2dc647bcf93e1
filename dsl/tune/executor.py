"""Where ``tdsl tune`` builds and times candidates: builders and runners, local or on Ray.

A :class:`BuildJob` and a :class:`SampleJob` carry everything as bytes (payload, strategy
set as plain data, module, ``.npy`` inputs), so a remote node needs no shared filesystem,
only tdsl installed. :func:`build` and :func:`sample` are the pure, picklable units of
work; they never raise for a bad candidate: a failure is a one-line ``error`` in the result.

An :class:`Executor` builds in parallel and times rounds of samples on one runner (one
machine), each round side by side (:func:`sample_round`: its modules' calls interleaved in
one process), so the ratios inside a round are comparable.
A :class:`Builder` builds, a :class:`Runner` times; an :class:`Executor` is both.
:class:`LocalExecutor` builds in a process pool and times in this process;
:class:`~tdsl.tune.ray_executor.RayExecutor` builds as Ray tasks and times on one Ray actor
per node (optional dependency: ``pip install 'tdsl[ray]'``).
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import hashlib
import multiprocessing
import os
import shutil
import signal
import subprocess
import tempfile
import time
import zlib
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Callable, Iterable, Protocol, Sequence

from ..compiler.compile import compile
from ..compiler.dispatches import short_pipeline
from ..compiler.options import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S
from ..compiler.report import CompileReport
from ..errors import ArgumentError, TdslError
from ..measure.machine import Machine, machine
from ..measure.timing import ALLOCATORS, benchmark_command, benchmark_env, benchmark_seconds, time_round
from ..programs.program import ParameterArchive
from ..sets.strategy_set import StrategySet
from .cache_keys import BuildSummary

SAMPLE_CACHE_BYTES = 2 << 30
"""Bytes of modules and inputs :func:`sample` keeps on disk per process (least recently
used files beyond it are deleted; the current job's files never are)."""
REPRODUCIBLE_FLAGS = ("--iree-vm-bytecode-module-strip-source-map=true", "--iree-llvmcpu-debug-symbols=false")
"""Extra flags that make a build's bytes depend on the payload and strategies only: without
them the module embeds the paths of the build's temporary files (source map, DWARF), so
two builds of one candidate differ. With them equal modules have equal digests."""
WORKER_STOP_S = 5.0
"""Seconds a build worker gets to clean up after SIGTERM before it is killed."""


@dataclass(frozen=True)
class BuildJob:
    """One candidate to compile: the payload's bytes, the strategy set as plain data
    (:func:`tdsl.sets.loader.to_data`; None: IREE's default pipeline for ``target``)."""

    key: str
    payload_name: str
    payload: bytes
    strategies: dict[str, object] | None
    target: str
    extra_flags: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_gb: float = DEFAULT_MEMORY_GB
    serial_loading: bool = True
    """As in :func:`tdsl.compile`."""


@dataclass(frozen=True)
class BuildResult:
    """The module of one :class:`BuildJob` (None on failure, then ``error`` is one line),
    the wall time of the build and a small JSON-able summary of its compile report."""

    key: str
    vmfb: bytes | None
    error: str
    seconds: float
    report: BuildSummary
    lasting: bool = True
    """False where the build worker died or raised (:func:`failed_build`): that says nothing
    of the candidate, so the tuner does not cache it and a rerun builds it again."""

    @property
    def ok(self) -> bool:
        return self.vmfb is not None and not self.error


@dataclass(frozen=True)
class SampleJob:
    """One timing of ``function`` in a module; ``inputs`` are ``.npy`` file contents in
    argument order. A run longer than ``timeout_s`` is killed."""

    key: str
    vmfb: bytes
    function: str
    inputs: tuple[bytes, ...]
    threads: int = 1
    min_time_s: float = 0.1
    allocator: str = "default"
    timeout_s: float = 60.0
    device: str = ""
    """The IREE device URI to time on (e.g. ``hip://0``); empty: this CPU with ``threads``."""
    parameters: tuple[ParameterArchive, ...] = ()
    """The archives the module reads its weights from (on the runner's machine; the Ray
    executor ships them to its runners once each)."""


@dataclass(frozen=True)
class SampleResult:
    """Seconds per call (None on failure or timeout, then ``error`` is one line)."""

    key: str
    seconds: float | None
    error: str

    @property
    def ok(self) -> bool:
        return self.seconds is not None and not self.error


def one_line(err: BaseException) -> str:
    """``err`` as one line: a TdslError's message with its lines joined by ``; ``, any
    other error prefixed with its type (the original cause of a Ray task error)."""
    cause = getattr(err, "cause", None)  # ray.exceptions.RayTaskError wraps the worker's error
    if isinstance(cause, BaseException) and cause is not err:
        err = cause
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = "; ".join(lines)
    if isinstance(err, TdslError):
        return text or type(err).__name__
    if not isinstance(err, OSError) and len(lines) > 1:
        text = lines[0]  # a traceback-like text (Ray's): its head only
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def report_summary(report: CompileReport) -> BuildSummary:
    """What a tuner keeps of a compile report: compile time, executables, launches,
    rules applied and unmatched, dispatches per pipeline, warnings (short form), the
    dispatches of each rule and, on gfx942, each kernel's resources (hsaco metadata)."""
    return {
        "compile_seconds": round(report.result.wall_s, 3),
        "executables": len(report.dispatches),
        "launches": report.launches,
        "launches_at_load": report.launches_at_load,
        "rules": len(report.rules),
        "rules_applied": sum(1 for r in report.rules if r.applied),
        "unmatched": [r.index for r in report.unmatched],
        "pipelines": dict(sorted(Counter(short_pipeline(d.pipeline) for d in report.dispatches).items())),
        "warnings": report.warnings(verbose=False),
        "rule_dispatches": {str(r.index): list(r.dispatches) for r in report.rules},
        "kernels": [k.to_json() for k in report.kernels],
    }


def build(job: BuildJob) -> BuildResult:
    """Compiles ``job`` in a private temporary directory with :func:`tdsl.compile`.
    A TdslError or OSError becomes the result's one-line ``error``; other errors are bugs
    and propagate."""
    start = time.perf_counter()
    try:
        name = Path(job.payload_name).name
        if name in ("", ".", ".."):
            raise ArgumentError(f"payload_name: expected a file name such as model.mlir, received {job.payload_name!r}")
        strategies = None if job.strategies is None else StrategySet.model_validate(job.strategies)
        with tempfile.TemporaryDirectory(prefix="tdsl-build-") as tmp:
            payload = Path(tmp) / name
            payload.write_bytes(job.payload)
            output = Path(tmp) / "module.vmfb"
            report = compile(
                payload,
                strategies,
                job.target,
                output,
                extra_flags=job.extra_flags,
                timeout_s=job.timeout_s,
                memory_gb=job.memory_gb,
                serial_loading=job.serial_loading,
            )
            vmfb = output.read_bytes()
    except (TdslError, OSError) as err:
        return BuildResult(job.key, None, one_line(err), time.perf_counter() - start, {})
    return BuildResult(job.key, vmfb, "", time.perf_counter() - start, report_summary(report))


class _FileCache:
    """Content-addressed files of this process (sha256 of the bytes), least recently used
    deleted beyond :data:`SAMPLE_CACHE_BYTES`; the directory goes when the process exits."""

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._files: OrderedDict[str, Path] = OrderedDict()
        self._bytes = 0

    def find(self, name: str) -> Path | None:
        """The file of ``name`` (sha256 hex digest + suffix) if this cache holds it."""
        found = self._files.get(name)
        if found is not None and found.is_file():
            self._files.move_to_end(name)
            return found
        return None

    def path(self, data: bytes, suffix: str, keep: set[str]) -> Path:
        """A file holding ``data`` (written once); its digest is added to ``keep``."""
        digest = hashlib.sha256(data).hexdigest() + suffix
        keep.add(digest)
        found = self.find(digest)
        if found is not None:
            return found
        if self._dir is None or not self._dir.is_dir():
            self._dir = Path(tempfile.mkdtemp(prefix="tdsl-sample-"))
            self._files.clear()
            self._bytes = 0
            atexit.register(shutil.rmtree, self._dir, True)
        path = self._dir / digest
        staging = path.with_name(path.name + ".part")
        staging.write_bytes(data)
        staging.replace(path)
        self._files[digest] = path
        self._bytes += len(data)
        self._evict(keep)
        return path

    def _evict(self, keep: set[str]) -> None:
        for digest in list(self._files):
            if self._bytes <= SAMPLE_CACHE_BYTES:
                break
            if digest in keep:
                continue
            path = self._files.pop(digest)
            self._bytes -= path.stat().st_size if path.is_file() else 0
            path.unlink(missing_ok=True)

    def clear(self) -> None:
        """Deletes every cached file and the directory."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None
        self._files.clear()
        self._bytes = 0


_CACHE = _FileCache()


def clear_sample_cache() -> None:
    """Deletes the files :func:`sample` cached in this process."""
    _CACHE.clear()


def sample(job: SampleJob) -> SampleResult:
    """Seconds per call of ``job.function`` from one ``iree-benchmark-module`` run
    (warm-up, then calls for ``min_time_s``), killed after ``timeout_s``. The module and
    inputs are written once per process (cached by content). Never raises for a bad
    candidate: the failure is the result's one-line ``error``."""
    if job.threads < 1:
        return SampleResult(job.key, None, f"threads: expected at least 1, received {job.threads}")
    if job.allocator not in ALLOCATORS:
        return SampleResult(job.key, None, f"allocator: expected one of {list(ALLOCATORS)}, received {job.allocator!r}")
    try:
        keep = {a.path.name for a in job.parameters}  # a runner's archives live in the cache too
        module = _CACHE.path(job.vmfb, ".vmfb", keep)
        inputs = [_CACHE.path(data, ".npy", keep) for data in job.inputs]
        for archive in job.parameters:
            if not archive.path.is_file():
                return SampleResult(job.key, None, f"parameter archive {str(archive.path)!r} does not exist")
        command = benchmark_command(
            module,
            job.function,
            inputs,
            job.threads,
            job.min_time_s,
            job.allocator,
            job.device,
            [a.spec for a in job.parameters],
        )
        proc = subprocess.run(
            command, capture_output=True, text=True, errors="replace", timeout=job.timeout_s, env=benchmark_env()
        )
    except subprocess.TimeoutExpired:
        return SampleResult(job.key, None, f"timed out after {job.timeout_s:g} s (iree-benchmark-module killed)")
    except (TdslError, OSError) as err:
        return SampleResult(job.key, None, one_line(err))
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        why = "; ".join(lines[-3:])[-400:] or "no output"
        return SampleResult(job.key, None, f"iree-benchmark-module failed (exit {proc.returncode}): {why}")
    try:
        seconds = benchmark_seconds(proc.stdout)
    except (ValueError, KeyError, IndexError, TypeError) as err:
        return SampleResult(job.key, None, f"iree-benchmark-module printed no timing ({type(err).__name__}: {err})")
    return SampleResult(job.key, seconds, "")


def interleavable(jobs: Sequence[SampleJob]) -> bool:
    """Whether ``jobs`` (one round) can be timed side by side in one process
    (:func:`sample_round`): at least two, on this CPU with IREE's default allocator, all
    calling one function with the same inputs, threads and parameter archives."""
    if len(jobs) < 2:
        return False
    first = jobs[0]
    return all(
        not j.device
        and j.allocator == "default"
        and j.threads >= 1
        and (j.function, j.inputs, j.threads, j.parameters)
        == (first.function, first.inputs, first.threads, first.parameters)
        for j in jobs
    )


def round_seed(jobs: Sequence[SampleJob]) -> int:
    """The seed of a round's call order: from its jobs' keys in order (a rerun repeats it)."""
    return zlib.crc32("/".join(job.key for job in jobs).encode())


def sample_round(jobs: Sequence[SampleJob], seed: int = 0) -> list[SampleResult]:
    """Times one round's ``jobs`` side by side: every module loaded in one runner process
    (:func:`tdsl.measure.timing.time_round`), called in turn, a burst of calls each (the first
    untimed, refilling the caches) in a fresh seeded order each cycle, until every job has
    had ``min_time_s`` of timed calls; each job's result is the median of its timed calls. Jobs of one
    module (the reference first and last) are separate slots, timed as separately as two
    builds. Rounds :func:`interleavable` rules out, and a runner that crashes or hangs (a
    candidate that faults takes its round with it), are timed one process per job
    (:func:`sample`) instead. Never raises for a bad candidate."""
    if not interleavable(jobs):
        return [sample(job) for job in jobs]
    first = jobs[0]
    try:
        keep = {a.path.name for a in first.parameters}
        inputs = [_CACHE.path(data, ".npy", keep) for data in first.inputs]
        modules = [_CACHE.path(job.vmfb, ".vmfb", keep) for job in jobs]
    except (OSError, TdslError):
        return [sample(job) for job in jobs]
    if not all(archive.path.is_file() for archive in first.parameters):
        return [sample(job) for job in jobs]
    slots = time_round(
        modules,
        first.function,
        inputs,
        min_time_s=first.min_time_s,
        timeouts_s=[job.timeout_s for job in jobs],
        threads=first.threads,
        parameters=first.parameters,
        seed=seed,
    )
    if slots is None:
        return [sample(job) for job in jobs]
    return [SampleResult(job.key, slot.seconds, slot.error) for job, slot in zip(jobs, slots)]


def failed_build(job: BuildJob, err: BaseException, seconds: float = 0.0) -> BuildResult:
    """The result of a build whose worker raised or died (``err``)."""
    return BuildResult(job.key, None, f"build worker failed: {one_line(err)}", seconds, {}, lasting=False)


def failed_sample(job: SampleJob, err: BaseException) -> SampleResult:
    """The result of a sample whose runner raised or died (``err``)."""
    return SampleResult(job.key, None, f"benchmark runner failed: {one_line(err)}")


def _ignore(_: object) -> None:
    return None


class Builder(Protocol):
    """Builds candidates in parallel."""

    def build_all(
        self, jobs: Sequence[BuildJob], on_done: Callable[[BuildResult], None] = _ignore
    ) -> list[BuildResult]:
        """Builds ``jobs`` in parallel; ``on_done`` gets each result as it finishes (in the
        caller's thread); returns the results in job order."""
        ...


class Runner(Protocol):
    """Times built candidates on runners (machines), a round at a time."""

    def machines(self) -> list[Machine]:
        """:func:`tdsl.measure.machine.machine` as seen on each runner, by runner index."""
        ...

    def sample_rounds(
        self, rounds: Sequence[Sequence[SampleJob]], runner: int = 0, on_done: Callable[[SampleResult], None] = _ignore
    ) -> list[list[SampleResult]]:
        """Runs the rounds one after another, all on runner ``runner``, each round's jobs
        side by side (:func:`sample_round`: interleaved in one process where they can be,
        else strictly serially in the given order); ``on_done`` gets each result in order."""
        ...


class Executor(Builder, Runner, Protocol):
    """A builder and a runner that share workers: :class:`LocalExecutor` (a process pool,
    timing in this process) or :class:`~tdsl.tune.ray_executor.RayExecutor`."""

    name: str

    def close(self) -> None:
        """Releases the workers and runners."""
        ...

    def __enter__(self) -> "Executor": ...

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None: ...


def _check_runner(runner: int, count: int) -> None:
    if not 0 <= runner < count:
        raise ArgumentError(f"runner: expected 0 to {count - 1} ({count} benchmark runners), received {runner}")


def _worker_init() -> None:
    """A build worker leads its own process group (with its iree-compile), so a terminal's
    Ctrl-C reaches only the parent, which stops the whole group; SIGTERM unwinds the
    build (its temporary directory is removed)."""
    os.setpgrp()

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def _pool_build(work: Callable[[BuildJob], BuildResult], job: BuildJob) -> BuildResult:
    """``work(job)`` in a pool worker. The parent's SIGTERM (SystemExit, raised once the
    build's temporary files are removed) ends the worker rather than letting it take the
    next queued job."""
    try:
        return work(job)
    except SystemExit as stop:
        os._exit(stop.code if isinstance(stop.code, int) else 1)


class LocalExecutor:
    """Builds in a pool of ``workers`` spawned processes; times serially in this process
    (one runner: this machine). KeyboardInterrupt during :meth:`build_all` cancels the
    pending builds and stops the running ones (worker and iree-compile)."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
        self._pool: cf.ProcessPoolExecutor | None = None

    def __enter__(self) -> "LocalExecutor":
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def machines(self) -> list[Machine]:
        return [machine()]

    def _get_pool(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=context, initializer=_worker_init)
        return self._pool

    def build_all(
        self, jobs: Sequence[BuildJob], on_done: Callable[[BuildResult], None] = _ignore
    ) -> list[BuildResult]:
        results: list[BuildResult | None] = [None] * len(jobs)
        if not jobs:
            return []
        pool = self._get_pool()
        index: dict[cf.Future[BuildResult], int] = {}
        started = time.perf_counter()
        try:
            for i, job in enumerate(jobs):
                # `build` is looked up (and pickled by name) here, so tests can swap it.
                index[pool.submit(_pool_build, build, job)] = i
            for future in cf.as_completed(index):
                i = index[future]
                try:
                    result = future.result()
                except Exception as err:  # a worker that died, or a tdsl bug in it
                    result = failed_build(jobs[i], err, time.perf_counter() - started)
                    if isinstance(err, cf.BrokenExecutor) and self._pool is pool:
                        self._pool = None  # the next call starts a fresh pool
                        pool.shutdown(wait=False, cancel_futures=True)
                results[i] = result
                on_done(result)
        except BaseException:
            self._abort(index)
            raise
        return [r for r in results if r is not None]

    def _abort(self, futures: Iterable[cf.Future[BuildResult]]) -> None:
        """Cancels the pending builds, stops the running ones and drops the pool."""
        pool, self._pool = self._pool, None
        for future in futures:
            future.cancel()
        if pool is None:
            return
        processes = list(pool._processes.values()) if pool._processes else []
        pool.shutdown(wait=False, cancel_futures=True)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for process in processes:
                if process.is_alive() and process.pid is not None:
                    try:
                        os.killpg(process.pid, sig)
                    except OSError:  # not yet its own group leader
                        try:
                            os.kill(process.pid, sig)
                        except OSError:
                            pass
            deadline = time.monotonic() + WORKER_STOP_S
            for process in processes:
                process.join(max(0.0, deadline - time.monotonic()))
            if not any(p.is_alive() for p in processes):
                break

    def sample_rounds(
        self, rounds: Sequence[Sequence[SampleJob]], runner: int = 0, on_done: Callable[[SampleResult], None] = _ignore
    ) -> list[list[SampleResult]]:
        _check_runner(runner, 1)
        out: list[list[SampleResult]] = []
        for round_jobs in rounds:
            done = sample_round(round_jobs, round_seed(round_jobs))
            for result in done:
                on_done(result)
            out.append(done)
        return out

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
