"""``tdsl tune``: declared search spaces measured against IREE's paths.

The interfaces (after TVM's meta_schedule):

* :class:`~tdsl.tune.target_tuner.TargetTuner` -- one per target kind, in a registry
  (:func:`~tdsl.tune.target_tuner.tuner_for`): :class:`~tdsl.tune.tuner.CpuTuner` (program
  knobs, one op at a time, the model pass, numerics) and
  :class:`~tdsl.tune.gfx942.Gfx942Tuner` (ranked by a cost model, compile-checked); both
  return a :class:`~tdsl.tune.target_tuner.TuneOutcome`, what
  :mod:`tdsl.tune.outputs` writes (tuned.py, tuned.yaml, report.json, the plot);
* the CPU stages, objects run in order: :class:`~tdsl.tune.stages.ProgramStage`,
  :class:`~tdsl.tune.stages.OpStage`, :class:`~tdsl.tune.model_stage.ModelStage`;
* :class:`~tdsl.tune.search.SearchStrategy` -- proposes a space's candidates, is told how
  they did (:class:`~tdsl.tune.search.ScreenThenNeighbours`);
* :class:`~tdsl.tune.executor.Builder` and :class:`~tdsl.tune.executor.Runner` -- build in
  parallel and time rounds, local (:class:`~tdsl.tune.executor.LocalExecutor`) or on Ray
  (:class:`~tdsl.tune.ray_executor.RayExecutor`);
* :class:`~tdsl.tune.database.Database` -- builds, samples, profiles and verdicts
  (:class:`~tdsl.tune.cache.TuneCache`, SQLite);
* :mod:`tdsl.tune.measure` -- interleaved rounds, medians, noise, the verdict.

The ready spaces are strategy sets with knobs (:class:`tdsl.sets.space.Space`) that the ready
library (:mod:`tdsl.strategies`) registers in :mod:`tdsl.tune.ready`.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .cache import TuneCache
from .executor import Executor, LocalExecutor
from .gfx942 import Gfx942Result, Gfx942Tuner, tune_gfx942
from .outputs import table, write_outputs
from .target_tuner import TargetTuner, TuneOutcome, tunable_kinds, tuner_for
from .tuner import CpuTuner, TuneFailed, TuneOptions, TuneResult, tune


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
        from .ray_executor import RayExecutor

        executor = RayExecutor(address=address)
    else:
        executor = LocalExecutor(workers)
    try:
        yield executor
    finally:
        executor.close()


__all__ = [
    "CpuTuner",
    "Executor",
    "Gfx942Result",
    "Gfx942Tuner",
    "LocalExecutor",
    "TargetTuner",
    "TuneCache",
    "TuneFailed",
    "TuneOptions",
    "TuneOutcome",
    "TuneResult",
    "open_cache",
    "open_executor",
    "table",
    "tunable_kinds",
    "tune",
    "tune_gfx942",
    "tuner_for",
    "write_outputs",
]
