"""tdsl tune's builders and runners: local process pool and a real two-node Ray cluster."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
import tdsl.measure.timing as timing
import tdsl.tune.executor as executor
from tdsl.errors import ArgumentError
from tdsl.measure.machine import machine
from tdsl.programs.program import ParameterArchive
from tdsl.sets.loader import load, to_data
from tdsl.tune.executor import (
    REPRODUCIBLE_FLAGS,
    BuildJob,
    BuildResult,
    LocalExecutor,
    SampleJob,
    SampleResult,
    build,
    sample,
)
from tdsl.tune.ray_executor import RayExecutor
from weighted import write_weighted

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack" / "strategy.py"

MATMUL = b"""func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
"""
BROKEN = b"func.func @main(%a: tensor<8x16xf32>) -> {\n"


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _inputs() -> tuple[bytes, ...]:
    rng = np.random.default_rng(0)
    return (_npy(rng.standard_normal((8, 16), dtype=np.float32)), _npy(rng.standard_normal((16, 8), dtype=np.float32)))


def _jobs() -> list[BuildJob]:
    """IREE default, a strategy set (matmul_pack) and a payload that does not parse."""
    return [
        BuildJob("default", "model.mlir", MATMUL, None, "cpu", REPRODUCIBLE_FLAGS),
        BuildJob("pack", "model.mlir", MATMUL, to_data(load(PACK)), "cpu", REPRODUCIBLE_FLAGS),
        BuildJob("broken", "model.mlir", BROKEN, None, "cpu"),
    ]


def _check_builds(results: list[BuildResult], done: list[BuildResult]) -> None:
    assert [r.key for r in results] == ["default", "pack", "broken"]
    assert sorted(r.key for r in done) == ["broken", "default", "pack"]
    default, pack, broken = results
    for ok in (default, pack):
        assert ok.error == "" and ok.vmfb and ok.seconds > 0, ok.error
        assert ok.report["executables"] >= 1 and ok.report["launches"] >= 1
    assert default.report["rules"] == 0
    assert pack.report["rules_applied"] == 1 and "Mmt4dTilingExpert" in pack.report["pipelines"]
    assert broken.vmfb is None and broken.report == {}
    assert broken.error.startswith("iree-compile failed") and "\n" not in broken.error


def _sample_job(vmfb: bytes, key: str = "default", **kw: float) -> SampleJob:
    return SampleJob(
        key, vmfb, "main", _inputs(), min_time_s=kw.get("min_time_s", 0.02), timeout_s=kw.get("timeout_s", 60.0)
    )


@pytest.mark.compile
def test_local_executor_builds_in_parallel_and_samples_serially() -> None:
    done: list[BuildResult] = []
    with LocalExecutor(workers=2) as ex:
        assert ex.name == "local" and ex.machines() == [machine()]
        results = ex.build_all(_jobs(), done.append)
        _check_builds(results, done)
        default, pack, _ = results
        assert default.vmfb is not None and pack.vmfb is not None
        seen: list[SampleResult] = []
        rounds = ex.sample_rounds(
            [[_sample_job(default.vmfb), _sample_job(pack.vmfb, "pack")], [_sample_job(pack.vmfb, "pack")]],
            on_done=seen.append,
        )
        assert [[r.key for r in round_] for round_ in rounds] == [["default", "pack"], ["pack"]]
        assert [r.key for r in seen] == ["default", "pack", "pack"]
        assert all(r.error == "" and r.seconds is not None and r.seconds > 0 for round_ in rounds for r in round_)
        with pytest.raises(ArgumentError, match="runner: expected 0 to 0"):
            ex.sample_rounds([], runner=1)


@pytest.mark.compile
def test_build_reports_failures_in_one_line() -> None:
    bad_set = build(BuildJob("k", "model.mlir", MATMUL, {"name": "x", "rules": "no"}, "cpu"))
    assert bad_set.vmfb is None and bad_set.error.startswith("invalid strategy") and "\n" not in bad_set.error
    no_target = build(BuildJob("k", "model.mlir", MATMUL, None, "tpu"))
    assert no_target.vmfb is None and "--target 'tpu'" in no_target.error
    no_name = build(BuildJob("k", "", MATMUL, None, "cpu"))
    assert no_name.vmfb is None and no_name.error.startswith("payload_name: expected a file name")


@pytest.mark.compile
def test_builds_with_reproducible_flags_are_identical() -> None:
    first = build(BuildJob("a", "model.mlir", MATMUL, None, "cpu", REPRODUCIBLE_FLAGS))
    second = build(BuildJob("b", "other.mlir", MATMUL, None, "cpu", REPRODUCIBLE_FLAGS))
    plain = build(BuildJob("c", "model.mlir", MATMUL, None, "cpu"))
    assert first.vmfb is not None and first.vmfb == second.vmfb
    assert plain.vmfb is not None and plain.vmfb != first.vmfb  # it embeds its temporary paths


@pytest.mark.compile
def test_sample_failures_and_timeout_are_one_line() -> None:
    vmfb = build(BuildJob("a", "model.mlir", MATMUL, None, "cpu")).vmfb
    assert vmfb is not None
    start = time.monotonic()
    slow = sample(_sample_job(vmfb, min_time_s=60.0, timeout_s=1.0))
    assert slow.seconds is None and slow.error == "timed out after 1 s (iree-benchmark-module killed)"
    assert time.monotonic() - start < 10
    missing = sample(SampleJob("k", vmfb, "nope", _inputs(), min_time_s=0.01))
    assert missing.seconds is None and "no function `nope`" in missing.error and "\n" not in missing.error
    junk = sample(SampleJob("k", b"not a module", "main", _inputs(), min_time_s=0.01))
    assert junk.seconds is None and junk.error.startswith("iree-benchmark-module failed (exit 1)")
    assert sample(SampleJob("k", vmfb, "main", _inputs(), allocator="arena")).error.startswith(
        "allocator: expected one of"
    )


@pytest.mark.compile
def test_sample_writes_a_module_once_per_process() -> None:
    vmfb = build(BuildJob("a", "model.mlir", MATMUL, None, "cpu")).vmfb
    assert vmfb is not None
    executor.clear_sample_cache()
    assert sample(_sample_job(vmfb)).ok
    cached = list(executor._CACHE._files.values())
    stamps = {p: p.stat().st_mtime_ns for p in cached}
    assert len(cached) == 3 and sum(p.suffix == ".vmfb" for p in cached) == 1
    assert sample(_sample_job(vmfb)).ok
    assert list(executor._CACHE._files.values()) == cached
    assert {p: p.stat().st_mtime_ns for p in cached} == stamps
    executor.clear_sample_cache()
    assert not any(p.exists() for p in cached)


HEAVY = b"""func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> (tensor<8x8xf32>, tensor<384x384xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %empty = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %x = tensor.extract %a[%c0, %c0] : tensor<8x16xf32>
  %e = tensor.empty() : tensor<384x384xf32>
  %big = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<384x384xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %n = arith.index_cast %k : index to i32
    %f = arith.sitofp %n : i32 to f32
    %v = arith.mulf %f, %x : f32
    linalg.yield %v : f32
  } -> tensor<384x384xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e : tensor<384x384xf32>) -> tensor<384x384xf32>
  %s = linalg.matmul ins(%big, %big : tensor<384x384xf32>, tensor<384x384xf32>) outs(%acc2 : tensor<384x384xf32>) -> tensor<384x384xf32>
  return %r, %s : tensor<8x8xf32>, tensor<384x384xf32>
}
"""
"""MATMUL's function plus a 384^3 matmul of data it reads at run time: the same inputs, about
a thousand times the work."""


@pytest.fixture(scope="module")
def small_and_heavy() -> tuple[bytes, bytes]:
    small = build(BuildJob("small", "model.mlir", MATMUL, None, "cpu")).vmfb
    heavy = build(BuildJob("heavy", "model.mlir", HEAVY, None, "cpu")).vmfb
    assert small is not None and heavy is not None
    return small, heavy


def _no_process_per_job(job: SampleJob) -> SampleResult:
    raise AssertionError(f"{job.key} was timed in a process of its own")


@pytest.mark.compile
def test_a_round_is_timed_side_by_side_in_one_process(
    small_and_heavy: tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    small, heavy = small_and_heavy
    monkeypatch.setattr(executor, "sample", _no_process_per_job)
    first, big, last = executor.sample_round(
        [_sample_job(small, "ref"), _sample_job(heavy, "heavy"), _sample_job(small, "ref")]
    )
    assert [r.key for r in (first, big, last)] == ["ref", "heavy", "ref"]
    assert first.ok and big.ok and last.ok, (first.error, big.error, last.error)
    assert first.seconds and last.seconds and big.seconds
    assert big.seconds > 20 * max(first.seconds, last.seconds)
    # A module the runtime rejects and one past its timeout fail alone, in one line each.
    junk, slow, ref = executor.sample_round(
        [_sample_job(b"not a module", "junk"), _sample_job(heavy, "slow", timeout_s=1e-6), _sample_job(small, "ref")]
    )
    assert junk.seconds is None and junk.error.startswith("loading failed:") and "\n" not in junk.error
    assert slow.seconds is None and slow.error.startswith("timed out after") and "(limit 1e-06 s)" in slow.error
    assert ref.ok, ref.error


@pytest.mark.compile
def test_rounds_that_cannot_share_a_process_are_timed_one_process_per_job(
    small_and_heavy: tuple[bytes, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, heavy = small_and_heavy
    alone: list[str] = []

    def counted(job: SampleJob) -> SampleResult:
        alone.append(job.key)
        return sample(job)

    monkeypatch.setattr(executor, "sample", counted)
    caching = [
        replace(_sample_job(small, "a"), allocator="caching"),
        replace(_sample_job(heavy, "b"), allocator="caching"),
    ]
    assert all(r.ok for r in executor.sample_round(caching)) and alone == ["a", "b"]
    alone.clear()
    assert executor.sample_round([_sample_job(small, "one")])[0].ok and alone == ["one"]
    alone.clear()
    # A runner that dies (a candidate that faults takes its process down) hands the round on.
    crashing = tmp_path / "crash.py"
    crashing.write_text("import os\nos.abort()\n")
    monkeypatch.setattr(timing, "ROUND_RUNNER", crashing)
    results = executor.sample_round([_sample_job(small, "x"), _sample_job(heavy, "y")])
    assert alone == ["x", "y"] and all(r.ok for r in results)


def _weighted(directory: Path) -> tuple[bytes, ParameterArchive, tuple[bytes, ...]]:
    """A module that reads its weight from a parameter archive, that archive and an input."""
    payload, path, _ = write_weighted(directory)
    vmfb = build(BuildJob("weighted", "model.mlir", payload.read_bytes(), None, "cpu")).vmfb
    assert vmfb is not None
    x = np.random.default_rng(0).standard_normal((48, 64), dtype=np.float32)
    return vmfb, ParameterArchive("model", path, hashlib.sha256(path.read_bytes()).hexdigest()), (_npy(x),)


@pytest.mark.compile
def test_sample_reads_the_weights_from_the_jobs_parameter_archives(tmp_path: Path) -> None:
    vmfb, archive, inputs = _weighted(tmp_path)
    job = SampleJob("w", vmfb, "mm", inputs, min_time_s=0.01, parameters=(archive,))
    timed = sample(job)
    assert timed.ok and timed.seconds is not None and timed.seconds > 0, timed.error
    without = sample(replace(job, parameters=()))
    assert (
        without.seconds is None
        and without.error.startswith("iree-benchmark-module failed")
        and "\n" not in without.error
    )
    gone = sample(replace(job, parameters=(replace(archive, path=tmp_path / "gone.irpa"),)))
    assert gone.seconds is None and gone.error == f"parameter archive {str(tmp_path / 'gone.irpa')!r} does not exist"


@pytest.mark.compile
def test_a_runners_cached_archive_is_not_evicted_by_the_samples_that_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ray runner keeps the archives it receives in its file cache; writing the module of
    a sample that reads one must not evict it, even past the cache's size."""
    vmfb, archive, inputs = _weighted(tmp_path)
    executor.clear_sample_cache()
    monkeypatch.setattr(executor, "SAMPLE_CACHE_BYTES", 1)
    cached = executor._CACHE.path(archive.path.read_bytes(), ".irpa", set())
    job = SampleJob("w", vmfb, "mm", inputs, min_time_s=0.01, parameters=(replace(archive, path=cached),))
    timed = sample(job)
    assert timed.ok, timed.error
    assert cached.is_file() and executor._CACHE.find(archive.digest + ".irpa") == cached
    executor.clear_sample_cache()


def _sleepy_build(job: BuildJob) -> BuildResult:
    """Stands in for a long compile in a pool worker: a child process (like iree-compile)
    and a marker ``<dir>/<key>`` holding the worker's and the child's pids."""
    child = subprocess.Popen(["sleep", "120"])
    marker = Path(job.payload.decode()) / job.key
    part = marker.with_suffix(".part")
    part.write_text(f"{os.getpid()} {child.pid}")
    part.replace(marker)
    child.wait()
    return BuildResult(job.key, None, "slept", 0.0, {})


def _gone(pid: int) -> bool:
    """The process has exited (a zombie left to an init that does not reap counts)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def test_keyboard_interrupt_cancels_pending_builds_and_stops_running_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor, "build", _sleepy_build)
    jobs = [BuildJob(f"job{i}", "model.mlir", str(tmp_path).encode(), None, "cpu") for i in range(5)]
    interrupted: list[float] = []

    def interrupt() -> None:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("job?"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        interrupted.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    with LocalExecutor(workers=2) as ex:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            ex.build_all(jobs)
        assert time.monotonic() - interrupted[0] < 10
        started = sorted(p.name for p in tmp_path.glob("job?"))
        assert len(started) == 2, started  # the queued jobs never ran
        pids = [int(x) for name in started for x in (tmp_path / name).read_text().split()]
        deadline = time.monotonic() + 5
        while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_gone(pid) for pid in pids), "workers and their children are stopped"
        assert ex._pool is None
        monkeypatch.undo()
        after = ex.build_all([BuildJob("after", "model.mlir", MATMUL, None, "cpu")])
        assert after[0].ok, after[0].error  # a fresh pool


def test_ray_executor_without_ray_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ArgumentError, match=r"pip install 'tdsl\[ray\]'"):
        RayExecutor()


def test_ray_executor_refuses_an_address_without_a_cluster() -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install 'tdsl[ray]')")
    import ray

    start = time.monotonic()
    with pytest.raises(ArgumentError, match=r"no Ray cluster at '127\.0\.0\.1:\d+': ConnectionRefusedError"):
        RayExecutor(address=f"127.0.0.1:{_free_port()}")
    assert time.monotonic() - start < 5 and not ray.is_initialized()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_node(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """``ray start ... --block`` in its own process group, once it says it started."""
    ray = Path(sys.executable).parent / "ray"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "TDSL_FAILURE_DIR": str(log.parent / "failures")}
    env.pop("RAY_ADDRESS", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ray), "start", *args, "--block"], stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    deadline = time.monotonic() + 90
    while "Ray runtime started" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop_node(proc)
            pytest.fail(f"ray start failed:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)
    return proc


def _stop_node(proc: subprocess.Popen[bytes]) -> None:
    """Kills the process group that this test's ``ray start`` leads (its Ray processes)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A real two-node Ray cluster on this machine; yields its address. Each node offers two
    CPUs: one for its benchmark runner, one for builds."""
    pytest.importorskip("ray", reason="ray is not installed (pip install 'tdsl[ray]')")
    temp = Path(tempfile.mkdtemp(prefix="tdsl-ray-"))  # short: Ray's socket paths must fit 107 bytes
    port = _free_port()
    address = f"127.0.0.1:{port}"
    small = ["--num-cpus=2", "--object-store-memory=100000000"]
    nodes = []
    try:
        nodes.append(
            _start_node(
                [
                    "--head",
                    f"--port={port}",
                    "--include-dashboard=false",
                    "--disable-usage-stats",
                    f"--temp-dir={temp}",
                    f"--dashboard-port={_free_port()}",
                    f"--ray-client-server-port={_free_port()}",
                    *small,
                ],
                temp / "head.log",
            )
        )
        nodes.append(_start_node([f"--address={address}", *small], temp / "node.log"))
        yield address
    finally:
        for proc in reversed(nodes):
            _stop_node(proc)
        subprocess.run(["rm", "-rf", str(temp)], check=False)


@pytest.mark.ray
@pytest.mark.compile
def test_ray_executor_builds_and_samples_on_two_nodes(ray_cluster: str) -> None:
    reference = build(_jobs()[0])
    done: list[BuildResult] = []
    with RayExecutor(address=ray_cluster) as ex:
        assert ex.name == "ray"
        machines = ex.machines()
        assert len(machines) == 2 and len(set(ex.node_ids)) == 2
        assert all(m == machine() for m in machines)  # both nodes are this machine
        results = ex.build_all(_jobs(), done.append)
        _check_builds(results, done)
        default, pack, _ = results
        assert default.vmfb is not None and pack.vmfb is not None
        assert default.vmfb == reference.vmfb  # same bytes as a local build
        for runner in (0, 1):
            seen: list[SampleResult] = []
            rounds = ex.sample_rounds(
                [[_sample_job(default.vmfb), _sample_job(pack.vmfb, "pack")], [_sample_job(default.vmfb)]],
                runner,
                seen.append,
            )
            assert [[r.key for r in round_] for round_ in rounds] == [["default", "pack"], ["default"]]
            assert [r.key for r in seen] == ["default", "pack", "default"]
            assert all(r.error == "" and r.seconds is not None and r.seconds > 0 for round_ in rounds for r in round_)
        # Weights in a parameter archive reach the other node through the object store.
        with tempfile.TemporaryDirectory() as tmp:
            weighted, archive, inputs = _weighted(Path(tmp))
            job = SampleJob("w", weighted, "mm", inputs, min_time_s=0.01, parameters=(archive,))
            [[first, again]] = ex.sample_rounds([[job, job]], runner=1)
        assert first.ok and again.ok, (first.error, again.error)
        slow = ex.sample_rounds([[_sample_job(default.vmfb, min_time_s=60.0, timeout_s=1.0)]], runner=1)[0][0]
        assert slow.seconds is None and slow.error.startswith("timed out after 1 s")
        with pytest.raises(ArgumentError, match="runner: expected 0 to 1"):
            ex.sample_rounds([], runner=2)
    import ray

    assert not ray.is_initialized()  # the executor connected, so it disconnected


def _variants(result: Any) -> list[Any]:
    """Every variant a tuning built: its program points, its op candidates, its model pass."""
    return [*result.program, *(v for job in result.jobs for v in job.variants), *result.final]


@pytest.mark.ray
@pytest.mark.compile
def test_tune_through_ray_gives_the_local_winners_with_cached_measurements(ray_cluster: str, tmp_path: Path) -> None:
    """The same small tuning, local pool then Ray: with the builds dropped from the cache
    (so Ray's tasks build every candidate again) and the samples kept (same machine model),
    the Ray run reuses every measurement and emits the same set."""
    import sqlite3

    from tdsl.tune import TuneCache, TuneOptions, tune

    payload = tmp_path / "mm.mlir"
    payload.write_text(MATMUL.decode() if isinstance(MATMUL, bytes) else MATMUL)
    options = TuneOptions(budget=3, rounds=2, min_time_s=0.01, finalists=2, check_numerics=False)
    with TuneCache(tmp_path / "c.sqlite") as cache, LocalExecutor(2) as local:
        first = tune(payload, options=options, executor=local, cache=cache)
        samples = cache.stats()["samples"]
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute("DELETE FROM builds")
    with TuneCache(tmp_path / "c.sqlite") as cache, RayExecutor(address=ray_cluster) as ray_executor:
        second = tune(payload, options=options, executor=ray_executor, cache=cache)
        assert cache.stats()["build_misses"] > 0  # Ray built them
        if cache.stats()["samples"] != samples:  # measured again: say which stages, and what failed
            with sqlite3.connect(tmp_path / "c.sqlite") as db:
                again = db.execute(
                    "SELECT setup, seconds, error FROM samples ORDER BY id LIMIT -1 OFFSET ?", (samples,)
                ).fetchall()
            failed = [
                (v.label, v.build_error, v.sample_errors)
                for r in (first, second)
                for v in _variants(r)
                if v.build_error or v.sample_errors
            ]
            pytest.fail(f"the Ray run measured again: {again}; failures: {failed}")
    assert second.tuned == first.tuned
    assert [j.winner.values if j.winner else None for j in second.jobs] == [
        j.winner.values if j.winner else None for j in first.jobs
    ]


def _dying_build(job: BuildJob) -> BuildResult:
    """Stands in for a build worker that dies (killed, or a crash in a binding)."""
    os._exit(3)


def test_a_build_whose_worker_dies_fails_and_is_not_lasting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "build", _dying_build)
    with LocalExecutor(workers=1) as ex:
        [died] = ex.build_all([BuildJob("dies", "model.mlir", MATMUL, None, "cpu")])
        assert not died.ok and not died.lasting and died.error.startswith("build worker failed: BrokenProcessPool")
        monkeypatch.undo()
        [after] = ex.build_all([BuildJob("after", "model.mlir", MATMUL, None, "cpu")])
        assert after.ok and after.lasting, after.error
