"""What a target kind declares about itself: :class:`TargetKind`, the base of every target.

Everything that differs between targets is an attribute or method here, so no code outside
``tdsl.targets`` tells targets apart by class or by name: its backend, the flags that select
it and IREE's own defaults on it, whether tdsl can run and time its modules on this machine,
the GPU facts its codegen plans and resource report read, and the checks of its rules.
Higher layers keep registries keyed by :meth:`TargetKind.kind_name` (the tuner, the ready
sets of ``tdsl ops``). Emits nothing.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar, Optional, Sequence

from pydantic import model_validator
from typing_extensions import Self

from ..errors import StrategyError, TargetError
from ..model.base import StrategyModel, problem
from ..model.kinds import Backend, MatcherKind, StrategyKind
from .amdgpu_facts import AmdGpuArch


class TargetKind(StrategyModel):
    """Base of every target. A subclass sets ``kind`` (its discriminator, a ``Literal``),
    ``name`` (defaulting to :attr:`default_name`), the class attributes below and
    :meth:`compile_flags` / :meth:`check_strategy`; the rest has defaults.

    * ``backend``: the IREE backend its strategies must run on (``StrategyKind.backends``);
    * ``default_name``: the name of the target a set gets by default and ``--target`` names;
    * ``ops_gone_at_codegen``: prefixes of named ops that are ``linalg.generic`` by codegen;
    * ``runs_on_host``: ``tdsl run``, ``tdsl bench`` and ``tdsl ops --profile`` can execute
      its modules on this machine.
    """

    backend: ClassVar[Backend]
    default_name: ClassVar[str]
    ops_gone_at_codegen: ClassVar[tuple[str, ...]] = ()
    runs_on_host: ClassVar[bool] = False

    if TYPE_CHECKING:  # fields every subclass declares (pydantic keeps subclass field order)
        kind: str
        name: str

    ready_knobs: tuple[str, ...] = ()
    """Fields of this target that a ready set chose for the whole program (``auto()``'s
    data tiling): optional like ready rules. A build that fails with them is made again
    without them (IREE's defaults for those fields), with a note naming them and the error."""
    ready_origin: str = ""
    """Who chose :attr:`ready_knobs`, as reports show it (``auto(), AVX2``)."""

    @model_validator(mode="after")
    def _ready_knobs_are_knobs(self) -> Self:
        knobs = set(type(self).model_fields) - set(TargetKind.model_fields) - {"kind", "name"}
        for i, knob in enumerate(self.ready_knobs):
            if knob not in knobs:
                raise problem(f"ready_knobs[{i}]", f"a field of this target, one of {sorted(knobs)}", knob)
        if bool(self.ready_knobs) != bool(self.ready_origin):
            raise problem(
                "ready_origin",
                "a name (e.g. 'auto(), AVX2') exactly when ready_knobs lists fields",
                self.ready_origin,
            )
        return self

    @classmethod
    def kind_name(cls) -> str:
        """The discriminator of this kind (``kind`` in strategy files), the key of the
        registries higher layers keep per target kind."""
        default = cls.model_fields["kind"].default
        assert isinstance(default, str), f"{cls.__name__}.kind needs a default"
        return default

    @classmethod
    def default(cls) -> Self:
        """The target of this kind with every field at its default (named :attr:`default_name`)."""
        target = cls.model_validate({})
        assert isinstance(target, cls)
        return target

    @classmethod
    def expect(cls, target: "TargetKind", what: str) -> Self:
        """``target`` as a target of this kind; raises :class:`~tdsl.errors.TargetError`
        naming ``what`` needs this kind otherwise."""
        if not isinstance(target, cls):
            raise TargetError(f"{what}: expected a {cls.kind_name()} target, received {target.name!r} ({target.kind})")
        return target

    @abstractmethod
    def compile_flags(self) -> list[str]:
        """The ``iree-compile`` flags that select this target (no strategy files)."""

    @abstractmethod
    def check_strategy(self, index: int, match: MatcherKind, strategy: StrategyKind, target_index: int) -> None:
        """Raises ``problem`` when rule ``index`` (``match`` -> ``strategy``) cannot work
        on this target (the set's ``targets[target_index]``)."""

    def check_rules(self, rules: Sequence[tuple[int, MatcherKind, StrategyKind]], target_index: int) -> None:
        """Raises ``problem`` when this target's rules (``(index, match, strategy)`` in
        order) cannot work together on it (the set's ``targets[target_index]``); none by default."""

    def baseline(self) -> Self:
        """This target with IREE's own defaults: the reference that reports and ``tdsl
        bench`` / ``tdsl run`` compare strategies against (itself, unless it has knobs)."""
        return self

    def baseline_flags(self) -> list[str]:
        """The flags of IREE's default pipeline for this target."""
        return self.baseline().compile_flags()

    def payload_rewrites(self) -> tuple[str, ...]:
        """The rewrites of the program's linalg IR this target's builds apply before
        IREE's preprocessing (:mod:`tdsl.compiler.payload_rewrites` names and applies them);
        none by default."""
        return ()

    def fallback_path(self) -> str:
        """How IREE compiles the ops no rule configures on this target (listings say it)."""
        return "IREE's default pipeline"

    @property
    def gpu_facts(self) -> Optional[AmdGpuArch]:
        """The GPU architecture whose facts (subgroup size, MMA intrinsics) codegen plans use
        and whose kernels the compile report lists (HSACO resources); None off GPUs."""
        return None

    def accepting(self, error: StrategyError) -> Optional[tuple[Self, str]]:
        """This target with the setting changed that made it refuse rules with ``error``,
        and a note that says so (imports retry with it), or None when no setting of the
        target refused them."""
        return None
