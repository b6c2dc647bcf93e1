"""The ready strategies of each target kind, keyed by
:meth:`tdsl.targets.TargetKind.kind_name`:

* :data:`READY_SETS`: a kind's ready set, whose coverage ``tdsl ops`` lists and which
  ``tdsl ops --emit`` writes (llvm-cpu: :func:`tdsl.strategies.cpu.auto` for the host ISA);
* :data:`CHOOSERS`: a kind's chooser, one rule per listed dispatch for ``tdsl ops --emit``
  (rocm: :func:`tdsl.strategies.gpu.dispatch.gpu_choice`).

A kind in neither lists no coverage and emits only a set it is given. Adding a kind's
ready strategies is one line here. Emits nothing.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

from ..compiler.ops import Dispatch
from ..model.kinds import MatcherKind, StrategyKind
from ..sets.strategy_set import StrategySet
from ..targets import AmdGpuTarget, CpuTarget, Target
from .gpu.dispatch import gpu_choice

ReadySet = Callable[[], StrategySet]
"""Builds a kind's ready set (for the host where it depends on it)."""
Chooser = Callable[[Dispatch, str], Union[tuple[MatcherKind, StrategyKind], str]]
"""The matcher and strategy named ``name`` for one dispatch, or why there is none."""


def _cpu_auto() -> StrategySet:
    from .cpu import auto

    return auto()


READY_SETS: dict[str, ReadySet] = {CpuTarget.kind_name(): _cpu_auto}
CHOOSERS: dict[str, Chooser] = {AmdGpuTarget.kind_name(): gpu_choice}


def ready_set(target: Target) -> Optional[StrategySet]:
    """The ready set of ``target``'s kind, or None when the kind has none."""
    make = READY_SETS.get(target.kind)
    return make() if make is not None else None


def can_emit(target: Target) -> bool:
    """``tdsl ops --emit`` can cover a program for ``target`` without a set given: its kind
    has a ready set or a chooser."""
    return target.kind in READY_SETS or target.kind in CHOOSERS
