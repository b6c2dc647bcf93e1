"""Compilation targets and every per-target fact and target-dependent check: llvm-cpu
(:mod:`.cpu`, the host's ISA and caches in :mod:`.host`) and AMD GPU (:mod:`.amdgpu`, facts in
:mod:`.amdgpu_facts`, resource model in :mod:`.amdgpu_resources`)."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from .amdgpu import AmdGpuTarget
from .amdgpu_facts import GFX942, AmdGpuArch, MmaIntrinsic
from .cpu import CpuTarget

TARGET_KINDS = (CpuTarget, AmdGpuTarget)
"""Every target kind; :data:`Target` is their discriminated union."""

Target = Annotated[Union[CpuTarget, AmdGpuTarget], Field(discriminator="kind")]

__all__ = ["GFX942", "TARGET_KINDS", "AmdGpuArch", "AmdGpuTarget", "CpuTarget", "MmaIntrinsic", "Target"]
