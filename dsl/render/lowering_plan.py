"""The plans of :class:`~tdsl.spec.lowering.CpuLowering` and
:class:`~tdsl.spec.lowering.GpuLowering` actions: the fields of the
``#iree_codegen.compilation_info`` each one attaches (``strategies/cpu_lowering.mlir.j2``,
``strategies/gpu_lowering.mlir.j2``). Emits no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..spec.lowering import CpuLowering, GpuLowering
from ..targets import Target
from .plan import ActionPlan


@dataclass(frozen=True)
class TileLevel:
    """One tiling level of a lowering config: ``name = sizes``."""

    name: str
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class PipelineOption:
    """One entry of ``#iree_gpu.pipeline_options<..>``: ``name = value`` (``value`` is the
    attribute's spelling: ``2``, ``true``)."""

    name: str
    value: str


@dataclass(frozen=True)
class SubgroupBasis:
    """``subgroup_basis = [counts, mapping]``."""

    counts: tuple[int, ...]
    mapping: tuple[int, ...]


@dataclass(frozen=True)
class CpuConfig(ActionPlan):
    """``#iree_cpu.lowering_config<levels>`` with ``#iree_cpu.pipeline<pipeline>``."""

    levels: tuple[TileLevel, ...]
    pipeline: str


@dataclass(frozen=True)
class GpuConfig(ActionPlan):
    """``#iree_gpu.lowering_config<{..}>`` with ``#iree_gpu.pipeline<pipeline>``, the
    workgroup and subgroup sizes and the pipeline ``options`` (none: no options attribute)."""

    levels: tuple[TileLevel, ...]
    subgroup_basis: Optional[SubgroupBasis]
    mma_kind: Optional[str]
    padding: Optional[tuple[int, ...]]
    promote_operands: tuple[int, ...]
    pipeline: str
    workgroup_size: tuple[int, ...]
    subgroup_size: int
    options: tuple[PipelineOption, ...]


_BOOL = {True: "true", False: "false"}


def plan_cpu_lowering(strategy: CpuLowering, symbol: str, target: Target) -> CpuConfig:
    """The set levels in IREE's order and the pipeline."""
    levels = tuple(TileLevel(name, sizes) for name, sizes in strategy.levels())
    return CpuConfig(levels, strategy.pipeline)


def plan_gpu_lowering(strategy: GpuLowering, symbol: str, target: Target) -> GpuConfig:
    """The set levels, the optional attributes and the pipeline options that are set."""
    s = strategy
    options = []
    if s.prefetch_num_stages is not None:
        options.append(PipelineOption("prefetch_num_stages", str(s.prefetch_num_stages)))
    if s.use_igemm_convolution is not None:
        options.append(PipelineOption("use_igemm_convolution", _BOOL[s.use_igemm_convolution]))
    basis = SubgroupBasis(*s.subgroup_basis) if s.subgroup_basis is not None else None
    return GpuConfig(
        levels=tuple(TileLevel(name, sizes) for name, sizes in s.levels()),
        subgroup_basis=basis,
        mma_kind=s.mma_kind,
        padding=s.padding,
        promote_operands=s.promote_operands,
        pipeline=s.pipeline,
        workgroup_size=s.workgroup_size,
        subgroup_size=s.subgroup_size,
        options=tuple(options),
    )
