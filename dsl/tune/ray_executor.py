"""Builds as Ray tasks and benchmark runners as Ray actors, one per node: :class:`RayExecutor`
(optional dependency: ``pip install 'tdsl[ray]'``), an :class:`~tdsl.tune.executor.Executor`
like :class:`~tdsl.tune.executor.LocalExecutor`. A job's bytes travel as Ray objects (a
module or input shared by jobs is put once), so a node needs no shared filesystem, only tdsl
installed."""

from __future__ import annotations

import hashlib
import logging
import socket
import time
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Sequence

from ..errors import ArgumentError
from ..measure.machine import Machine, machine
from ..measure.timing import ROUND_LOAD_S
from ..programs.program import ParameterArchive
from .executor import (
    _CACHE,
    BuildJob,
    BuildResult,
    SampleJob,
    SampleResult,
    _check_runner,
    _ignore,
    build,
    clear_sample_cache,
    failed_build,
    failed_sample,
    one_line,
    round_seed,
    sample,
    sample_round,
)

RAY_MISSING = "RayExecutor needs ray: pip install 'tdsl[ray]'"
ACTOR_START_S = 120.0
"""Seconds the benchmark runners get to start (a fresh worker process per node)."""
CONNECT_S = 10.0
"""Seconds a ``host:port`` Ray address gets to accept a connection."""
RAY_GRACE_S = 60.0
"""Seconds a runner gets beyond a sample's own timeout before it counts as lost."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ArgumentError(RAY_MISSING) from None
    return ray


def _check_reachable(address: str) -> None:
    """A ``host:port`` address must accept a connection (Ray itself retries for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_S).close()
    except OSError as err:
        raise ArgumentError(
            f"no Ray cluster at {address!r}: {one_line(err)} (start one with `ray start --head --port={port}`)"
        ) from None


def build_with(job: BuildJob, payload: bytes) -> BuildResult:
    """:func:`build` of ``job`` with its payload passed apart (a Ray object shared by jobs)."""
    return build(replace(job, payload=payload))


class BenchmarkRunner:
    """The body of a Ray benchmark actor: one per node, it times samples serially.
    Parameter archives arrive as ``(scope, sha256, [object ref])`` (the ref nested, so Ray
    does not fetch it for every call) and are written to this node once each."""

    def machine(self) -> Machine:
        return machine()

    def sample(
        self, job: SampleJob, vmfb: bytes, *inputs: bytes, archives: Sequence[tuple[str, str, list[Any]]] = ()
    ) -> SampleResult:
        try:
            parameters = tuple(
                ParameterArchive(scope, self._archive(digest, refs[0]), digest) for scope, digest, refs in archives
            )
        except Exception as err:  # the object store lost it, the disk is full
            return failed_sample(job, err)
        return sample(replace(job, vmfb=vmfb, inputs=tuple(inputs), parameters=parameters))

    def sample_round(
        self,
        jobs: Sequence[SampleJob],
        slots: Sequence[int],
        seed: int,
        *data: bytes,
        archives: Sequence[tuple[str, str, list[Any]]] = (),
    ) -> list[SampleResult]:
        """:func:`sample_round` of ``jobs`` (sent without their bytes): job ``i``'s module is
        ``data[slots[i]]``; the inputs, shared by the round, follow the modules."""
        try:
            parameters = tuple(
                ParameterArchive(scope, self._archive(digest, refs[0]), digest) for scope, digest, refs in archives
            )
        except Exception as err:  # the object store lost it, the disk is full
            return [failed_sample(job, err) for job in jobs]
        inputs = tuple(data[max(slots) + 1 :]) if slots else ()
        return sample_round(
            [replace(job, vmfb=data[slot], inputs=inputs, parameters=parameters) for job, slot in zip(jobs, slots)],
            seed,
        )

    @staticmethod
    def _archive(digest: str, ref: Any) -> Path:
        found = _CACHE.find(digest + ".irpa")
        if found is not None:
            return found
        import ray

        return _CACHE.path(ray.get(ref), ".irpa", set())

    def clear(self) -> None:
        clear_sample_cache()


class RayExecutor:
    """Builds as Ray tasks (the module comes back through the object store) and times on
    one benchmark actor per alive node (the driver's node first), up to ``runners``.

    Each actor holds ``runner_cpus`` CPUs (so builds leave that much of its node free)
    and ``num_gpus_per_runner`` GPUs; only nodes with those resources get one. Each build
    task takes ``build_cpus`` CPUs. Requires ``ray`` (``pip install 'tdsl[ray]'``) and
    tdsl importable on every node. Connects with ``ray.init(address)``; :meth:`close`
    shuts Ray down only if this executor started the connection."""

    name = "ray"

    def __init__(
        self,
        address: str = "auto",
        runners: int | None = None,
        num_gpus_per_runner: float = 0,
        *,
        runner_cpus: float = 1.0,
        build_cpus: float = 1.0,
    ) -> None:
        ray = _import_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if runners is not None and runners < 1:
            raise ArgumentError(f"runners: expected at least 1, received {runners}")
        self._ray = ray
        self._owns = not ray.is_initialized()
        _check_reachable(address)
        try:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise ArgumentError(
                f"no Ray cluster at {address!r}: {one_line(err)} (start one with `ray start --head`)"
            ) from None
        self._actors: list[Any] = []
        self._archive_refs: dict[str, Any] = {}
        self.node_ids: list[str] = []
        """The Ray node of each runner, by runner index."""
        try:
            here = ray.get_runtime_context().get_node_id()
            alive = [n for n in ray.nodes() if n.get("Alive")]
            alive.sort(key=lambda n: (n["NodeID"] != here, n.get("NodeManagerAddress", ""), n["NodeID"]))
            fit = [
                n
                for n in alive
                if n["Resources"].get("CPU", 0) >= runner_cpus and n["Resources"].get("GPU", 0) >= num_gpus_per_runner
            ]
            if not fit:
                raise ArgumentError(
                    f"no alive Ray node has {runner_cpus:g} CPU and {num_gpus_per_runner:g} GPU for a benchmark runner "
                    f"({len(alive)} nodes alive)"
                )
            fit = fit[: runners if runners is not None else len(fit)]
            actor_class = ray.remote(BenchmarkRunner)
            for node in fit:
                self._actors.append(
                    actor_class.options(
                        num_cpus=runner_cpus,
                        num_gpus=num_gpus_per_runner,
                        max_concurrency=1,
                        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
                    ).remote()
                )
                self.node_ids.append(node["NodeID"])
            try:
                self._machines: list[Machine] = ray.get(
                    [a.machine.remote() for a in self._actors], timeout=ACTOR_START_S
                )
            except Exception as err:
                raise ArgumentError(
                    f"the Ray benchmark runners did not start ({one_line(err)}); is tdsl installed on every node?"
                ) from None
            total_cpus = sum(n["Resources"].get("CPU", 0) for n in alive)
            if total_cpus - runner_cpus * len(self._actors) < build_cpus:
                raise ArgumentError(
                    f"the Ray cluster has {total_cpus:g} CPUs and its {len(self._actors)} benchmark runners hold "
                    f"{runner_cpus:g} each: none left for a build of {build_cpus:g} CPU (start nodes with more "
                    "--num-cpus, or pass runner_cpus=0)"
                )
        except BaseException:
            self.close()
            raise
        self._build = ray.remote(build_with).options(num_cpus=build_cpus)

    def __enter__(self) -> "RayExecutor":
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def machines(self) -> list[Machine]:
        return [Machine(**m) for m in self._machines]

    def build_all(
        self, jobs: Sequence[BuildJob], on_done: Callable[[BuildResult], None] = _ignore
    ) -> list[BuildResult]:
        ray = self._ray
        results: list[BuildResult | None] = [None] * len(jobs)
        payloads: dict[bytes, Any] = {}
        index: dict[Any, int] = {}
        started = time.perf_counter()
        try:
            for i, job in enumerate(jobs):
                digest = hashlib.sha256(job.payload).digest()
                if digest not in payloads:
                    payloads[digest] = ray.put(job.payload)
                index[self._build.remote(replace(job, payload=b""), payloads[digest])] = i
            pending = list(index)
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    i = index[ref]
                    try:
                        result = ray.get(ref)
                    except Exception as err:  # a task that raised, or a lost worker or node
                        result = failed_build(jobs[i], err, time.perf_counter() - started)
                    results[i] = result
                    on_done(result)
        except BaseException:
            for ref in index:  # queued tasks are dropped; running ones lose their worker (and its iree-compile)
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished, or the cluster is gone
                    pass
            raise
        return [r for r in results if r is not None]

    def _archive_ref(self, archive: ParameterArchive) -> Any:
        """The object-store copy of ``archive`` (read and put once per executor)."""
        found = self._archive_refs.get(archive.digest)
        if found is None:
            found = self._archive_refs[archive.digest] = self._ray.put(archive.path.read_bytes())
        return found

    def sample_rounds(
        self, rounds: Sequence[Sequence[SampleJob]], runner: int = 0, on_done: Callable[[SampleResult], None] = _ignore
    ) -> list[list[SampleResult]]:
        ray = self._ray
        _check_runner(runner, len(self._actors))
        actor = self._actors[runner]
        objects: dict[bytes, Any] = {}

        def ref(data: bytes) -> Any:
            digest = hashlib.sha256(data).digest()
            if digest not in objects:
                objects[digest] = ray.put(data)
            return objects[digest]

        # A sync actor runs one caller's calls one at a time, in submission order: one call
        # per round, its modules and inputs passed once each.
        submitted = []
        for round_jobs in rounds:
            modules: list[bytes] = []
            slots = []
            for job in round_jobs:
                if job.vmfb not in modules:
                    modules.append(job.vmfb)
                slots.append(modules.index(job.vmfb))
            shared = round_jobs[0] if round_jobs else None
            inputs = [ref(x) for x in shared.inputs] if shared else []
            archives = [(a.scope, a.digest, [self._archive_ref(a)]) for a in shared.parameters] if shared else []
            if shared and any((j.inputs, j.parameters) != (shared.inputs, shared.parameters) for j in round_jobs):
                # Jobs of different inputs are not one round to interleave: one call each.
                calls = [
                    actor.sample.remote(
                        replace(job, vmfb=b"", inputs=(), parameters=()),
                        ref(job.vmfb),
                        *(ref(x) for x in job.inputs),
                        archives=[(a.scope, a.digest, [self._archive_ref(a)]) for a in job.parameters],
                    )
                    for job in round_jobs
                ]
                submitted.append((round_jobs, calls, False))
            else:
                stripped = [replace(job, vmfb=b"", inputs=(), parameters=()) for job in round_jobs]
                call = actor.sample_round.remote(
                    stripped, slots, round_seed(round_jobs), *(ref(m) for m in modules), *inputs, archives=archives
                )
                submitted.append((round_jobs, [call], True))
        out: list[list[SampleResult]] = []
        try:
            for round_jobs, calls, whole in submitted:
                wait = sum(job.timeout_s for job in round_jobs) + ROUND_LOAD_S + RAY_GRACE_S
                try:
                    got = ray.get(calls, timeout=wait)
                    done = got[0] if whole else got
                except Exception as err:  # a lost runner, or one stuck past the timeout
                    done = [failed_sample(job, err) for job in round_jobs]
                for result in done:
                    on_done(result)
                out.append(list(done))
        except BaseException:
            for _, calls, _whole in submitted:
                for result_ref in calls:
                    try:
                        ray.cancel(result_ref)
                    except Exception:
                        pass
            raise
        return out

    def close(self) -> None:
        ray = self._ray
        actors, self._actors = self._actors, []
        if actors and ray.is_initialized():
            try:
                ray.get([a.clear.remote() for a in actors], timeout=10)
            except Exception:  # a runner already gone: nothing of it to clear
                pass
            for actor in actors:
                try:
                    ray.kill(actor)
                except Exception:
                    pass
        if self._owns and ray.is_initialized():
            ray.shutdown()
        self._owns = False
