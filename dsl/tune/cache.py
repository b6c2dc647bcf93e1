"""The persistent cache of ``tdsl tune``: compiled artifacts (failed compiles too, so they are
not retried), timing samples and numerics verdicts, in one SQLite file that successive and
concurrent runs share (WAL mode, a busy timeout).

A build is keyed by an :class:`ArtifactKey` (compiler version, target and its flags, source,
candidate strategy, compile flags, schema version): it names no machine, so artifacts may be
shared across machines. Timing samples are keyed by an artifact, a :class:`MachineKey` (CPU
model, ISA, cores, device) and the measurement setup, and are only reused on the same machine.
The keys are :mod:`tdsl.tune.cache_keys`'s. Artifacts larger than :data:`INLINE_LIMIT` live beside the database in
``artifacts/<sha256>.vmfb``; a missing or damaged file there is a cache miss.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Iterator, Sequence, TypeVar, cast

from ..errors import OutputError
from ..files import atomic_write
from ..measure.dispatch_profile import DispatchTime
from .cache_keys import ArtifactKey, BuildSummary, CachedBuild, CacheStats, MachineKey, Verdict, canonical_json

CACHE_SCHEMA_VERSION = 1
"""Version of the tables; a store written with another version is refused, not migrated."""

CACHE_FILE = "tune.sqlite"
"""Name of the default store under the user cache directory."""

ARTIFACTS_DIR = "artifacts"
"""Folder beside the store that holds the artifacts too large for the database."""

INLINE_LIMIT = 8 * 1024 * 1024
"""Artifacts up to this many bytes are kept in the database, larger ones in files."""

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process that holds the store."""

_META = "tdsl_tune_meta"

_T = TypeVar("_T")

_PROFILES = (
    "CREATE TABLE IF NOT EXISTS profiles (key TEXT NOT NULL, machine TEXT NOT NULL, setup TEXT NOT NULL,"
    " times TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (key, machine, setup))"
)
"""Per-dispatch times of a build on a machine model (added without a schema version bump:
a store of the same version without it gets it when opened)."""

_TABLES = (
    f"CREATE TABLE {_META} (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # vmfb: the artifact when it is at most inline_limit bytes; vmfb_file: the sha256 of a
    # larger one, kept in artifacts/<sha256>.vmfb; both NULL for a failed compile.
    "CREATE TABLE builds (key TEXT PRIMARY KEY, key_json TEXT NOT NULL, vmfb BLOB,"
    " vmfb_file TEXT, vmfb_size INTEGER, error TEXT NOT NULL, seconds REAL NOT NULL,"
    " report TEXT NOT NULL, created REAL NOT NULL)",
    "CREATE TABLE machines (key TEXT PRIMARY KEY, machine_json TEXT NOT NULL)",
    # seconds NULL: a run that failed, error says why.
    "CREATE TABLE samples (id INTEGER PRIMARY KEY, key TEXT NOT NULL, machine TEXT NOT NULL,"
    " setup TEXT NOT NULL, seconds REAL, error TEXT NOT NULL, created REAL NOT NULL)",
    "CREATE INDEX samples_lookup ON samples (key, machine, setup, id)",
    "CREATE TABLE verdicts (key TEXT NOT NULL, reference TEXT NOT NULL, verdict TEXT NOT NULL,"
    " created REAL NOT NULL, PRIMARY KEY (key, reference))",
    _PROFILES,
)


def default_path() -> Path:
    """The default store: ``$TDSL_CACHE_DIR/tune.sqlite``, else
    ``$XDG_CACHE_HOME/tdsl/tune.sqlite`` (``~/.cache/tdsl/tune.sqlite``), as for imported
    models (:func:`tdsl.iree.frontend.cache_dir`)."""
    root = os.environ.get("TDSL_CACHE_DIR")
    if root:
        return Path(root) / CACHE_FILE
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdsl" / CACHE_FILE


def _json_text(value: object, what: str) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"{what}: expected a dict, received {type(value).__name__}")
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what}: expected JSON-able data, {err}") from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26


def _busy(err: sqlite3.Error) -> bool:
    """SQLite said the store is held by another connection (SQLITE_BUSY or SQLITE_LOCKED)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    text = str(err).lower()
    return "locked" in text or "busy" in text


# --------------------------------------------------------------------------------------
# The store.


class TuneCache:
    """The SQLite store at ``path`` (default :func:`default_path`), created with its parent
    directories when missing. Used from one thread; other processes may use the same file
    at the same time. Every problem with the file is a one-line :class:`OutputError` that
    names it: a directory, an unreadable or corrupt file, another schema version, another
    program's database, a lock held longer than ``timeout_s``."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        inline_limit: int = INLINE_LIMIT,
        timeout_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_path()
        self.inline_limit = inline_limit
        self.timeout_s = timeout_s
        self.build_hits = 0
        """Calls of :meth:`get_build` on this object that found a build."""
        self.build_misses = 0
        """Calls of :meth:`get_build` on this object that found none."""
        self._db: sqlite3.Connection | None = None
        self._db = self._open()

    # -- opening, errors, transactions --------------------------------------------------

    @property
    def _where(self) -> str:
        return f"tune cache {str(self.path)!r}"

    @property
    def artifacts_dir(self) -> Path:
        """Where the artifacts larger than ``inline_limit`` are kept."""
        return self.path.parent / ARTIFACTS_DIR

    def _open(self) -> sqlite3.Connection:
        path = self.path
        if path.is_dir():
            raise OutputError(f"{self._where}: expected a file, received a directory")
        if path.exists() and not path.is_file():
            raise OutputError(f"{self._where}: expected a regular file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(
                f"{self._where}: cannot create its directory: {_one_line(err.strerror or str(err))}"
            ) from None
        with self._guard():
            db = sqlite3.connect(str(path), timeout=self.timeout_s, isolation_level=None)
        try:
            with self._guard():
                self._retrying(lambda: self._setup(db))
        except BaseException:
            db.close()
            raise
        return db

    def _setup(self, db: sqlite3.Connection) -> None:
        db.execute(f"PRAGMA busy_timeout = {max(0, int(self.timeout_s * 1000))}")
        db.execute("PRAGMA journal_mode = WAL").fetchone()
        db.execute("PRAGMA synchronous = NORMAL")
        self._init_schema(db)

    def _retrying(self, action: Callable[[], _T]) -> _T:
        """``action()``, run again while SQLite reports the store busy, for up to
        ``timeout_s``: switching a new store to WAL fails at once, without the busy
        timeout, while another process does the same."""
        deadline = time.monotonic() + self.timeout_s
        pause = 0.005
        while True:
            try:
                return action()
            except sqlite3.OperationalError as err:
                if not _busy(err) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, 0.1)

    def _init_schema(self, db: sqlite3.Connection) -> None:
        """Creates the tables in an empty store; refuses another schema version or another
        program's database."""
        db.execute("BEGIN IMMEDIATE")
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if _META in tables:
                row = db.execute(f"SELECT value FROM {_META} WHERE name = 'schema_version'").fetchone()
                found = row[0] if row else "none"
                if str(found) != str(CACHE_SCHEMA_VERSION):
                    raise OutputError(
                        f"{self._where} was written with cache schema version {found}, this tdsl uses version "
                        f"{CACHE_SCHEMA_VERSION}: pass another --cache or delete the file"
                    )
                db.execute(_PROFILES)
            elif tables:
                raise OutputError(
                    f"{self._where}: expected a tdsl tune cache, received an SQLite database with the tables "
                    f"{', '.join(sorted(tables))}: pass another --cache"
                )
            else:
                for statement in _TABLES:
                    db.execute(statement)
                db.execute(
                    f"INSERT INTO {_META} (name, value) VALUES ('schema_version', ?)", (str(CACHE_SCHEMA_VERSION),)
                )
            db.execute("COMMIT")
        except BaseException:
            self._rollback(db)
            raise

    @staticmethod
    def _rollback(db: sqlite3.Connection) -> None:
        if db.in_transaction:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _error(self, err: sqlite3.Error) -> OutputError:
        text = _one_line(str(err)) or type(err).__name__
        lowered = text.lower()
        code = getattr(err, "sqlite_errorcode", None)
        damaged = isinstance(code, int) and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
        if damaged or "not a database" in lowered or "malformed" in lowered:
            return OutputError(
                f"{self._where}: not a readable tdsl tune cache ({text}): pass another --cache or delete the file"
            )
        if _busy(err):
            return OutputError(
                f"{self._where}: {text} (another process held it longer than {self.timeout_s:g} s): "
                "try again or pass another --cache"
            )
        return OutputError(f"{self._where}: {text}")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turns SQLite's errors into one-line :class:`OutputError` (programming errors pass)."""
        try:
            yield
        except sqlite3.ProgrammingError:
            raise
        except sqlite3.Error as err:
            raise self._error(err) from None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError(f"{self._where} is closed")
        return self._db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (waits up to ``timeout_s`` for other writers)."""
        db = self._connection()
        with self._guard():
            self._retrying(lambda: db.execute("BEGIN IMMEDIATE"))
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                self._rollback(db)
                raise

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        db = self._connection()
        with self._guard():
            return db.execute(sql, tuple(parameters)).fetchall()

    def close(self) -> None:
        """Closes the store; later calls raise :class:`ValueError`."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> TuneCache:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # -- artifacts in files --------------------------------------------------------------

    def _artifact_path(self, sha: str) -> Path:
        return self.artifacts_dir / f"{sha}.vmfb"

    def _write_artifact(self, sha: str, data: bytes) -> None:
        try:
            atomic_write(self._artifact_path(sha), data)
        except OSError as err:
            raise OutputError(
                f"{self._where}: cannot write the artifact {str(self._artifact_path(sha))!r}: "
                f"{_one_line(err.strerror or str(err))}"
            ) from None

    def _read_artifact(self, sha: str, size: int | None) -> bytes | None:
        """The artifact file's bytes, or ``None`` when it is missing, unreadable or damaged."""
        try:
            data = self._artifact_path(sha).read_bytes()
        except OSError:
            return None
        if (size is not None and len(data) != size) or hashlib.sha256(data).hexdigest() != sha:
            return None
        return data

    def _unlink_unreferenced(self, shas: set[str]) -> None:
        for sha in shas:
            if not self._read("SELECT 1 FROM builds WHERE vmfb_file = ? LIMIT 1", (sha,)):
                self._artifact_path(sha).unlink(missing_ok=True)

    # -- builds ----------------------------------------------------------------------------

    def get_build(self, key: ArtifactKey) -> CachedBuild | None:
        """The build stored for ``key``, or ``None`` (also when its artifact file is gone)."""
        rows = self._read(
            "SELECT vmfb, vmfb_file, vmfb_size, error, seconds, report, created FROM builds WHERE key = ?",
            (key.digest(),),
        )
        found = self._build(rows[0]) if rows else None
        if found is None:
            self.build_misses += 1
        else:
            self.build_hits += 1
        return found

    def _build(self, row: Sequence[Any]) -> CachedBuild | None:
        blob, sha, size, error, seconds, report, created = row
        vmfb: bytes | None = bytes(blob) if blob is not None else None
        if sha is not None:
            vmfb = self._read_artifact(sha, size)
            if vmfb is None:
                return None
        if vmfb is None and not error:
            return None
        try:
            loaded = json.loads(report)
        except ValueError:
            return None
        if not isinstance(loaded, dict):
            return None
        summary = cast(BuildSummary, loaded)  # put_build wrote it from one
        return CachedBuild(vmfb=vmfb, error=str(error), seconds=float(seconds), report=summary, created=float(created))

    def put_build(self, key: ArtifactKey, vmfb: bytes | None, error: str, seconds: float, report: BuildSummary) -> None:
        """Stores the build of ``key``, replacing any earlier one: its artifact, or ``None``
        and a non-empty ``error`` for a failed compile (cached too, so it is not retried);
        ``report`` must be JSON-able. Artifacts over ``inline_limit`` bytes are written to
        ``artifacts/<sha256>.vmfb`` (atomically) before the row that names them."""
        if vmfb is None and not error:
            raise ValueError("put_build: a build without an artifact needs the compiler's error")
        report_text = _json_text(report, "put_build: report")
        blob: bytes | None = None
        sha: str | None = None
        size: int | None = None
        if vmfb is not None:
            data = bytes(vmfb)
            size = len(data)
            if size > self.inline_limit:
                sha = hashlib.sha256(data).hexdigest()
                self._write_artifact(sha, data)
            else:
                blob = data
        digest = key.digest()
        with self._write() as db:
            previous = db.execute("SELECT vmfb_file FROM builds WHERE key = ?", (digest,)).fetchone()
            db.execute(
                "INSERT OR REPLACE INTO builds (key, key_json, vmfb, vmfb_file, vmfb_size, error, seconds, report, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (digest, canonical_json(asdict(key)), blob, sha, size, error, float(seconds), report_text, time.time()),
            )
        if previous is not None and previous[0] is not None and previous[0] != sha:
            self._unlink_unreferenced({previous[0]})

    # -- timings ---------------------------------------------------------------------------

    def add_samples(
        self,
        key: ArtifactKey,
        machine: MachineKey,
        setup: str,
        seconds: Sequence[float | None],
        errors: Sequence[str] | None = None,
    ) -> None:
        """Appends timing samples of ``key`` on ``machine`` under ``setup`` (a canonical
        string of function, threads, allocator, min time, input seed). A ``None`` entry is a
        run that failed; ``errors`` (as long as ``seconds``) says why, and must be empty
        for a measured entry. Raises :class:`ValueError` for a negative or non-finite time."""
        values = list(seconds)
        texts = list(errors) if errors is not None else [""] * len(values)
        if len(texts) != len(values):
            raise ValueError(f"add_samples: expected {len(values)} errors (one per sample), received {len(texts)}")
        now = time.time()
        rows: list[tuple[str, str, str, float | None, str, float]] = []
        key_digest, machine_digest = key.digest(), machine.digest()
        for index, (value, text) in enumerate(zip(values, texts)):
            if value is None:
                rows.append((key_digest, machine_digest, setup, None, text or "failed", now))
                continue
            number = float(value)
            if not math.isfinite(number) or number < 0:
                raise ValueError(f"add_samples: seconds[{index}]: expected a finite time >= 0, received {value!r}")
            if text:
                raise ValueError(f"add_samples: errors[{index}]: expected '' for a measured sample, received {text!r}")
            rows.append((key_digest, machine_digest, setup, number, "", now))
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO machines (key, machine_json) VALUES (?, ?)",
                (machine_digest, canonical_json(asdict(machine))),
            )
            db.executemany(
                "INSERT INTO samples (key, machine, setup, seconds, error, created) VALUES (?, ?, ?, ?, ?, ?)", rows
            )

    def samples(self, key: ArtifactKey, machine: MachineKey, setup: str) -> list[float]:
        """The measured times of ``key`` on exactly this ``machine`` and ``setup``, oldest first."""
        rows = self._read(
            "SELECT seconds FROM samples WHERE key = ? AND machine = ? AND setup = ? AND seconds IS NOT NULL ORDER BY id",
            (key.digest(), machine.digest(), setup),
        )
        return [float(row[0]) for row in rows]

    def failures(self, key: ArtifactKey, machine: MachineKey, setup: str) -> list[str]:
        """The errors of the runs of ``key`` that failed on this ``machine`` and ``setup``."""
        rows = self._read(
            "SELECT error FROM samples WHERE key = ? AND machine = ? AND setup = ? AND seconds IS NULL ORDER BY id",
            (key.digest(), machine.digest(), setup),
        )
        return [str(row[0]) for row in rows]

    # -- numerics verdicts -----------------------------------------------------------------

    def put_verdict(self, key: ArtifactKey, reference_key_digest: str, verdict: Verdict) -> None:
        """Stores the numerics verdict (JSON-able) of ``key`` against the reference whose
        digest is given (fold inputs and tolerances into it), replacing an earlier one."""
        text = _json_text(verdict, "put_verdict: verdict")
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO verdicts (key, reference, verdict, created) VALUES (?, ?, ?, ?)",
                (key.digest(), reference_key_digest, text, time.time()),
            )

    def get_verdict(self, key: ArtifactKey, reference_key_digest: str) -> Verdict | None:
        """The verdict stored for ``key`` against that reference, or ``None``."""
        rows = self._read(
            "SELECT verdict FROM verdicts WHERE key = ? AND reference = ?", (key.digest(), reference_key_digest)
        )
        if not rows:
            return None
        try:
            loaded = json.loads(rows[0][0])
        except ValueError:
            return None
        return cast(Verdict, loaded) if isinstance(loaded, dict) else None  # put_verdict wrote it from one

    # -- per-dispatch profiles -------------------------------------------------------------

    def put_profile(self, key: ArtifactKey, machine: MachineKey, setup: str, times: dict[str, DispatchTime]) -> None:
        """Stores the seconds and launches per call of each dispatch function of the build
        ``key`` measured on ``machine`` with ``setup``
        (:func:`tdsl.iree.dispatch_profile.dispatch_times`), replacing an earlier one."""
        text = _json_text({name: [t.seconds, t.launches] for name, t in times.items()}, "put_profile: times")
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO profiles (key, machine, setup, times, created) VALUES (?, ?, ?, ?, ?)",
                (key.digest(), machine.digest(), setup, text, time.time()),
            )

    def get_profile(self, key: ArtifactKey, machine: MachineKey, setup: str) -> dict[str, DispatchTime] | None:
        """The profile stored for the build ``key`` on exactly this ``machine`` and ``setup``, or
        ``None`` (also for one stored before profiles counted launches: seconds only)."""
        rows = self._read(
            "SELECT times FROM profiles WHERE key = ? AND machine = ? AND setup = ?",
            (key.digest(), machine.digest(), setup),
        )
        try:
            loaded = json.loads(rows[0][0]) if rows else None
            if not isinstance(loaded, dict):
                return None
            return {str(k): DispatchTime(float(v[0]), float(v[1])) for k, v in loaded.items()}
        except (ValueError, TypeError, IndexError, KeyError):
            return None

    # -- the whole store -------------------------------------------------------------------

    def stats(self) -> CacheStats:
        """The store's path and counts (builds, failed builds, samples, failed samples,
        verdicts, machines), and this object's ``get_build`` hits and misses."""
        counts = self._read(
            "SELECT (SELECT COUNT(*) FROM builds), (SELECT COUNT(*) FROM builds WHERE error != ''),"
            " (SELECT COUNT(*) FROM samples), (SELECT COUNT(*) FROM samples WHERE seconds IS NULL),"
            " (SELECT COUNT(*) FROM verdicts), (SELECT COUNT(*) FROM machines)"
        )[0]
        builds, failed_builds, samples, failed_samples, verdicts, machines = (int(count) for count in counts)
        return CacheStats(
            path=str(self.path),
            builds=builds,
            failed_builds=failed_builds,
            samples=samples,
            failed_samples=failed_samples,
            verdicts=verdicts,
            machines=machines,
            build_hits=self.build_hits,
            build_misses=self.build_misses,
        )

    def clear(self) -> None:
        """Removes every build, sample, verdict and machine, and the artifact files that the
        builds named; the schema version stays."""
        with self._write() as db:
            shas = {row[0] for row in db.execute("SELECT vmfb_file FROM builds WHERE vmfb_file IS NOT NULL")}
            for table in ("builds", "samples", "verdicts", "machines"):
                db.execute(f"DELETE FROM {table}")
        self._unlink_unreferenced(shas)
