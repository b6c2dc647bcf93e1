"""The plans of :class:`~tdsl.model.lowering.CpuLowering` and
:class:`~tdsl.model.lowering.GpuLowering` actions: the fields of the
``#iree_codegen.compilation_info`` each one attaches (``strategies/cpu_lowering.mlir.j2``,
``strategies/gpu_lowering.mlir.j2``). Emits no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..model.lowering import NO_UKERNELS, AttentionDecomposition, CpuLowering, DecomposedMatmul, GpuLowering, MmaLayout
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
class Entry:
    """``name = value`` (``value`` spelled as MLIR: ``[1, 2]``, ``"2"``, ``#iree_gpu.mma_layout<..>``)."""

    name: str
    value: str


@dataclass(frozen=True)
class DecomposedPart:
    """``name = {[tag, ]lowering_config = #iree_gpu.lowering_config<{entries}>}`` (``pv_attrs``,
    ``qk_attrs``; ``tag`` the matmul's unit attribute, empty without one)."""

    name: str
    entries: tuple[Entry, ...]
    tag: str = ""


@dataclass(frozen=True)
class Decomposition:
    """An attention op's ``decomposition_config``: its parts in the printer's (sorted) order."""

    parts: tuple[DecomposedPart, ...]


@dataclass(frozen=True)
class CpuConfig(ActionPlan):
    """``#iree_cpu.lowering_config<levels>`` with ``#iree_cpu.pipeline<pipeline>``, and the
    executable target the op carries for its ukernel choice (None: the target's)."""

    levels: tuple[TileLevel, ...]
    pipeline: str
    executable_target: Optional[str] = None


@dataclass(frozen=True)
class GpuConfig(ActionPlan):
    """``#iree_gpu.lowering_config<{..}>`` with ``#iree_gpu.pipeline<pipeline>``, the
    workgroup and subgroup sizes, the pipeline ``options`` (none: no options attribute),
    the ``counts`` (``subgroup_m_count`` / ``subgroup_n_count``), the ``llvm_func_attrs``
    and an attention op's ``decomposition``."""

    levels: tuple[TileLevel, ...]
    subgroup_basis: Optional[SubgroupBasis]
    mma_kind: Optional[str]
    padding: Optional[tuple[int, ...]]
    promote_operands: tuple[int, ...]
    pipeline: str
    workgroup_size: tuple[int, ...]
    subgroup_size: int
    options: tuple[PipelineOption, ...]
    counts: tuple[Entry, ...] = ()
    llvm_func_attrs: tuple[Entry, ...] = ()
    decomposition: Optional[Decomposition] = None


_BOOL = {True: "true", False: "false"}


def plan_cpu_lowering(strategy: CpuLowering, symbol: str, target: Target) -> CpuConfig:
    """The set levels in IREE's order and the pipeline."""
    levels = tuple(TileLevel(name, sizes) for name, sizes in strategy.levels())
    return CpuConfig(levels, strategy.pipeline, None if strategy.ukernels else NO_UKERNELS)


def plan_gpu_lowering(strategy: GpuLowering, symbol: str, target: Target) -> GpuConfig:
    """The set levels, the optional attributes and the pipeline options that are set."""
    s = strategy
    options = []
    if s.prefetch_num_stages is not None:
        options.append(PipelineOption("prefetch_num_stages", str(s.prefetch_num_stages)))
    if s.use_igemm_convolution is not None:
        options.append(PipelineOption("use_igemm_convolution", _BOOL[s.use_igemm_convolution]))
    if s.no_reduce_shared_memory_bank_conflicts is not None:
        options.append(
            PipelineOption("no_reduce_shared_memory_bank_conflicts", _BOOL[s.no_reduce_shared_memory_bank_conflicts])
        )
    if s.reorder_workgroups_strategy is not None:
        options.append(PipelineOption("reorder_workgroups_strategy", f"<{s.reorder_workgroups_strategy}>"))
    counts: tuple[Entry, ...] = ()
    if s.subgroup_m_count is not None and s.subgroup_n_count is not None:
        counts = (
            Entry("subgroup_m_count", str(s.subgroup_m_count)),
            Entry("subgroup_n_count", str(s.subgroup_n_count)),
        )
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
        counts=counts,
        llvm_func_attrs=tuple(Entry(k, v) for k, v in (s.llvm_func_attrs or {}).items()),
        decomposition=None if s.decomposition_config is None else plan_decomposition(s.decomposition_config),
    )


def _ints(values: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def mma_text(mma: MmaLayout) -> str:
    """``#iree_gpu.mma_layout<X>`` / ``#iree_gpu.virtual_mma_layout<X, col_major = true>``."""
    name = "virtual_mma_layout" if mma.virtual else "mma_layout"
    return f"#iree_gpu.{name}<{mma.intrinsic}" + (", col_major = true" if mma.col_major else "") + ">"


def _decomposed(part: DecomposedMatmul) -> tuple[Entry, ...]:
    entries = []
    if part.mma_kind is not None:
        entries.append(Entry("mma_kind", mma_text(part.mma_kind)))
    if part.promote_operands is not None:
        entries.append(Entry("promote_operands", _ints(part.promote_operands)))
    if part.subgroup_basis is not None:
        counts, mapping = part.subgroup_basis
        entries.append(Entry("subgroup_basis", f"[{_ints(counts)}, {_ints(mapping)}]"))
    return tuple(entries)


def plan_decomposition(d: AttentionDecomposition) -> Decomposition:
    """``pv_attrs`` then ``qk_attrs`` (the printer's order), each entry sorted by name."""
    parts = []
    for name, part in (("pv_attrs", d.pv), ("qk_attrs", d.qk)):
        if part is not None:
            tag = f"attention_{name[:2]}_matmul" if part.tagged else ""
            parts.append(DecomposedPart(name, _decomposed(part), tag))
    return Decomposition(tuple(parts))
