"""Progress of long work (compiles, benchmark samples, runs): what runs now, how many steps
are left and an estimate of the time they take.

Library functions take a :class:`Progress` and report each step to it; the base reports
nothing (:data:`NO_PROGRESS`). :class:`RichProgress` draws one bar per kind of step with
``rich`` (compiles and samples take very different times, so each has its own rate and
ETA); the command line uses it when stderr is a terminal.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import TaskID


class Progress:
    """Receives the steps of long work; this base ignores them."""

    def expect(self, task: str, steps: int) -> None:
        """``steps`` more steps of kind ``task`` (``compile``, ``sample``, ``run``) will come."""

    def begin(self, task: str, what: str) -> None:
        """A step of ``task`` starts; ``what`` names it."""

    def advance(self, task: str) -> None:
        """A step of ``task`` is done."""

    @contextmanager
    def step(self, task: str, what: str) -> Iterator[None]:
        """One step: ``with progress.step("compile", "IREE default"): ...``."""
        self.begin(task, what)
        yield
        self.advance(task)

    def close(self) -> None:
        """No more steps."""


NO_PROGRESS = Progress()


class RichProgress(Progress):
    """One ``rich`` progress bar per task, with the step running, steps done and an ETA."""

    def __init__(self, console: "Console | None" = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as Bars,
        )

        self._bars = Bars(
            TextColumn("{task.description:<8}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[what]}"),
            console=console if console is not None else Console(stderr=True),
            transient=False,
        )
        self._tasks: dict[str, "TaskID"] = {}
        self._started = False

    def expect(self, task: str, steps: int) -> None:
        if not self._started:
            self._bars.start()
            self._started = True
        if task in self._tasks:
            current = self._bars.tasks[self._index(task)].total or 0
            self._bars.update(self._tasks[task], total=current + steps)
        else:
            self._tasks[task] = self._bars.add_task(task, total=steps, what="")

    def _index(self, task: str) -> int:
        return [t.id for t in self._bars.tasks].index(self._tasks[task])

    def begin(self, task: str, what: str) -> None:
        if task not in self._tasks:
            self.expect(task, 1)
        self._bars.update(self._tasks[task], what=what)

    def advance(self, task: str) -> None:
        if task in self._tasks:
            self._bars.update(self._tasks[task], advance=1)

    def close(self) -> None:
        if self._started:
            for task in self._tasks.values():
                self._bars.update(task, what="")
            self._bars.stop()
            self._started = False
