"""The persistent cache of ``tdsl tune`` (tdsl.tune.cache): builds, timings and verdicts
round-trip; every key field matters; timings stay on their machine; large artifacts live in
files; a bad store is a one-line error naming it; two processes can share one store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdsl.errors import OutputError
from tdsl.tune.cache import CACHE_SCHEMA_VERSION, TuneCache, default_path
from tdsl.tune.cache_keys import BASELINE_CANDIDATE, ArtifactKey, MachineKey, canonical_hash, canonical_json

PROPERTY = settings(max_examples=200, deadline=None, derandomize=True, database=None)

KEY = ArtifactKey(
    iree_version="3.13.0",
    target="cpu",
    target_flags=canonical_json(["--iree-llvmcpu-target-cpu=znver4"]),
    source_hash=canonical_hash("func.func @f() { return }"),
    candidate_hash=canonical_hash({"tile": [8, 16]}),
    flags_hash=canonical_hash([]),
    schema_version=1,
)
HERE = MachineKey(cpu_model="AMD EPYC 9654", isa="avx512", cores=16, device="local-task")
SETUP = canonical_json({"function": "main", "threads": 1, "allocator": "caching", "min_time": 0.1, "seed": 0})


def _one_line(err: pytest.ExceptionInfo[OutputError], path: Path) -> str:
    text = str(err.value)
    assert "\n" not in text
    assert repr(str(path)) in text
    return text


# -------------------------------------------------------------------------------------
# Round trips.


def test_build_roundtrip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "tune.sqlite"
    report = {"phases": {"llvm": 1.5}, "flags": ["--a", "--b"], "note": None}
    with TuneCache(path) as cache:
        assert cache.get_build(KEY) is None
        cache.put_build(KEY, b"\x00vmfb\xff", "", 2.5, report)
        found = cache.get_build(KEY)
        assert found is not None and found.ok
        assert (found.vmfb, found.error, found.seconds, found.report) == (b"\x00vmfb\xff", "", 2.5, report)
        assert cache.stats()["build_hits"] == 1 and cache.stats()["build_misses"] == 1
    with TuneCache(path) as cache:  # reopened: still there
        again = cache.get_build(KEY)
        assert again is not None and again.vmfb == b"\x00vmfb\xff" and again.report == report


def test_failed_build_is_cached(tmp_path: Path) -> None:
    with TuneCache(tmp_path / "c.sqlite") as cache:
        cache.put_build(KEY, None, "error: 'vector.contract' op failed", 0.75, {"exit": 1})
        found = cache.get_build(KEY)
        assert found is not None and not found.ok
        assert found.vmfb is None and found.error == "error: 'vector.contract' op failed"
        assert cache.stats()["failed_builds"] == 1
        with pytest.raises(ValueError, match="needs the compiler's error"):
            cache.put_build(KEY, None, "", 0.0, {})
        with pytest.raises(TypeError, match="JSON-able"):
            cache.put_build(KEY, b"x", "", 0.0, {"path": Path("/x")})


def test_put_build_replaces(tmp_path: Path) -> None:
    with TuneCache(tmp_path / "c.sqlite") as cache:
        cache.put_build(KEY, None, "boom", 1.0, {})
        cache.put_build(KEY, b"ok", "", 1.0, {})
        found = cache.get_build(KEY)
        assert found is not None and found.ok and found.vmfb == b"ok"
        assert cache.stats()["builds"] == 1


def test_samples_and_failures_roundtrip(tmp_path: Path) -> None:
    with TuneCache(tmp_path / "c.sqlite") as cache:
        assert cache.samples(KEY, HERE, SETUP) == []
        cache.add_samples(KEY, HERE, SETUP, [0.5, 0.25])
        cache.add_samples(KEY, HERE, SETUP, [0.125, None], errors=["", "segfault"])
        assert cache.samples(KEY, HERE, SETUP) == [0.5, 0.25, 0.125]
        assert cache.failures(KEY, HERE, SETUP) == ["segfault"]
        assert cache.samples(KEY, HERE, SETUP + " ") == []  # another setup
        stats = cache.stats()
        assert (stats["samples"], stats["failed_samples"], stats["machines"]) == (4, 1, 1)
        with pytest.raises(ValueError, match="finite time"):
            cache.add_samples(KEY, HERE, SETUP, [float("nan")])
        with pytest.raises(ValueError, match="one per sample"):
            cache.add_samples(KEY, HERE, SETUP, [1.0], errors=[])
        with pytest.raises(ValueError, match="measured sample"):
            cache.add_samples(KEY, HERE, SETUP, [1.0], errors=["why"])
        assert cache.samples(KEY, HERE, SETUP) == [0.5, 0.25, 0.125]  # nothing half-written


def test_verdict_roundtrip(tmp_path: Path) -> None:
    reference = dataclasses.replace(KEY, candidate_hash=BASELINE_CANDIDATE).digest()
    verdict = {"ok": True, "max_abs": 1e-6, "outputs": [{"name": "out0", "ok": True}]}
    with TuneCache(tmp_path / "c.sqlite") as cache:
        assert cache.get_verdict(KEY, reference) is None
        cache.put_verdict(KEY, reference, verdict)
        assert cache.get_verdict(KEY, reference) == verdict
        assert cache.get_verdict(KEY, "other reference") is None
        cache.put_verdict(KEY, reference, {"ok": False})
        assert cache.get_verdict(KEY, reference) == {"ok": False}
        assert cache.stats()["verdicts"] == 1


def test_stats_and_clear(tmp_path: Path) -> None:
    with TuneCache(tmp_path / "c.sqlite", inline_limit=4) as cache:
        cache.put_build(KEY, b"large artifact", "", 1.0, {})
        artifact = next((tmp_path / "artifacts").iterdir())
        cache.add_samples(KEY, HERE, SETUP, [1.0])
        cache.put_verdict(KEY, "ref", {"ok": True})
        stats = cache.stats()
        assert stats["path"] == str(tmp_path / "c.sqlite")
        assert {k: stats[k] for k in ("builds", "samples", "verdicts", "machines")} == {
            "builds": 1,
            "samples": 1,
            "verdicts": 1,
            "machines": 1,
        }
        json.dumps(stats)
        cache.clear()
        after = cache.stats()
        assert {k: after[k] for k in ("builds", "samples", "verdicts", "machines")} == {
            "builds": 0,
            "samples": 0,
            "verdicts": 0,
            "machines": 0,
        }
        assert not artifact.exists()
        assert cache.get_build(KEY) is None
    with TuneCache(tmp_path / "c.sqlite") as cache:  # the schema survives clear()
        assert cache.stats()["builds"] == 0


def test_closed_cache_refuses(tmp_path: Path) -> None:
    cache = TuneCache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()
    with pytest.raises(ValueError, match="closed"):
        cache.get_build(KEY)


# -------------------------------------------------------------------------------------
# Keys.


def _changed(value: Any) -> Any:
    return value + 1 if isinstance(value, int) else value + "-changed"


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(ArtifactKey)])
def test_every_artifact_key_field_matters(tmp_path: Path, field: str) -> None:
    other = dataclasses.replace(KEY, **{field: _changed(getattr(KEY, field))})
    assert other.digest() != KEY.digest()
    with TuneCache(tmp_path / "c.sqlite") as cache:
        cache.put_build(KEY, b"vmfb", "", 1.0, {})
        cache.add_samples(KEY, HERE, SETUP, [1.0])
        cache.put_verdict(KEY, "ref", {"ok": True})
        assert cache.get_build(other) is None
        assert cache.samples(other, HERE, SETUP) == []
        assert cache.get_verdict(other, "ref") is None
        assert cache.get_build(dataclasses.replace(KEY)) is not None  # an equal key still hits


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(MachineKey)])
def test_timings_stay_on_their_machine(tmp_path: Path, field: str) -> None:
    other = dataclasses.replace(HERE, **{field: _changed(getattr(HERE, field))})
    assert other.digest() != HERE.digest()
    with TuneCache(tmp_path / "c.sqlite") as cache:
        cache.put_build(KEY, b"vmfb", "", 1.0, {})
        cache.add_samples(KEY, HERE, SETUP, [1.0, 2.0], errors=None)
        cache.add_samples(KEY, HERE, SETUP, [None], errors=["crash"])
        assert cache.samples(KEY, other, SETUP) == []
        assert cache.failures(KEY, other, SETUP) == []
        assert cache.samples(KEY, dataclasses.replace(HERE), SETUP) == [1.0, 2.0]
        assert cache.get_build(KEY) is not None  # builds are shared across machines


def test_key_fields_are_checked() -> None:
    with pytest.raises(TypeError, match="ArtifactKey.schema_version: expected int"):
        dataclasses.replace(KEY, schema_version="1")
    with pytest.raises(TypeError, match="MachineKey.cores: expected int"):
        MachineKey("cpu", "avx2", True)


def test_machine_key_here() -> None:
    here = MachineKey.here()
    assert here.device == "local-task" and here.cores >= 1 and here.cpu_model and here.isa
    assert MachineKey.here("hip://0").digest() != here.digest()


# -------------------------------------------------------------------------------------
# canonical_hash.

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_plain = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _reordered(value: Any) -> Any:
    """The same data with dicts in reversed insertion order and lists and tuples swapped."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return tuple(_reordered(v) for v in value)
    if isinstance(value, tuple):
        return [_reordered(v) for v in value]
    return value


def _tagged(value: Any) -> Any:
    """What canonical data means: the type of every scalar counts (1, 1.0 and True differ),
    list and tuple are one kind, dict order does not count."""
    if isinstance(value, dict):
        return ("dict", sorted((k, _tagged(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("list", [_tagged(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


@PROPERTY
@given(_plain)
def test_canonical_hash_ignores_dict_order_and_tuples(value: Any) -> None:
    assert canonical_hash(_reordered(value)) == canonical_hash(value)
    assert canonical_json(_reordered(value)) == canonical_json(value)


@PROPERTY
@given(
    st.lists(_plain, max_size=3) | st.dictionaries(st.text(max_size=6), _plain, max_size=3),
    st.lists(_plain, max_size=3) | st.dictionaries(st.text(max_size=6), _plain, max_size=3),
)
def test_canonical_hash_differs_for_different_data(a: Any, b: Any) -> None:
    assert (canonical_hash(a) == canonical_hash(b)) == (_tagged(a) == _tagged(b))


def test_canonical_hash_examples() -> None:
    assert canonical_json({"b": (1, 2.0), "a": None}) == '{"a":null,"b":[1,2.0]}'
    assert canonical_hash(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert canonical_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    assert canonical_hash("\u00e9") == hashlib.sha256("\u00e9".encode()).hexdigest()
    assert canonical_hash({"x": [1]}) == hashlib.sha256(b'{"x":[1]}').hexdigest()
    with pytest.raises(TypeError, match="received set at"):
        canonical_hash({"x": {1}})
    with pytest.raises(TypeError, match="str dict keys"):
        canonical_hash({1: "x"})


def test_digests_are_stable() -> None:
    """The digests are part of the store: a change here orphans every user's cache."""
    key = ArtifactKey("v", "cpu", "", "s", "c", "f", 1)
    expected = canonical_hash(
        {
            "artifact_key": {
                "iree_version": "v",
                "target": "cpu",
                "target_flags": "",
                "source_hash": "s",
                "candidate_hash": "c",
                "flags_hash": "f",
                "schema_version": 1,
            }
        }
    )
    assert key.digest() == expected
    assert MachineKey("m", "avx2", 4).digest() == canonical_hash(
        {"machine_key": {"cpu_model": "m", "isa": "avx2", "cores": 4, "device": ""}}
    )


# -------------------------------------------------------------------------------------
# Large artifacts.


def test_large_artifact_goes_to_a_file(tmp_path: Path) -> None:
    data = bytes(range(256)) * 64  # 16 KiB
    path = tmp_path / "c.sqlite"
    with TuneCache(path, inline_limit=1024) as cache:
        cache.put_build(KEY, data, "", 1.0, {"size": len(data)})
        file = tmp_path / "artifacts" / f"{hashlib.sha256(data).hexdigest()}.vmfb"
        assert file.read_bytes() == data
        found = cache.get_build(KEY)
        assert found is not None and found.vmfb == data
    with sqlite3.connect(path) as raw:  # not in the database
        assert raw.execute("SELECT vmfb, vmfb_size FROM builds").fetchall() == [(None, len(data))]
    with TuneCache(path, inline_limit=1024) as cache:
        file.write_bytes(data[:-1] + b"\x00")  # damaged: a miss
        assert cache.get_build(KEY) is None
        file.unlink()  # gone: a miss, not a crash
        assert cache.get_build(KEY) is None
        cache.put_build(KEY, data, "", 1.0, {})  # a new build brings it back
        assert file.exists() and cache.get_build(KEY) is not None


def test_default_limit_keeps_small_artifacts_inline(tmp_path: Path) -> None:
    with TuneCache(tmp_path / "c.sqlite") as cache:
        cache.put_build(KEY, b"x" * 100_000, "", 1.0, {})
    assert not (tmp_path / "artifacts").exists()


def test_replaced_artifact_file_is_removed(tmp_path: Path) -> None:
    with TuneCache(tmp_path / "c.sqlite", inline_limit=4) as cache:
        cache.put_build(KEY, b"first build", "", 1.0, {})
        other = dataclasses.replace(KEY, target="gfx942")
        cache.put_build(other, b"first build", "", 1.0, {})  # same content, another key
        cache.put_build(KEY, b"second build", "", 1.0, {})
        names = sorted(p.name for p in (tmp_path / "artifacts").iterdir())
        assert names == sorted(f"{hashlib.sha256(d).hexdigest()}.vmfb" for d in (b"first build", b"second build"))
        cache.put_build(other, None, "failed now", 1.0, {})
        names = [p.name for p in (tmp_path / "artifacts").iterdir()]
        assert names == [f"{hashlib.sha256(b'second build').hexdigest()}.vmfb"]


# -------------------------------------------------------------------------------------
# Bad stores.


def test_schema_version_mismatch_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with TuneCache(path) as cache:
        cache.put_build(KEY, b"vmfb", "", 1.0, {})
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE tdsl_tune_meta SET value = '999' WHERE name = 'schema_version'")
    raw.close()
    with pytest.raises(OutputError) as err:
        TuneCache(path)
    text = _one_line(err, path)
    assert f"cache schema version 999, this tdsl uses version {CACHE_SCHEMA_VERSION}" in text
    assert "pass another --cache or delete the file" in text
    with sqlite3.connect(path) as raw:  # nothing dropped
        assert raw.execute("SELECT COUNT(*) FROM builds").fetchone() == (1,)
    raw.close()


def test_corrupt_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    junk = b"this is not SQLite" * 100
    path.write_bytes(junk)
    with pytest.raises(OutputError) as err:
        TuneCache(path)
    text = _one_line(err, path)
    assert "not a readable tdsl tune cache" in text and "delete the file" in text
    assert path.read_bytes() == junk


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputError) as err:
        TuneCache(tmp_path)
    assert "expected a file, received a directory" in _one_line(err, tmp_path)


def test_path_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "tune.sqlite"
    with pytest.raises(OutputError) as err:
        TuneCache(path)
    assert "cannot create its directory" in _one_line(err, path)


def test_other_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE people (name TEXT)")
    raw.close()
    with pytest.raises(OutputError) as err:
        TuneCache(path)
    assert "expected a tdsl tune cache" in _one_line(err, path)


def test_locked_store_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with TuneCache(path, timeout_s=0.05) as cache:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            assert cache.get_build(KEY) is None  # WAL: readers are not blocked
            with pytest.raises(OutputError) as err:
                cache.put_build(KEY, b"vmfb", "", 1.0, {})
            assert "locked" in _one_line(err, path)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        cache.put_build(KEY, b"vmfb", "", 1.0, {})  # usable once the other lets go
        assert cache.get_build(KEY) is not None


def test_store_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    TuneCache(path).close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    raw.close()


# -------------------------------------------------------------------------------------
# Two processes.


def _writer(path: str, name: str, count: int, start: Any) -> None:
    start.wait()
    machine = MachineKey("cpu", "avx2", 2, name)
    with TuneCache(path, inline_limit=64) as cache:
        for index in range(count):
            key = dataclasses.replace(KEY, source_hash=f"{name}-{index}")
            payload = f"{name}-{index}".encode() * (index % 3 * 20 + 1)  # some inline, some in files
            cache.put_build(key, payload, "", 0.1, {"writer": name, "index": index})
            cache.add_samples(key, machine, SETUP, [index * 0.001, index * 0.002])
            cache.put_verdict(key, "ref", {"ok": True})


def test_two_processes_share_one_store(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "tune.sqlite"
    TuneCache(path).close()  # one of them may also create it: tested below with a fresh path
    context: Any = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    for target in (path, tmp_path / "fresh" / "tune.sqlite"):
        start = context.Event()
        workers = [context.Process(target=_writer, args=(str(target), name, 25, start)) for name in ("a", "b")]
        for worker in workers:
            worker.start()
        start.set()
        for worker in workers:
            worker.join(timeout=120)
        assert [worker.exitcode for worker in workers] == [0, 0]
        with TuneCache(target, inline_limit=64) as cache:
            for name in ("a", "b"):
                machine = MachineKey("cpu", "avx2", 2, name)
                for index in range(25):
                    key = dataclasses.replace(KEY, source_hash=f"{name}-{index}")
                    found = cache.get_build(key)
                    assert found is not None and found.report == {"writer": name, "index": index}
                    assert found.vmfb == f"{name}-{index}".encode() * (index % 3 * 20 + 1)
                    assert cache.samples(key, machine, SETUP) == [index * 0.001, index * 0.002]
                    assert cache.get_verdict(key, "ref") == {"ok": True}
            assert cache.stats()["builds"] == 50 and cache.stats()["samples"] == 100


# -------------------------------------------------------------------------------------
# Where the store is.


def test_default_path_honours_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TDSL_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "tdsl" / "tune.sqlite"
    with TuneCache() as cache:
        assert cache.path == tmp_path / "xdg" / "tdsl" / "tune.sqlite"
        cache.put_build(KEY, b"vmfb", "", 1.0, {})
    assert (tmp_path / "xdg" / "tdsl" / "tune.sqlite").is_file()


def test_default_path_without_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TDSL_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".cache" / "tdsl" / "tune.sqlite"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty counts as unset
    assert default_path() == tmp_path / "home" / ".cache" / "tdsl" / "tune.sqlite"


def test_default_path_honours_tdsl_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path / "tdsl"))
    assert default_path() == tmp_path / "tdsl" / "tune.sqlite"


def test_explicit_path_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with TuneCache(str(tmp_path / "mine.sqlite")) as cache:
        assert cache.path == tmp_path / "mine.sqlite"
    assert not (tmp_path / "xdg").exists()
