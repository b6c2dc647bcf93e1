"""What a strategy or matcher kind declares about itself: its injection point, the backends
it runs on and the template that renders it.

Every strategy class derives from :class:`StrategyKind` and every matcher class from
:class:`MatcherKind`, and sets the class attributes below; :mod:`tdsl.spec.registry`
lists the classes. Rendering, target checks and the compile report read these attributes,
so no code switches on a ``kind`` string. Emits nothing.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Optional

from .base import StrategyModel


class _Named(str, Enum):
    """A string enum that prints as its value (``f"{Backend.ROCM}"`` is ``rocm``)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Injection(_Named):
    """Where a rendered script enters ``iree-compile`` (one script file per point)."""

    PREPROCESSING = "preprocessing"
    TUNING_SPEC = "tuning_spec"
    CODEGEN_LIBRARY = "codegen_library"


class Backend(_Named):
    """An IREE HAL target backend."""

    LLVM_CPU = "llvm-cpu"
    ROCM = "rocm"


class Phase(_Named):
    """An ``iree-compile --compile-to`` phase whose IR tdsl can dump."""

    PREPROCESSING = "preprocessing"
    DISPATCH_CREATION = "dispatch-creation"
    EXECUTABLE_CONFIGURATIONS = "executable-configurations"
    EXECUTABLE_TARGETS = "executable-targets"


class StrategyKind(StrategyModel):
    """Base of every strategy kind.

    A subclass sets ``kind`` (its discriminator, a ``Literal`` field), ``name`` (a
    ``SymbolName`` field) and these class attributes:

    * ``injection``: the script it renders into;
    * ``backends``: the backends it can run on;
    * ``template``: the template (under ``tdsl.templates``) whose ``action`` macro renders
      the rule's action sequence; a ``definition`` macro, if present, renders a named
      sequence placed before every matcher (a Codegen strategy's lowering sequence).
    """

    _names_errors = True
    injection: ClassVar[Injection]
    backends: ClassVar[frozenset[Backend]]
    template: ClassVar[str]

    if TYPE_CHECKING:  # fields every subclass declares (pydantic keeps subclass field order)
        kind: str
        name: str

    def loops(self) -> Optional[tuple[str, int]]:
        """(field, loop count) when this strategy fixes the matched op's loop count."""
        return None


class MatcherKind(StrategyModel):
    """Base of every matcher kind.

    A subclass sets ``kind`` (its discriminator) and ``template``: the template whose
    ``leaf`` macro renders the matcher's ops inside a matcher sequence, or None for a
    matcher that is rendered as the scope of a ``foreach_match`` instead (a function).
    """

    template: ClassVar[Optional[str]]

    if TYPE_CHECKING:
        kind: str

    def alternatives(self) -> list[dict[str, Any]]:
        """The concrete alternatives this matcher expands to (one matcher sequence each)."""
        return [{}]

    def loop_count(self) -> Optional[int]:
        """The number of loops of every op this matcher accepts, when it fixes it."""
        return None
