"""Program knobs: the settings of a target that change how IREE builds the whole program
(data tiling, ukernels, im2col, large vectors, ...), against IREE's defaults on that target.

A knob is a field whose value differs from :meth:`TargetKind.baseline`'s; its flags are the
``iree-compile`` flags that value adds. A knob listed in :attr:`TargetKind.ready_knobs` was
chosen by a ready set (``auto()``) and is optional: :func:`without_ready_knobs` is the target
a failed build falls back to. Reports list :func:`program_knobs` so that "0 rules applied"
never hides a build that differs from IREE default. Emits no flags of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from .kind import TargetKind

_Target = TypeVar("_Target", bound=TargetKind)


@dataclass(frozen=True)
class ProgramKnob:
    """One setting in force: ``field`` = ``value`` adds ``flags``; ``origin`` says who set it."""

    field: str
    value: object
    default: object
    flags: tuple[str, ...]
    origin: str
    optional: bool
    """Chosen by a ready set (:attr:`TargetKind.ready_knobs`): dropped where the build fails."""

    def phrase(self) -> str:
        """``data tiling on``, ``ukernels none``."""
        words = self.field.replace("_", " ")
        if isinstance(self.value, bool):
            return f"{words} {'on' if self.value else 'off'}"
        return f"{words} {self.value}"

    def text(self) -> str:
        """``data tiling on (auto(), AVX2: --iree-opt-data-tiling)``."""
        flags = f": {' '.join(self.flags)}" if self.flags else ""
        return f"{self.phrase()} ({self.origin}{flags})"

    def turn_off(self) -> str:
        """How a user turns this knob off: the field at IREE's default, or the overriding flag."""
        how = f"{self.field}={self.default!r}"
        overrides = [_override(flag) for flag in self.flags]
        if overrides and all(overrides):
            how += " or --iree-flag=" + " --iree-flag=".join(o for o in overrides if o)
        return how

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "value": self.value,
            "default": self.default,
            "flags": list(self.flags),
            "origin": self.origin,
            "optional": self.optional,
        }


def _override(flag: str) -> str | None:
    """The flag that undoes ``flag`` when passed after it (the last occurrence wins): a bare
    boolean flag set false, ``=false`` set true; None for valued flags."""
    if "=" not in flag:
        return f"{flag}=false"
    name, value = flag.split("=", 1)
    if value in ("false", "true"):
        return f"{name}={'true' if value == 'false' else 'false'}"
    return None


def program_knobs(target: TargetKind) -> tuple[ProgramKnob, ...]:
    """The knobs of ``target`` that differ from IREE's defaults on it, in field order."""
    base = target.baseline()
    base_flags = base.compile_flags()
    own = set(TargetKind.model_fields) | {"kind", "name"}
    knobs = []
    for field in type(target).model_fields:
        value, default = getattr(target, field), getattr(base, field)
        if field in own or value == default:
            continue
        alone = base.model_copy(update={field: value}).compile_flags()
        optional = field in target.ready_knobs
        knobs.append(
            ProgramKnob(
                field=field,
                value=value,
                default=default,
                flags=tuple(flag for flag in alone if flag not in base_flags),
                origin=target.ready_origin if optional else f"target {target.name!r}",
                optional=optional,
            )
        )
    return tuple(knobs)


def without_ready_knobs(target: _Target) -> _Target:
    """``target`` with its ready knobs at IREE's defaults (the rest as it is)."""
    base = target.baseline()
    update: dict[str, object] = {knob: getattr(base, knob) for knob in target.ready_knobs}
    return target.model_copy(update={**update, "ready_knobs": (), "ready_origin": ""})


def knobs_line(knobs: tuple[ProgramKnob, ...]) -> str:
    """``data tiling on (auto(), AVX2: --iree-opt-data-tiling); ...``, or ``IREE's defaults``."""
    return "; ".join(k.text() for k in knobs) if knobs else "IREE's defaults"
