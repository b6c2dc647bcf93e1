"""What a tuner for one target kind is, what it returns, and the registry the CLI reads.

* :class:`TargetTuner` -- tunes a program for its target kind (``llvm-cpu``: measured here,
  :class:`tdsl.tune.tuner.CpuTuner`; ``rocm``: ranked by a cost model and compile-checked,
  :class:`tdsl.tune.gfx942.Gfx942Tuner`), searching ``budget`` candidates per op and space;
* :class:`TuneOutcome` -- the one result every tuner returns: the emitted set, its comments
  and header notes, the report, the table (what :mod:`tdsl.tune.outputs` writes);
* :func:`register_tuner` / :func:`tuner_for` -- the tuners by target kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

from ..compiler.progress import Progress
from ..errors import ArgumentError
from ..programs.program import Program
from ..sets.space import Space
from ..sets.strategy_set import StrategySet
from .database import Database
from .executor import Executor
from .session import TuneOptions


class TuneOutcome(Protocol):
    """A tuning's result, whatever the target: what ``tdsl tune`` writes and prints."""

    @property
    def tuned(self) -> StrategySet:
        """The emitted set (named ``tuned``)."""
        ...

    @property
    def interrupted(self) -> bool:
        """Ctrl-C stopped it: the outcome holds what was measured before."""
        ...

    @property
    def command(self) -> str:
        """The command the emitted files name as their source (``tdsl tune``)."""
        ...

    def comments(self) -> list[str]:
        """One comment per rule of :attr:`tuned`, in order: what it pins, what it measured."""
        ...

    def notes(self) -> list[str]:
        """The header lines of the emitted files."""
        ...

    def report(self) -> dict[str, object]:
        """The body of ``report.json`` (after the machine header)."""
        ...

    def table(self) -> str:
        """The text table ``tdsl tune`` prints."""
        ...

    def plot(self, path: Path) -> bool:
        """Writes ``path`` (a PNG of the candidates' times) where there is something to plot."""
        ...


Report = Callable[[str], None]
"""Receives one line per stage of a tuning (the best so far)."""


class TargetTuner(Protocol):
    """Tunes programs for one target kind."""

    @property
    def kind(self) -> str:
        """The target kind (:attr:`tdsl.CpuTarget.kind`) it tunes for."""
        ...

    @property
    def searches_user_spaces(self) -> bool:
        """Whether ``space=`` (``tdsl tune --space``) is accepted."""
        ...

    def tune(
        self,
        program: Program,
        *,
        options: TuneOptions,
        executor: Executor,
        cache: Database,
        progress: Progress,
        report: Report,
        space: Space | None = None,
    ) -> TuneOutcome:
        """Tunes ``program`` with ``options``, building and timing on ``executor`` and
        reusing and storing in ``cache``."""
        ...


_TUNERS: dict[str, TargetTuner] = {}


def register_tuner(tuner: TargetTuner) -> None:
    """Makes ``tuner`` the one for its target kind."""
    _TUNERS[tuner.kind] = tuner


def tuner_for(kind: str, flag: str = "--target") -> TargetTuner:
    """The tuner of target kind ``kind``; one line naming ``flag`` where there is none."""
    if kind not in _TUNERS:
        raise ArgumentError(
            f"{flag}: expected a target of kind {' or '.join(sorted(_TUNERS))}, received one of kind {kind!r} (no tuner for it)"
        )
    return _TUNERS[kind]


def tunable_kinds() -> list[str]:
    """The target kinds with a tuner."""
    return sorted(_TUNERS)
