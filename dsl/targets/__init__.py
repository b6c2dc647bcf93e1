"""Compilation targets: llvm-cpu and AMD GPU (rocm)."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from .amdgpu import GFX942, AmdGpuArch, AmdGpuTarget, MmaIntrinsic
from .cpu import CpuTarget

Target = Annotated[Union[CpuTarget, AmdGpuTarget], Field(discriminator="kind")]

__all__ = ["GFX942", "AmdGpuArch", "AmdGpuTarget", "CpuTarget", "MmaIntrinsic", "Target"]
