"""The rocm target: which AMD GPU to generate code for, the flags that select it and the
checks its strategies must pass (:mod:`tdsl.targets.amdgpu_checks`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from ..model.base import SymbolName
from ..model.codegen import Codegen
from ..model.kinds import Backend, MatcherKind, StrategyKind
from ..model.lowering import GpuLowering
from .amdgpu_checks import check_codegen, check_gpu_lowering
from .amdgpu_facts import ARCHITECTURES, AmdGpuArch
from .kind import TargetKind


class AmdGpuTarget(TargetKind):
    """A rocm target. Emits ``--iree-hal-target-device=hip --iree-rocm-target=<arch>``.

    Example::

        AmdGpuTarget(arch="gfx942")   # facts: subgroup 64, 64 KiB LDS, CDNA3 MFMA set
    """

    backend: ClassVar[Backend] = Backend.ROCM
    default_name: ClassVar[str] = "gfx942"
    # Named ops that are linalg.generic by the time codegen configuration runs.
    ops_gone_at_codegen: ClassVar[tuple[str, ...]] = (
        "linalg.matmul",
        "linalg.batch_matmul",
        "linalg.conv_",
        "linalg.matvec",
    )

    kind: Literal["rocm"] = "rocm"
    """The discriminator: --iree-hal-target-device=hip."""
    name: SymbolName = default_name
    """The target's name, which rules name in their target field."""
    arch: Literal["gfx942"] = "gfx942"
    """--iree-rocm-target: the GPU architecture whose facts check every GPU strategy."""

    @property
    def facts(self) -> AmdGpuArch:
        """The facts of :attr:`arch` (subgroup, LDS, registers, MFMA intrinsics)."""
        return ARCHITECTURES[self.arch]

    @property
    def gpu_facts(self) -> AmdGpuArch:
        return self.facts

    def compile_flags(self) -> list[str]:
        """The ``iree-compile`` flags that select this target (no strategy files)."""
        return ["--iree-hal-target-device=hip", f"--iree-rocm-target={self.arch}"]

    def check_strategy(self, index: int, match: MatcherKind, strategy: StrategyKind, target_index: int) -> None:
        """Raises ``problem`` when ``strategy`` cannot run on this GPU."""
        if isinstance(strategy, GpuLowering):
            check_gpu_lowering(match, strategy, self.facts)
        elif isinstance(strategy, Codegen):
            check_codegen(match, strategy, self.facts)
