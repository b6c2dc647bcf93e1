"""Codegen configuration: per-op ``compilation_info`` injected by a tuning spec
(``--iree-codegen-tuning-spec-path``), or by the ``__kernel_config`` of a codegen library.

:class:`CpuLowering` renders ``#iree_cpu.lowering_config<..>`` with IREE's CPU tiling
levels; :class:`GpuLowering` renders ``#iree_gpu.lowering_config<{..}>`` with the GPU
levels, MMA kind and pipeline options. Every level has one entry per loop of the op
as it exists at codegen time (0 = not tiled at that level).

Example::

    CpuLowering(name="mm_tiles", distribution=[64, 64, 0],
                vector_common_parallel=[8, 64, 0], vector_reduction=[0, 0, 4])

renders::

    #iree_codegen.compilation_info<
      lowering_config = #iree_cpu.lowering_config<distribution = [64, 64, 0],
        vector_common_parallel = [8, 64, 0], vector_reduction = [0, 0, 4]>,
      translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, Optional

from pydantic import Strict, model_validator

from .base import (
    Described,
    Indices,
    OperandIndex,
    Sizes,
    StrategyModel,
    StrictBool,
    SymbolName,
    ThreadCount,
    check_non_negative,
    check_permutation,
    in_range,
    problem,
)
from .kinds import Backend, Injection, MatcherKind, StrategyKind

MAX_SUBGROUP_SIZE = 128
MAX_SUBGROUPS = 1024

SubgroupSize = Annotated[
    int, Strict(), in_range(1, MAX_SUBGROUP_SIZE, "at least 1 thread", f"at most {MAX_SUBGROUP_SIZE} threads per subgroup")
]
SubgroupCount = Annotated[
    int, Strict(), in_range(1, MAX_SUBGROUPS, "at least 1 subgroup", f"at most {MAX_SUBGROUPS} subgroups")
]
PrefetchStages = Annotated[int, Strict(), in_range(0, 4, "0 to 4", "0 to 4")]


def check_promoted(strategy: StrategyKind, match: MatcherKind, promote_operands: tuple[int, ...]) -> None:
    """Each promoted operand index names an operand of the matched op (where the matcher
    fixes its operand count: a contraction or convolution has lhs 0, rhs 1, result 2)."""
    count = match.operand_count()
    if count is None:
        return
    for i, operand in enumerate(promote_operands):
        if operand >= count:
            raise problem(
                f"promote_operands[{i}]",
                f"an operand index of the matched op: 0 to {count - 1} (0 lhs, 1 rhs, 2 result)",
                operand,
                hint=f"the largest legal value is {count - 1}",
                strategy=strategy.name,
            )


def check_distinct(field: str, values: tuple[int, ...]) -> None:
    for i, value in enumerate(values):
        if values.index(value) != i:
            raise problem(f"{field}[{i}]", f"each operand at most once ({value} is already at [{values.index(value)}])", value)

CpuPipeline = Literal[
    "DoubleTilingExpert",
    "ConvTileAndDecomposeExpert",
    "Mmt4dTilingExpert",
    "BufferOpsTileAndVectorize",
    "DataTiling",
    "LinalgExtTileAndVectorize",
    "Default",
]


def _check_levels(model: StrategyModel, levels: tuple[str, ...]) -> Optional[int]:
    """All given levels are non-negative and of one length; returns that length."""
    length: Optional[int] = None
    first = ""
    for level in levels:
        sizes = getattr(model, level)
        if sizes is None:
            continue
        check_non_negative(level, sizes)
        if not sizes:
            raise problem(level, "at least one entry, one per loop", [])
        if length is None:
            length, first = len(sizes), level
        elif len(sizes) != length:
            raise problem(
                level,
                f"{length} entries, one per loop, like {first}",
                Described(f"{len(sizes)} entries {list(sizes)}"),
            )
    return length


class CpuLowering(StrategyKind):
    """``#iree_cpu.lowering_config`` + ``#iree_cpu.pipeline`` for one llvm-cpu op."""

    injection: ClassVar[Injection] = Injection.TUNING_SPEC
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU})
    template: ClassVar[str] = "strategies/cpu_lowering.mlir.j2"
    LEVELS: ClassVar[tuple[str, ...]] = (
        "distribution",
        "cache_parallel",
        "cache_reduction",
        "vector_common_parallel",
        "vector_reduction",
        "vector_inner_parallel",
    )

    kind: Literal["cpu_lowering"] = "cpu_lowering"
    name: SymbolName
    pipeline: CpuPipeline = "DoubleTilingExpert"
    distribution: Sizes
    cache_parallel: Optional[Sizes] = None
    cache_reduction: Optional[Sizes] = None
    vector_common_parallel: Optional[Sizes] = None
    vector_reduction: Optional[Sizes] = None
    vector_inner_parallel: Optional[Sizes] = None

    # Levels a pipeline never tiles in IREE 3.13 (its pass list has no tiling for them), so
    # a value there would be silently ignored.
    IGNORED_LEVELS: ClassVar[dict[str, tuple[str, ...]]] = {
        "Mmt4dTilingExpert": ("cache_parallel", "cache_reduction"),
    }

    @model_validator(mode="after")
    def _check(self) -> "CpuLowering":
        _check_levels(self, self.LEVELS)
        for level in self.IGNORED_LEVELS.get(self.pipeline, ()):
            sizes = getattr(self, level)
            if sizes is not None:
                raise problem(
                    level,
                    f"no {level} with pipeline {self.pipeline}: IREE 3.13 tiles only distribution and "
                    "the vector levels there, so these sizes would be silently ignored",
                    list(sizes),
                )
        for parallel, reduction in (
            ("cache_parallel", "cache_reduction"),
            ("vector_common_parallel", "vector_reduction"),
        ):
            p, r = getattr(self, parallel), getattr(self, reduction)
            if p is not None and r is not None:
                for i, (a, b) in enumerate(zip(p, r)):
                    if a and b:
                        raise problem(
                            f"{reduction}[{i}]",
                            f"0 because {parallel}[{i}] = {a} tiles loop {i} as parallel "
                            "(a loop is either parallel or reduction)",
                            b,
                        )
        return self

    def loops(self) -> Optional[tuple[str, int]]:
        return "distribution", len(self.distribution)

    def levels(self) -> list[tuple[str, tuple[int, ...]]]:
        """(level name, sizes) for the levels that are set, in IREE's order."""
        return [(lv, getattr(self, lv)) for lv in self.LEVELS if getattr(self, lv) is not None]


GpuPipeline = Literal["TileAndFuse", "VectorDistribute"]


class GpuLowering(StrategyKind):
    """``#iree_gpu.lowering_config<{..}>`` + ``#iree_gpu.pipeline`` for one rocm op.

    Units: with ``TileAndFuse`` and an ``mma_kind``, ``reduction`` and ``subgroup`` count
    intrinsic tiles; with ``VectorDistribute`` ``reduction`` counts elements.
    ``subgroup_basis`` is ``[counts, mapping]`` (VectorDistribute).
    """

    injection: ClassVar[Injection] = Injection.TUNING_SPEC
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.ROCM})
    template: ClassVar[str] = "strategies/gpu_lowering.mlir.j2"
    LEVELS: ClassVar[tuple[str, ...]] = ("workgroup", "reduction", "subgroup", "thread")

    kind: Literal["gpu_lowering"] = "gpu_lowering"
    name: SymbolName
    pipeline: GpuPipeline = "TileAndFuse"
    workgroup: Sizes
    reduction: Optional[Sizes] = None
    subgroup: Optional[Sizes] = None
    subgroup_basis: Optional[tuple[tuple[SubgroupCount, ...], Indices]] = None
    thread: Optional[Sizes] = None
    mma_kind: Optional[str] = None
    promote_operands: tuple[OperandIndex, ...] = ()
    padding: Optional[Sizes] = None
    workgroup_size: tuple[ThreadCount, ThreadCount, ThreadCount]
    subgroup_size: SubgroupSize = 64
    prefetch_num_stages: Optional[PrefetchStages] = None
    use_igemm_convolution: Optional[StrictBool] = None

    @model_validator(mode="after")
    def _check(self) -> "GpuLowering":
        if self.mma_kind is not None and not re.fullmatch(r"[A-Z][A-Z0-9_x]*", self.mma_kind):
            raise problem("mma_kind", "an MMA intrinsic name such as 'MFMA_F32_16x16x16_F16'", self.mma_kind)
        length = _check_levels(self, self.LEVELS)
        check_non_negative("workgroup_size", self.workgroup_size)
        if self.subgroup_basis is not None:
            counts, mapping = self.subgroup_basis
            if len(counts) != length:
                raise problem(
                    "subgroup_basis[0]", f"{length} counts, one per loop", list(counts)
                )
            check_permutation("subgroup_basis[1]", mapping, len(counts))
        if self.pipeline == "VectorDistribute":
            if self.subgroup_basis is None or self.mma_kind is None:
                raise problem(
                    "subgroup_basis" if self.subgroup_basis is None else "mma_kind",
                    "subgroup_basis and mma_kind for the VectorDistribute pipeline",
                    None,
                )
            if self.subgroup is not None or self.thread is not None:
                raise problem(
                    "subgroup" if self.subgroup is not None else "thread",
                    "None with VectorDistribute (it uses subgroup_basis)",
                    self.subgroup or self.thread,
                )
        else:
            if self.subgroup_basis is not None:
                raise problem(
                    "subgroup_basis", "None with TileAndFuse (use subgroup or thread)", self.subgroup_basis
                )
            if self.mma_kind is not None and self.subgroup is None:
                raise problem("subgroup", "subgroup tiles (in intrinsics) when mma_kind is set", None)
            if self.mma_kind is None and self.thread is None:
                raise problem("thread", "thread tiles when there is no mma_kind (SIMT)", None)
            if self.mma_kind is not None and self.thread is not None:
                raise problem("thread", "None when mma_kind is set (use subgroup)", list(self.thread))
        threads = self.workgroup_size[0] * self.workgroup_size[1] * self.workgroup_size[2]
        if threads == 0 or threads % self.subgroup_size:
            raise problem(
                "workgroup_size",
                f"a positive thread count that is a multiple of subgroup_size {self.subgroup_size}",
                Described(f"{list(self.workgroup_size)} ({threads} threads)"),
            )
        if self.padding is not None:
            check_non_negative("padding", self.padding)
            if length is not None and len(self.padding) != length:
                raise problem("padding", f"{length} entries, one per loop", list(self.padding))
            for i, size in enumerate(self.padding):
                if size == 0:
                    raise problem(
                        f"padding[{i}]",
                        "a positive size to pad loop i to a multiple of (IREE 3.13 divides by it: "
                        "0 crashes iree-compile with SIGFPE in GPUPadOperandsPass)",
                        size,
                        hint="the nearest legal value is 1 (no padding)",
                    )
        if (
            self.pipeline == "TileAndFuse"
            and self.mma_kind is None
            and self.promote_operands
            and self.prefetch_num_stages is not None
            and self.prefetch_num_stages > 2
        ):
            raise problem(
                "prefetch_num_stages",
                "at most 2 for a SIMT TileAndFuse configuration (no mma_kind) that promotes operands: "
                "IREE 3.13 crashes with 3 or more stages (SIGSEGV verifying the prefetched loop)",
                self.prefetch_num_stages,
                hint="the largest legal value is 2",
            )
        check_distinct("promote_operands", self.promote_operands)
        return self

    def check_match(self, match: MatcherKind) -> None:
        check_promoted(self, match, self.promote_operands)
        igemm = bool(self.use_igemm_convolution)
        bounds = match.convolution_loops(igemm)
        if bounds is not None and not bounds[0] <= len(self.workgroup) <= bounds[1]:
            count = str(bounds[0]) if bounds[0] == bounds[1] else f"{bounds[0]} or {bounds[1]}"
            loops = (
                "batch, output_image, output_channel and depth loops and one reduction loop (the im2col K)"
                if igemm
                else "batch, output_image, output_channel, filter, input_channel and depth loops"
            )
            raise problem(
                "workgroup",
                f"{count} entries, one per loop of the convolution with use_igemm_convolution = "
                f"{'true' if igemm else 'false'}: its {loops}",
                Described(f"{len(self.workgroup)} entries {list(self.workgroup)}"),
                strategy=self.name,
            )

    def loops(self) -> Optional[tuple[str, int]]:
        """With ``use_igemm_convolution`` the op has another loop count than the matched one."""
        return None if self.use_igemm_convolution else ("workgroup", len(self.workgroup))


    def levels(self) -> list[tuple[str, tuple[int, ...]]]:
        return [(lv, getattr(self, lv)) for lv in self.LEVELS if getattr(self, lv) is not None]

    def thread_count(self) -> int:
        x, y, z = self.workgroup_size
        return x * y * z
