"""The target registry: the one list of target kinds, the :data:`Target` union strategy
files are validated against (built from the list), and the lookup that turns a target name
(``--target cpu``, ``tdsl.compile(..., "gfx942")``) into a target. Adding a target kind
means adding its class to :data:`TARGET_KINDS` (ARCHITECTURE.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional, Union

from pydantic import Field

from ..errors import TargetError
from ..model.kinds import Backend
from .amdgpu import AmdGpuTarget
from .cpu import CpuTarget
from .kind import TargetKind

TARGET_KINDS: tuple[type[TargetKind], ...] = (CpuTarget, AmdGpuTarget)
"""Every target kind, in the order names are listed; :data:`Target` is their union."""

if TYPE_CHECKING:
    Target = TargetKind
else:
    Target = Annotated[Union[TARGET_KINDS], Field(discriminator="kind")]


def default_targets() -> tuple[TargetKind, ...]:
    """One target of each kind with its defaults (``cpu``, ``gfx942``, ...): the targets of
    a set that names none, and what a bare target name stands for."""
    return tuple(kind.default() for kind in TARGET_KINDS)


def target_names() -> list[str]:
    """The names :func:`resolve` accepts, in registry order."""
    return [kind.default_name for kind in TARGET_KINDS]


def named(name: str) -> Optional[TargetKind]:
    """The default target called ``name``, or None."""
    return next((kind.default() for kind in TARGET_KINDS if kind.default_name == name), None)


def resolve(target: Union[TargetKind, str]) -> TargetKind:
    """``target`` itself, or the default target it names; a name no kind has raises
    :class:`~tdsl.errors.TargetError` listing the names."""
    if isinstance(target, TargetKind):
        return target
    found = named(target)
    if found is None:
        raise TargetError(f"target {target!r}: expected one of {', '.join(target_names())}")
    return found


def default_for(backend: Backend) -> TargetKind:
    """The default target of the first kind on ``backend`` (the target an imported spec's
    configs for that backend are for)."""
    return next(kind.default() for kind in TARGET_KINDS if kind.backend is backend)
