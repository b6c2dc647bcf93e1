"""Compilation targets and every per-target fact and target-dependent check: the base
:class:`TargetKind` (:mod:`.kind`), the registry that lists the kinds and resolves names
(:mod:`.registry`), llvm-cpu (:mod:`.cpu`, the host's ISA and caches in :mod:`.host`) and
AMD GPU (:mod:`.amdgpu`, facts in :mod:`.amdgpu_facts`, resource model in
:mod:`.amdgpu_resources`)."""

from __future__ import annotations

from .amdgpu import AmdGpuTarget
from .amdgpu_facts import GFX942, AmdGpuArch, MmaIntrinsic
from .cpu import CpuTarget
from .kind import TargetKind
from .registry import TARGET_KINDS, Target, default_targets, named, resolve, target_names

__all__ = [
    "GFX942",
    "TARGET_KINDS",
    "AmdGpuArch",
    "AmdGpuTarget",
    "CpuTarget",
    "MmaIntrinsic",
    "Target",
    "TargetKind",
    "default_targets",
    "named",
    "resolve",
    "target_names",
]
