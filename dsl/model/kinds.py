"""What a strategy or matcher kind declares about itself: its injection point, the backends
it runs on and the template that renders it.

Every strategy class derives from :class:`StrategyKind` and every matcher class from
:class:`MatcherKind`, and sets the class attributes below; :mod:`tdsl.model.registry`
lists the classes. Rendering, target checks and the compile report read these attributes,
so no code switches on a ``kind`` string. Emits nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Optional

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


@dataclass(frozen=True)
class LoopShape:
    """What a matcher fixes about the contraction it selects: the role of each loop
    (``b``, ``m``, ``n``, ``k``, in loop order) and, for the lhs, rhs and result, either
    the loop each dimension indexes (``operands``, tensor order) or only their ranks.

    ``linalg.matmul`` is ``roles = ("m", "n", "k")``, ``operands = ((0, 2), (2, 1), (0, 1))``.
    """

    roles: tuple[str, ...]
    ranks: tuple[int, int, int]
    operands: Optional[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = None
    source: str = ""
    """Where ``operands`` come from, for messages (``operand_layout 'mk_kn'``)."""

    @staticmethod
    def of(
        roles: tuple[str, ...],
        operands: Optional[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = None,
        source: str = "",
    ) -> "LoopShape":
        """The shape with these roles; operand ranks from ``operands`` or, without them, from
        the roles (lhs: b, m, k; rhs: b, k, n; result: b, m, n)."""
        if operands is not None:
            ranks = (len(operands[0]), len(operands[1]), len(operands[2]))
        else:
            count = {r: roles.count(r) for r in "bmnk"}
            ranks = (
                count["b"] + count["m"] + count["k"],
                count["b"] + count["k"] + count["n"],
                count["b"] + count["m"] + count["n"],
            )
        return LoopShape(roles, ranks, operands, source)

    def parallel(self, loop: int) -> bool:
        """Loop ``loop`` is parallel (b, m, n); ``k`` loops are reductions."""
        return self.roles[loop] != "k"


class StrategyKind(StrategyModel):
    """Base of every strategy kind.

    A subclass sets ``kind`` (its discriminator, a ``Literal`` field), ``name`` (a
    ``SymbolName`` field) and these class attributes:

    * ``injection``: the script it renders into;
    * ``backends``: the backends it can run on;
    * ``template``: the template (under ``tdsl.templates``) whose ``action`` macro renders
      the rule's action sequence; a ``definition`` macro, if present, renders a named
      sequence placed before every matcher (a Codegen strategy's lowering sequence);
    * ``raw`` (default False): the kind holds verbatim MLIR (an imported escape hatch).
    """

    _names_errors = True
    injection: ClassVar[Injection]
    backends: ClassVar[frozenset[Backend]]
    template: ClassVar[str]
    raw: ClassVar[bool] = False
    """True for the raw-MLIR escape hatches (:mod:`tdsl.model.raw`): the compile report says
    such a rule is raw MLIR, kept verbatim from an imported spec."""

    if TYPE_CHECKING:  # fields every subclass declares (pydantic keeps subclass field order)
        kind: str
        name: str

    def loops(self) -> Optional[tuple[str, int]]:
        """(field, loop count) when this strategy fixes the matched op's loop count."""
        return None

    def check_match(self, match: "MatcherKind") -> None:
        """Raises ``problem(..., strategy=self.name)`` when this strategy cannot work on the
        ops ``match`` selects (target-independent; run by :class:`tdsl.Rule`)."""

    def defined_symbols(self) -> tuple[str, ...]:
        """The payload symbols this strategy's script defines at its top (one rule per
        target may define each; :class:`tdsl.StrategySet` checks)."""
        return ()


class MatcherKind(StrategyModel):
    """Base of every matcher kind.

    A subclass sets ``kind`` (its discriminator) and ``template``: the template whose
    ``leaf`` macro renders the matcher's ops inside a matcher sequence, or None for a
    matcher that is rendered as the scope of a ``foreach_match`` instead (a function).
    """

    template: ClassVar[Optional[str]]
    raw: ClassVar[bool] = False
    """True for :class:`tdsl.model.raw.RawMatch`, a matcher kept as verbatim MLIR."""

    if TYPE_CHECKING:
        kind: str

    def alternatives(self) -> list[dict[str, object]]:
        """The concrete alternatives this matcher expands to (one matcher sequence each)."""
        return [{}]

    def sequence_count(self) -> int:
        """``len(self.alternatives())``, without building them (kinds whose alternatives
        multiply override it)."""
        return len(self.alternatives())

    def loop_count(self) -> Optional[int]:
        """The number of loops of every op this matcher accepts, when it fixes it."""
        return None

    def loop_shape(self) -> Optional[LoopShape]:
        """The loop roles (and operand layouts) of the contraction this matcher selects,
        when it fixes them."""
        return None

    def operand_count(self) -> Optional[int]:
        """The number of operands of every op this matcher accepts, when it fixes it."""
        return None

    def selects_convolutions(self) -> bool:
        """Every op this matcher accepts is a convolution."""
        return False

    def convolution_loops(self, igemm: bool) -> Optional[tuple[int, int]]:
        """(fewest, most) loops of the convolutions this matcher selects as codegen sees them
        (``igemm``: after IREE's im2col rewrite), when it bounds them."""
        return None
