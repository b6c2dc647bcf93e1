"""Ready-set program knobs are optional: the build to make when one with them failed.

A ready set (``auto()``) turns on program knobs for the whole program (IREE's data tiling,
large vectors, im2col: :attr:`tdsl.targets.TargetKind.ready_knobs`). Where IREE fails with
them but may compile without them (IREE 3.13's data tiling cannot encode i1 tensors: a
causal bool mask), :func:`without_ready_knobs_set` is the set to build instead and
:func:`dropped_note` the note that says so. A knob the user set stays an error:
:func:`with_knob_hint` names it and how to turn it off.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from ..sets.strategy_set import StrategySet
from ..targets import Target
from ..targets.knobs import ProgramKnob, program_knobs, without_ready_knobs
from .iree_compile import CompileFailed, failure_kind

_Built = TypeVar("_Built")

EVIDENCE = "; full output in "
"""How a compile failure's message ends (:func:`tdsl.compiler.iree_compile.describe_failure`)."""


def retries_without_knobs(target: Target, failed: CompileFailed) -> bool:
    """A build for ``target`` that failed with ``failed`` is worth making again without the
    ready knobs: it has some, and the compiler did not merely run out of time."""
    timed_out = failed.result is not None and failure_kind(failed.result) == "timeout"
    return bool(target.ready_knobs) and not timed_out


def without_ready_knobs_set(strategy_set: StrategySet, target: Target) -> tuple[StrategySet, Target]:
    """``strategy_set`` with ``target`` (one of its targets) at IREE's defaults for its ready knobs."""
    plain = without_ready_knobs(target)
    targets = tuple(plain if t.name == target.name else t for t in strategy_set.targets)
    return strategy_set.model_copy(update={"targets": targets}), plain


def dropped_note(target: Target, failed: CompileFailed) -> str:
    """``built without data tiling (auto(), AVX2: --iree-opt-data-tiling): iree-compile failed with it: ...``."""
    dropped = [k for k in program_knobs(target) if k.optional]
    what = ", ".join(k.field.replace("_", " ") for k in dropped)
    flags = " ".join(f for k in dropped for f in k.flags)
    return f"built without {what} ({target.ready_origin}: {flags}): {failed}"


def with_knob_hint(failed: CompileFailed, target: Target) -> CompileFailed:
    """``failed``, its message naming the knobs the user set on ``target`` and how to turn
    each off (they may be the cause); ``failed`` itself when there are none, or when the
    first error already names a strategy field or rule (the knobs are not its cause)."""
    own: list[ProgramKnob] = [k for k in program_knobs(target) if not k.optional]
    errors = [d for d in failed.result.diagnostics if d.severity == "error"] if failed.result else []
    if not own or (errors and errors[0].strategy_field):
        return failed
    hints = "; ".join(f"{k.phrase()} (turn off: {k.turn_off()})" for k in own)
    message, evidence = str(failed), ""
    if EVIDENCE in message:  # the evidence stays last: readers take the path from the end
        message, evidence = message.rsplit(EVIDENCE, 1)
        evidence = EVIDENCE + evidence
    return CompileFailed(f"{message} [program knobs in force: {hints}]{evidence}", failed.result, failed.evidence)


def build_with_fallback(
    strategy_set: StrategySet, target: Target, build: Callable[[StrategySet, Target], _Built]
) -> tuple[_Built, tuple[str, ...]]:
    """``build(strategy_set, target)``; where it fails with ready knobs, ``build`` of the set
    without them and the note that says so. A failure that stays raises, with the knob hint."""
    try:
        return build(strategy_set, target), ()
    except CompileFailed as failed:
        if not retries_without_knobs(target, failed):
            raise with_knob_hint(failed, target) from None
        plain_set, plain = without_ready_knobs_set(strategy_set, target)
        try:
            return build(plain_set, plain), (dropped_note(target, failed),)
        except CompileFailed as again:
            raise with_knob_hint(again, plain) from None
