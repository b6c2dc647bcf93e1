"""``tdsl tune``: declared search spaces measured against IREE's paths.

* :mod:`tdsl.tune.tuner` -- the CPU loop (program-level knobs, one op at a time, the model
  pass, keep-the-baseline, numerics) and :func:`tune`;
* :mod:`tdsl.tune.gfx942` -- gfx942 candidates ranked by a cost model and compile-checked;
* :mod:`tdsl.tune.measure` -- interleaved rounds, medians, noise, the verdict;
* :mod:`tdsl.tune.executor` -- builders and runners, local or on Ray;
* :mod:`tdsl.tune.cache` -- the SQLite store of builds, samples and verdicts;
* :mod:`tdsl.tune.outputs` -- tuned.py, tuned.yaml, report.json, the table and the plot.

The spaces themselves are strategy sets with knobs (:mod:`tdsl.model.knobs`,
:class:`tdsl.sets.space.Space`); the ready ones are in :mod:`tdsl.strategies.cpu.space`
and :mod:`tdsl.strategies.gpu.space`.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ..targets import AmdGpuTarget, CpuTarget
from .cache import TuneCache
from .executor import Executor, LocalExecutor
from .outputs import table, write_outputs
from .gfx942 import Gfx942Result, tune_gfx942
from .tuner import TuneFailed, TuneOptions, TuneResult, tune


TUNERS: dict[str, Callable[..., Any]] = {CpuTarget.kind_name(): tune, AmdGpuTarget.kind_name(): tune_gfx942}
"""The tuner of each target kind (``tdsl tune --target``), keyed by
:meth:`tdsl.targets.TargetKind.kind_name`; each takes the program and the keywords of
:func:`tune` (``space`` only where the target runs on this machine)."""


@contextmanager
def open_cache(path: Path | None = None) -> Iterator[TuneCache]:
    """The tuning cache at ``path`` (default: the user cache dir), closed on exit."""
    cache = TuneCache(path)
    try:
        yield cache
    finally:
        cache.close()


@contextmanager
def open_executor(kind: str = "local", address: str = "auto", workers: int | None = None) -> Iterator[Executor]:
    """A local process pool or a Ray cluster at ``address`` (``tdsl[ray]``), closed on exit."""
    executor: Executor
    if kind == "ray":
        from .executor import RayExecutor

        executor = RayExecutor(address=address)
    else:
        executor = LocalExecutor(workers)
    try:
        yield executor
    finally:
        executor.close()


__all__ = ["TUNERS", "Gfx942Result", "tune_gfx942", "Executor", "LocalExecutor", "TuneCache", "TuneFailed", "TuneOptions", "TuneResult", "open_cache", "open_executor", "table", "tune", "write_outputs"]
