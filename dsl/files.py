"""Atomic output files: a crash, a failed compile or Ctrl-C never leaves a half-written
output, and every file gets the mode the umask gives (0644 under umask 022), as if
written with ``open(path, "w")``.

:func:`staged` hands out a temporary path beside the destination and renames it over the
destination only if the block succeeds; :func:`atomic_write` writes bytes or text that way;
:func:`replace_files` replaces a whole set of files in a directory at once (a render's
scripts and ``flags.txt``), so the directory never mixes two sets. :func:`failure_dir`
makes the directory that keeps the evidence of a failure after tdsl returns.
:func:`cache_root` is where tdsl keeps what it caches for this user (imported models, the
tuning store, the machine's roofline).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def staged(path: Path | str) -> Iterator[Path]:
    """Yields a temporary path beside ``path`` (its directory is created); on normal exit
    the file there gets the umask's mode and is renamed over ``path``, on an exception it
    is removed. The caller writes the temporary path (or has a tool write it)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write(path: Path | str, data: str | bytes) -> Path:
    """Writes ``data`` to ``path`` atomically (fsynced before the rename); returns ``path``."""
    with staged(path) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
    return Path(path)


def _write_synced(path: Path, data: str | bytes, mode: int) -> None:
    with open(path, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, mode)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_DEFERRED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP that arrive in the block take effect after it: their
    handlers are swapped for one that notes them (Python runs signal handlers in the main
    thread only, whichever thread the signal hit), then restored and called."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def note(signum: int, frame: object) -> None:
        received.append(signum)

    previous: dict[int, Any] = {}
    for signum in _DEFERRED_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, note)
        except (OSError, ValueError):  # pragma: no cover - not settable here
            pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            handler = previous.get(signum)
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


def replace_files(
    directory: Path | str,
    files: Mapping[str, str | bytes],
    owned: Iterable[str] = (),
) -> list[Path]:
    """Makes ``directory`` hold ``files`` ({file name: contents}) as one set; returns their paths.

    Every file is first written (and fsynced) in a staging directory; only then are they
    swapped in, with Ctrl-C deferred, together with the removal of the ``owned`` names that
    this set does not write (files an earlier set wrote). Other files in ``directory`` are
    left alone. A failure or Ctrl-C before the swap leaves ``directory`` as it was; a
    failure during the swap puts the earlier files back. A missing ``directory`` (and its
    parents) is created; when it did not exist, the staged directory is renamed into place.
    Raises :class:`OSError` (``NotADirectoryError`` when ``directory`` or a parent is a file,
    ``IsADirectoryError`` when a directory holds the place of one of ``files``).
    """
    target = Path(directory)
    names = list(files)
    for name in [*names, *owned]:
        if not name or name in (".", "..") or "/" in name or os.sep in name:
            raise ValueError(f"replace_files: expected a plain file name, received {name!r}")
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(target))
    mode = 0o666 & ~_umask()
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".staging", dir=target.parent))
        try:
            for name in names:
                _write_synced(stage / name, files[name], mode)
            os.chmod(stage, 0o777 & ~_umask())
            try:
                os.rename(stage, target)  # one step: nothing to defer
            except OSError as err:  # created meanwhile: swap the files in below
                if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
            else:
                _fsync_directory(target.parent)
                return [target / name for name in names]
            return _swap(target, stage, names, owned)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    for name in names:
        old = target / name
        if old.is_dir() and not old.is_symlink():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(old))
    stage = Path(tempfile.mkdtemp(prefix=".tdsl-staging-", dir=target))
    try:
        for name in names:
            _write_synced(stage / name, files[name], mode)
        return _swap(target, stage, names, owned)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _swap(target: Path, stage: Path, names: list[str], owned: Iterable[str]) -> list[Path]:
    """Moves the earlier files aside and the staged ones in, then removes the staging
    directory, with signals deferred; undoes the moves on any failure."""
    backup = stage / ".previous"
    backup.mkdir()
    moved: list[str] = []
    placed: list[str] = []
    replaced = sorted(set(names) | set(owned))
    with _signals_deferred():
        try:
            for name in replaced:
                old = target / name
                if old.is_symlink() or (old.exists() and not old.is_dir()):
                    os.rename(old, backup / name)
                    moved.append(name)
            for name in names:
                os.rename(stage / name, target / name)
                placed.append(name)
        except BaseException:
            for name in placed:
                try:
                    os.rename(target / name, stage / name)
                except OSError:
                    pass
            for name in moved:
                try:
                    os.rename(backup / name, target / name)
                except OSError:
                    pass
            raise
        finally:
            shutil.rmtree(stage, ignore_errors=True)
        _fsync_directory(target)
    return [target / name for name in names]


def failure_dir(what: str = "failure") -> Path:
    """A new directory ``tdsl-<what>-<date>-<time>-<random>`` that outlives tdsl, for the
    evidence of a failure (compiler output, the scripts it read, its dumps). It is made
    under ``$TDSL_FAILURE_DIR`` when set, else under the system's temporary directory."""
    parent = Path(os.environ.get("TDSL_FAILURE_DIR") or tempfile.gettempdir())
    parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.mkdtemp(prefix=f"tdsl-{what}-{stamp}-", dir=parent))


def cache_root() -> Path:
    """The user's tdsl cache directory: ``$TDSL_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdsl``
    (``~/.cache/tdsl``). Not created here."""
    root = os.environ.get("TDSL_CACHE_DIR")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "tdsl"
