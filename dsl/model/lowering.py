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

from pydantic import AfterValidator, Strict, model_validator

from .base import (
    Described,
    Indices,
    MarkerName,
    OperandIndex,
    Sizes,
    StrategyModel,
    StrictBool,
    SymbolName,
    ThreadCount,
    check_non_negative,
    check_permutation,
    in_range,
    key_path,
    problem,
)
from .kinds import Backend, Injection, MatcherKind, StrategyKind

MAX_SUBGROUP_SIZE = 128
MAX_SUBGROUPS = 1024

SubgroupSize = Annotated[
    int,
    Strict(),
    in_range(1, MAX_SUBGROUP_SIZE, "at least 1 thread", f"at most {MAX_SUBGROUP_SIZE} threads per subgroup"),
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
            raise problem(
                f"{field}[{i}]", f"each operand at most once ({value} is already at [{values.index(value)}])", value
            )


NO_UKERNELS = '#hal.executable.target<"llvm-cpu", "embedded-elf", {ukernels = "none"}>'
"""What a :class:`CpuLowering` with ``ukernels=False`` annotates its op with: IREE 3.13's
ukernel lowering reads the executable target from the op's nearest holder of a
``hal.executable.target`` attribute, and only its ``ukernels`` entry (the build is
otherwise the same: LLVM IR identical to ``--iree-llvmcpu-enable-ukernels=none``'s but for
a module flag, on a 128x768x768 f32 mmt4d dispatch)."""

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
    """The discriminator: a #iree_cpu.lowering_config + pipeline in the tuning spec's compilation_info."""
    name: SymbolName
    """The strategy's name: its action sequence symbol and the location of the annotate ops."""
    pipeline: CpuPipeline = "DoubleTilingExpert"
    """The translation_info pipeline: #iree_cpu.pipeline<...> (DoubleTilingExpert by default)."""
    distribution: Sizes
    """Workgroup tile per loop (the distribution level of #iree_cpu.lowering_config); 0 = not tiled."""
    cache_parallel: Optional[Sizes] = None
    """Cache tile per parallel loop (cache_parallel level); 0 for reduction loops."""
    cache_reduction: Optional[Sizes] = None
    """Cache tile per reduction loop (cache_reduction level); 0 for parallel loops."""
    vector_common_parallel: Optional[Sizes] = None
    """Vector tile per parallel loop (vector_common_parallel level); 0 for reduction loops."""
    vector_reduction: Optional[Sizes] = None
    """Vector tile per reduction loop (vector_reduction level); 0 for parallel loops."""
    vector_inner_parallel: Optional[Sizes] = None
    """Inner vector tile per parallel loop (vector_inner_parallel level), e.g. for mmt4d."""
    markers: tuple[MarkerName, ...] = ()
    """Unit marker annotations set on the configured op after its config, as IREE's test
    specs mark what they configured (transform.annotate %op "__custom_tuning_spec_applied__")."""
    ukernels: StrictBool = True
    """False: the op is code generated even where the target enables IREE's ukernels
    (``CpuTarget.ukernels``): the op carries an ``hal.executable.target`` whose only entry is
    ``ukernels = "none"`` (:data:`NO_UKERNELS`), which IREE's ukernel lowering reads from
    the op. For a graph-level ``linalg.mmt4d`` whose inner tile is no ukernel tile (the
    ukernel falls to its generic tile: 6x16x1 f32 on AVX2 8x slower) while data tiling
    keeps its ukernels for the other ops. Codegen time only."""

    # Levels a pipeline never tiles in IREE 3.13 (its pass list has no tiling for them), so
    # a value there would be silently ignored.
    IGNORED_LEVELS: ClassVar[dict[str, tuple[str, ...]]] = {
        "Mmt4dTilingExpert": ("cache_parallel", "cache_reduction"),
    }

    @model_validator(mode="after")
    def _check(self) -> "CpuLowering":
        _check_levels(self, self.LEVELS)
        if not self.ukernels and self.injection is not Injection.TUNING_SPEC:
            raise problem(
                "ukernels",
                "True on a graph-level config: the per-op ukernel choice is set at codegen time (cpu_lowering)",
                False,
            )
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


class GraphCpuLowering(CpuLowering):
    """A :class:`CpuLowering` attached at the graph level (in the preprocessing spec) instead
    of at codegen: the op carries its ``compilation_info`` from before dispatch formation.
    IREE 3.13's data tiling (``--iree-opt-data-tiling``) leaves such an op alone (SetEncoding
    skips ops with a compilation_info), so this keeps one op on these tiles while data tiling
    packs the others; a codegen-time CpuLowering on a data-tiled matmul is lost when the op
    becomes ``linalg.mmt4d``. The loops are the op's as the graph level sees it (IREE keeps an
    op with a compilation_info as it is, unit dims included). Requires a matcher of the
    graph-level op form.
    """

    injection: ClassVar[Injection] = Injection.PREPROCESSING

    kind: Literal["graph_cpu_lowering"] = "graph_cpu_lowering"  # type: ignore[assignment]
    """The discriminator: the compilation_info of a cpu_lowering, attached in the preprocessing spec."""


GpuPipeline = Literal["TileAndFuse", "VectorDistribute"]

_MMA_NAME = re.compile(r"V?[A-Z][A-Z0-9_x]*")
_LLVM_KEY = re.compile(r"[A-Za-z0-9_.-]+")
_DENORMAL = ("ieee", "preserve-sign", "positive-zero", "dynamic")


def _positive_ints(value: str) -> bool:
    return all(part.isdigit() and int(part) >= 1 for part in value.split(","))


def _llvm_func_attrs(value: dict[str, str]) -> dict[str, str]:
    """Known LLVM function attributes have well-formed values; keys sorted (as MLIR's
    dictionary attribute keeps them, so an imported set compares equal)."""
    for key, text in value.items():
        if not _LLVM_KEY.fullmatch(key):
            raise problem(
                key_path(key),
                "an LLVM function attribute name (letters, digits, '_', '.', '-'), such as 'amdgpu-waves-per-eu'",
                key,
            )
        if not text.isprintable() or '"' in text or "\\" in text:
            raise problem(key_path(key), "a printable value without quotes or backslashes", text)
        if key == "amdgpu-waves-per-eu" and not (_positive_ints(text) and text.count(",") <= 1):
            raise problem(key_path(key), "'N' or 'MIN,MAX' waves per execution unit (positive integers)", text)
        if key == "amdgpu-flat-work-group-size" and not (_positive_ints(text) and text.count(",") == 1):
            raise problem(key_path(key), "'MIN,MAX' threads (positive integers)", text)
        if key.startswith("denormal-fp-math") and not all(part in _DENORMAL for part in text.split(",")):
            raise problem(key_path(key), "a denormal mode: " + ", ".join(_DENORMAL) + " (or 'OUT,IN')", text)
    return dict(sorted(value.items()))


LlvmFuncAttrs = Annotated[dict[str, str], AfterValidator(_llvm_func_attrs)]
"""``llvm_func_attrs`` of a translation_info: LLVM function attributes by name."""


class MmaLayout(StrategyModel):
    """An MMA intrinsic as a lowering config names it: ``#iree_gpu.mma_layout<intrinsic>``,
    or ``#iree_gpu.virtual_mma_layout<..>`` for a virtual intrinsic (``VMFMA_..``);
    ``col_major`` adds ``col_major = true`` (the result tile transposed)."""

    intrinsic: str
    """The MMA intrinsic: #iree_gpu.mma_layout<..> or, for VMFMA_.., #iree_gpu.virtual_mma_layout<..>."""
    col_major: StrictBool = False
    """Adds col_major = true to the layout (the intrinsic's result tile transposed)."""

    @model_validator(mode="after")
    def _check(self) -> "MmaLayout":
        if not _MMA_NAME.fullmatch(self.intrinsic):
            raise problem(
                "intrinsic",
                "an MMA intrinsic name such as 'MFMA_F32_16x16x16_F16' or 'VMFMA_F32_32x32x16_F16'",
                self.intrinsic,
            )
        return self

    @property
    def virtual(self) -> bool:
        return self.intrinsic.startswith("V")


class DecomposedMatmul(StrategyModel):
    """The lowering config of one matmul of a decomposed attention op (``qk`` or ``pv`` of
    :class:`AttentionDecomposition`): its MMA layout, subgroup basis ``[counts, mapping]``
    (``mapping`` names the op's loops the counts apply to) and promoted operands."""

    mma_kind: Optional[MmaLayout] = None
    """The matmul's mma_kind in its #iree_gpu.lowering_config."""
    subgroup_basis: Optional[tuple[tuple[SubgroupCount, ...], Indices]] = None
    """The matmul's subgroup_basis [counts, mapping]: subgroup counts and the loops they apply to."""
    promote_operands: Optional[tuple[OperandIndex, ...]] = None
    """Operand indices the matmul promotes to shared memory (promote_operands)."""
    tagged: StrictBool = False
    """The matmul's unit attribute next to its config (attention_qk_matmul / attention_pv_matmul),
    as IREE's own attention configs write it."""

    @model_validator(mode="after")
    def _check(self) -> "DecomposedMatmul":
        if self.mma_kind is None and self.subgroup_basis is None and self.promote_operands is None:
            raise problem("mma_kind", "at least one of mma_kind, subgroup_basis and promote_operands", None)
        if self.subgroup_basis is not None:
            counts, mapping = self.subgroup_basis
            for i, dim in enumerate(mapping):
                if not 0 <= dim < len(counts) or mapping.index(dim) != i:
                    raise problem(
                        f"subgroup_basis[1][{i}]",
                        f"distinct indices of the {len(counts)} counts (0 to {len(counts) - 1})",
                        dim,
                    )
        if self.promote_operands is not None:
            check_distinct("promote_operands", self.promote_operands)
        return self


class AttentionDecomposition(StrategyModel):
    """``decomposition_config`` of an attention op: the lowering configs IREE gives the two
    matmuls it decomposes attention into, ``qk`` (query x key) and ``pv`` (probabilities x
    value). Rendered as ``{pv_attrs = {lowering_config = ..}, qk_attrs = {lowering_config = ..}}``
    and annotated next to the compilation_info."""

    qk: Optional[DecomposedMatmul] = None
    """Lowering config of the query x key matmul (qk_attrs = {lowering_config = ..})."""
    pv: Optional[DecomposedMatmul] = None
    """Lowering config of the probabilities x value matmul (pv_attrs = {lowering_config = ..})."""

    @model_validator(mode="after")
    def _check(self) -> "AttentionDecomposition":
        if self.qk is None and self.pv is None:
            raise problem("qk", "a qk and/or a pv config", None)
        return self


class GpuLowering(StrategyKind):
    """``#iree_gpu.lowering_config<{..}>`` + ``#iree_gpu.pipeline`` for one rocm op.

    Units: with ``TileAndFuse`` and an ``mma_kind``, ``reduction`` and ``subgroup`` count
    intrinsic tiles; with ``VectorDistribute`` ``reduction`` counts elements.
    ``subgroup_basis`` is ``[counts, mapping]`` (VectorDistribute).

    Also: ``subgroup_m_count`` / ``subgroup_n_count`` (rendered ``: i64`` entries of the
    lowering config; older IREE read them for VectorDistribute, IREE 3.13 reads neither and
    tdsl keeps them only next to a ``subgroup_basis`` or with TileAndFuse, where tuners such
    as amdsharktuner write them); the translation_info's ``llvm_func_attrs`` (e.g.
    ``{"amdgpu-waves-per-eu": "2", "denormal-fp-math-f32": "preserve-sign"}``) and the
    pipeline options ``no_reduce_shared_memory_bank_conflicts`` and
    ``reorder_workgroups_strategy``; ``decomposition_config`` for attention ops.
    ``workgroup_size`` has 1 to 3 entries (IREE pads it with 1s).
    """

    injection: ClassVar[Injection] = Injection.TUNING_SPEC
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.ROCM})
    template: ClassVar[str] = "strategies/gpu_lowering.mlir.j2"
    LEVELS: ClassVar[tuple[str, ...]] = ("workgroup", "reduction", "subgroup", "thread")

    kind: Literal["gpu_lowering"] = "gpu_lowering"
    """The discriminator: a #iree_gpu.lowering_config + pipeline in the tuning spec's compilation_info."""
    name: SymbolName
    """The strategy's name: its action sequence symbol and the location of the annotate ops."""
    pipeline: GpuPipeline = "TileAndFuse"
    """The translation_info pipeline: #iree_gpu.pipeline<TileAndFuse> or <VectorDistribute>."""
    workgroup: Sizes
    """Workgroup tile per loop (workgroup level of #iree_gpu.lowering_config); 0 = not tiled."""
    reduction: Optional[Sizes] = None
    """Reduction tile per loop (reduction level): intrinsic tiles with TileAndFuse + mma_kind, else elements."""
    subgroup: Optional[Sizes] = None
    """Subgroup tile per loop (subgroup level, in intrinsic tiles), TileAndFuse with an mma_kind."""
    subgroup_basis: Optional[tuple[tuple[SubgroupCount, ...], Indices]] = None
    """subgroup_basis = [counts, mapping]: subgroups per loop and their mapping (VectorDistribute)."""
    thread: Optional[Sizes] = None
    """Thread tile per loop (thread level), TileAndFuse without an mma_kind (SIMT)."""
    mma_kind: Optional[str] = None
    """MMA intrinsic of the lowering config: mma_kind = #iree_gpu.mma_layout<..>, e.g. MFMA_F32_16x16x16_F16."""
    subgroup_m_count: Optional[SubgroupCount] = None
    """subgroup_m_count : i64 entry of the lowering config (subgroups along M; kept for tuners)."""
    subgroup_n_count: Optional[SubgroupCount] = None
    """subgroup_n_count : i64 entry of the lowering config (subgroups along N; kept for tuners)."""
    promote_operands: tuple[OperandIndex, ...] = ()
    """Operand indices promoted to shared memory (promote_operands = [..]; 0 lhs, 1 rhs, 2 result)."""
    padding: Optional[Sizes] = None
    """Pad each loop to a multiple of this size (padding = [..] of the lowering config)."""
    workgroup_size: tuple[ThreadCount, ...]
    """translation_info workgroup_size [x, y, z] in threads (1 to 3 entries; IREE pads with 1s)."""
    subgroup_size: SubgroupSize = 64
    """translation_info subgroup_size: threads per subgroup (64 on gfx942)."""
    prefetch_num_stages: Optional[PrefetchStages] = None
    """Pipeline option prefetch_num_stages of #iree_gpu.pipeline_options (0 to 4)."""
    use_igemm_convolution: Optional[StrictBool] = None
    """Pipeline option use_igemm_convolution: lower a convolution as an implicit GEMM (im2col)."""
    no_reduce_shared_memory_bank_conflicts: Optional[StrictBool] = None
    """Pipeline option no_reduce_shared_memory_bank_conflicts (skip shared-memory padding)."""
    reorder_workgroups_strategy: Optional[Literal["None", "Transpose"]] = None
    """Pipeline option reorder_workgroups_strategy = <None> or <Transpose>."""
    llvm_func_attrs: Optional[LlvmFuncAttrs] = None
    """translation_info llvm_func_attrs: LLVM function attributes, e.g. amdgpu-waves-per-eu."""
    decomposition_config: Optional[AttentionDecomposition] = None
    """decomposition_config of an attention op: lowering configs of its qk and pv matmuls."""
    markers: tuple[MarkerName, ...] = ()
    """Unit marker annotations set on the configured op after its config, as IREE's test
    specs mark what they configured (transform.annotate %op "__custom_tuning_spec_applied__")."""

    @model_validator(mode="after")
    def _check(self) -> "GpuLowering":
        length = self._check_shape()
        if self.decomposition_config is not None and self.pipeline != "VectorDistribute":
            raise problem(
                "decomposition_config",
                "the VectorDistribute pipeline (IREE 3.13 decomposes attention there)",
                self.pipeline,
            )
        if self.pipeline == "VectorDistribute":
            self._check_vector_distribute()
        else:
            self._check_tile_and_fuse()
        self._check_threads()
        self._check_padding(length)
        self._check_prefetch()
        check_distinct("promote_operands", self.promote_operands)
        return self

    def _check_shape(self) -> Optional[int]:
        """The MMA name, the tile levels (returns their length), workgroup size and subgroups."""
        if self.mma_kind is not None and not re.fullmatch(r"[A-Z][A-Z0-9_x]*", self.mma_kind):
            raise problem("mma_kind", "an MMA intrinsic name such as 'MFMA_F32_16x16x16_F16'", self.mma_kind)
        length = _check_levels(self, self.LEVELS)
        if not 1 <= len(self.workgroup_size) <= 3:
            raise problem("workgroup_size", "1 to 3 thread counts (x[, y[, z]])", list(self.workgroup_size))
        check_non_negative("workgroup_size", self.workgroup_size)
        if self.subgroup_basis is not None:
            counts, mapping = self.subgroup_basis
            if len(counts) != length:
                raise problem("subgroup_basis[0]", f"{length} counts, one per loop", list(counts))
            check_permutation("subgroup_basis[1]", mapping, len(counts))
        if (self.subgroup_m_count is None) != (self.subgroup_n_count is None):
            missing = "subgroup_n_count" if self.subgroup_n_count is None else "subgroup_m_count"
            raise problem(missing, "both subgroup_m_count and subgroup_n_count, or neither", None)
        return length

    def _check_vector_distribute(self) -> None:
        """VectorDistribute distributes by subgroup_basis and mma_kind (not for attention)."""
        attention = self.decomposition_config is not None
        if self.subgroup_basis is None and self.subgroup_m_count is not None and not attention:
            raise problem(
                "subgroup_basis",
                "a subgroup_basis for the VectorDistribute pipeline: IREE 3.13 ignores subgroup_m_count and "
                "subgroup_n_count (for loops (m, n, k) they are subgroup_basis [[m_count, n_count, 1], [0, 1, 2]])",
                None,
            )
        if (self.subgroup_basis is None or self.mma_kind is None) and not attention:
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

    def _check_tile_and_fuse(self) -> None:
        """TileAndFuse tiles by subgroup (with an MMA) or thread (SIMT), never subgroup_basis."""
        if self.subgroup_basis is not None:
            raise problem("subgroup_basis", "None with TileAndFuse (use subgroup or thread)", self.subgroup_basis)
        if self.mma_kind is not None and self.subgroup is None:
            raise problem("subgroup", "subgroup tiles (in intrinsics) when mma_kind is set", None)
        if self.mma_kind is None and self.thread is None:
            raise problem("thread", "thread tiles when there is no mma_kind (SIMT)", None)
        if self.mma_kind is not None and self.thread is not None:
            raise problem("thread", "None when mma_kind is set (use subgroup)", list(self.thread))

    def _check_threads(self) -> None:
        """The workgroup holds whole subgroups."""
        threads = self.thread_count()
        if threads == 0 or threads % self.subgroup_size:
            raise problem(
                "workgroup_size",
                f"a positive thread count that is a multiple of subgroup_size {self.subgroup_size}",
                Described(f"{list(self.workgroup_size)} ({threads} threads)"),
            )

    def _check_padding(self, length: Optional[int]) -> None:
        """One positive padding multiple per loop."""
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

    def _check_prefetch(self) -> None:
        """IREE 3.13 crashes prefetching 3 or more stages of a SIMT TileAndFuse that promotes."""
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
        count = 1
        for threads in self.workgroup_size:
            count *= threads
        return count
