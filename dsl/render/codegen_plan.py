"""The plan of a :class:`~tdsl.model.codegen.Codegen` strategy: the lowering sequence
``@<rule symbol>_codegen`` (``definition`` of ``strategies/codegen.mlir.j2``) and the
``__kernel_config`` action that selects it.

Handles: the root op is ``%t0``; tiling level ``i`` produces ``%t<i+1>`` and its loops
(``%forall<i>`` or ``%for<i>_<loop>``); promoting operands after level ``i`` produces
``%t<i+1>_promoted``; fusion ``j`` matches its producers into ``%producers<j>_0`` and each
fusion into a forall advances that to ``%producers<j>_<n+1>`` (the fused op in the forall
is ``%forall<i>_f<j>``). The tiling steps name the macros that render them; the
vectorization and vector lowering variants are macro names too. The GPU-or-not decision
(thread mapping, ``<{target_gpu}>`` bufferization, the llvm-cpu ``no_pipeline``
annotation) and the MFMA packed sizes (the target's intrinsic) are made here. Emits no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

from ..errors import TdslError
from ..model.codegen import Codegen, TileUsingForall
from ..targets import Target
from .plan import ActionPlan, Handle, Step, op_type
from .transform_ops import (
    CLEANUP_PATTERNS,
    CONVERT_TO_MULTI_MMA,
    LOWER_CONTRACTION,
    LOWER_TRANSFER,
    LOWER_TRANSPOSE,
    MAP_NESTED_FORALL_TO_GPU_THREADS,
    PACK,
    PROMOTE_OPERANDS,
    TILE_USING_FOR,
    TILE_USING_FORALL,
    SpelledOp,
)


@dataclass(frozen=True)
class ForallTiling:
    """``result, forall = transform.structured.tile_using_forall operand tile_sizes | num_threads
    [..] (mapping = [..])`` (``op``, spelled from the level)."""

    operand: str
    result: str
    forall: str
    op: SpelledOp


@dataclass(frozen=True)
class TileForall(Step):
    """Tiling level ``index`` as a forall."""

    macro: ClassVar[str] = "tile_forall"
    index: int
    tiling: ForallTiling


@dataclass(frozen=True)
class WorkgroupCount(Step):
    """``transform.iree.populate_workgroup_count_region_using_num_threads_slice forall`` after
    the workgroup level ``index``."""

    macro: ClassVar[str] = "workgroup_count"
    index: int
    forall: str


@dataclass(frozen=True)
class MatchProducers(Step):
    """``result = transform.structured.match ops{[producers]}`` for fusion ``fusion``."""

    macro: ClassVar[str] = "match_producers"
    fusion: int
    result: str
    producers: tuple[str, ...]


@dataclass(frozen=True)
class FuseInto(Step):
    """``result, fused = transform.structured.fuse_into_containing_op producer into containing``."""

    macro: ClassVar[str] = "fuse_into"
    fusion: int
    producer: str
    result: str
    fused: str
    containing: str


@dataclass(frozen=True)
class Distribute(Step):
    """The fused producers of fusion ``fusion`` tiled with a forall of their own."""

    macro: ClassVar[str] = "distribute"
    fusion: int
    tiling: ForallTiling


@dataclass(frozen=True)
class TileFor(Step):
    """``result, loops = transform.structured.tile_using_for operand tile_sizes [..]`` (level
    ``index``; ``op``, spelled from the level)."""

    macro: ClassVar[str] = "tile_for"
    index: int
    operand: str
    result: str
    loops: tuple[str, ...]
    op: SpelledOp


@dataclass(frozen=True)
class Promote(Step):
    """``result, promoted = transform.iree.promote_operands operand [..]`` (``op``, spelled
    from ``Codegen.promote_operands``)."""

    macro: ClassVar[str] = "promote"
    operand: str
    result: str
    promoted: tuple[str, ...]
    op: SpelledOp


@dataclass(frozen=True)
class MmaChain:
    """The MFMA chain after tiling: ``packed = transform.structured.pack operand packed_sizes
    = [..]`` (``pack``: the intrinsic's m, n, k), ``mma = convert_to_multi_mma packed, kind(..)``
    (``convert``: the intrinsic), ``lanes = distribute_inner_tiled mma``."""

    operand: str
    packed: Handle
    pack: SpelledOp
    convert: SpelledOp
    mma: str
    lanes: str


@dataclass(frozen=True)
class CleanupPattern:
    """The pattern op ``pattern`` (``transform.apply_patterns.canonicalization``) for entry
    ``index`` of ``cleanup``."""

    pattern: str
    index: int


@dataclass(frozen=True)
class VectorLoweringPlan:
    """The pattern ops of the vector lowering blocks, spelled from ``Codegen.vector_lowering``."""

    contraction: SpelledOp
    transpose: SpelledOp
    transfer: SpelledOp


@dataclass(frozen=True)
class ThreadMapping:
    """rocm: ``map_nested_forall_to_gpu_threads`` (``op``: spelled with ``workgroup_dims`` and
    the target's ``subgroup_size``); ``to_lanes``: ``forall_to_lanes`` first (MFMA chain);
    ``shared_memory``: distribute the shared-memory copies of promoted operands."""

    op: SpelledOp
    to_lanes: bool
    shared_memory: bool


@dataclass(frozen=True)
class CodegenPlan(ActionPlan):
    """The lowering sequence ``@symbol`` of a Codegen strategy, section by section.

    ``vectorize`` and ``lowering`` are macro names (MFMA chain or not; vectorized or not);
    ``threads`` is None and ``no_pipeline`` true on llvm-cpu; ``target_gpu`` bufferizes
    for the GPU; ``lowering`` is None for a strategy without vector lowering, ``cse`` false
    for one that neither vectorizes nor cleans up."""

    symbol: str
    root: str
    tiling: tuple[Step, ...]
    mma: Optional[MmaChain]
    vectorize: str
    cleanup: tuple[CleanupPattern, ...]
    target_gpu: bool
    threads: Optional[ThreadMapping]
    lowering: Optional[str]
    vector_lowering: Optional[VectorLoweringPlan]
    cse: bool
    no_pipeline: bool


def _forall(level: TileUsingForall, operand: str, result: str, forall: str) -> ForallTiling:
    return ForallTiling(operand, result, forall, TILE_USING_FORALL.spell(dict(level)))


def _tiling(s: Codegen, root: str) -> tuple[tuple[Step, ...], str]:
    """The tiling, fusion and promotion steps, and the handle of the tiled op after them."""
    steps: list[Step] = []
    fused: dict[int, int] = {}  # fusion index -> times fused so far
    current = root
    for i, level in enumerate(s.tiling):
        result = f"%t{i + 1}"
        if isinstance(level, TileUsingForall):
            forall = f"%forall{i}"
            steps.append(TileForall(i, _forall(level, current, result, forall)))
            if i == 0:
                steps.append(WorkgroupCount(i, forall))
            for j, fuse in s.fused_at(i):
                count = fused.get(j, 0)
                if j not in fused:
                    steps.append(MatchProducers(j, f"%producers{j}_0", fuse.producers))
                producers = f"%producers{j}_{count + 1}"
                steps.append(FuseInto(j, f"%producers{j}_{count}", producers, f"%forall{i}_f{j}", forall))
                fused[j] = count + 1
                if fuse.distribute is not None:
                    tiling = _forall(fuse.distribute, producers, f"{producers}_d", f"%producers{j}_forall{i}")
                    steps.append(Distribute(j, tiling))
        else:
            loops = tuple(f"%for{i}_{k}" for k in range(level.loop_count))
            steps.append(TileFor(i, current, result, loops, TILE_USING_FOR.spell(dict(level))))
        current = result
        if s.promote_operands and s.promote_after == i:
            promoted = tuple(f"%promoted{k}" for k in range(len(s.promote_operands)))
            steps.append(Promote(current, f"{result}_promoted", promoted, PROMOTE_OPERANDS.spell(dict(s))))
            current = f"{result}_promoted"
    return tuple(steps), current


def _mma(s: Codegen, operand: str, target: Target) -> Optional[MmaChain]:
    if s.mma is None:
        return None
    facts = target.gpu_facts
    intrinsic = facts.intrinsic(s.mma.intrinsic) if facts is not None else None
    if intrinsic is None:
        # The targets' check_strategy refuse this earlier.
        raise TdslError(f"strategy {s.name}: {s.mma.intrinsic!r} is no MMA intrinsic of target {target.name!r}")
    pack = PACK.spell({"packed_sizes": (intrinsic.m, intrinsic.n, intrinsic.k)})
    convert = CONVERT_TO_MULTI_MMA.spell(dict(s.mma))
    return MmaChain(operand, Handle("%mma_packed", op_type("linalg.generic")), pack, convert, "%mma", "%mma_lanes")


def _threads(s: Codegen, target: Target) -> Optional[ThreadMapping]:
    facts = target.gpu_facts
    if facts is None:
        return None
    assert s.gpu is not None, "checked by the GPU target's check_strategy"
    op = MAP_NESTED_FORALL_TO_GPU_THREADS.spell({**dict(s.gpu), "subgroup_size": facts.subgroup_size})
    return ThreadMapping(op, s.mma is not None, bool(s.promote_operands))


def plan_codegen(strategy: Codegen, symbol: str, target: Target) -> CodegenPlan:
    """The lowering sequence of ``strategy`` for ``target``; see the module docstring."""
    s = strategy
    tiling, tiled = _tiling(s, "%t0")
    mma = _mma(s, tiled, target)
    threads = _threads(s, target)
    vectorize = "vectorize_mma" if mma is not None else "vectorize_children" if s.vectorize else "match_func"
    vl = s.vector_lowering
    return CodegenPlan(
        symbol=f"{symbol}_codegen",
        root="%t0",
        tiling=tiling,
        mma=mma,
        vectorize=vectorize,
        cleanup=tuple(CleanupPattern(CLEANUP_PATTERNS[p], i) for i, p in enumerate(s.cleanup)),
        target_gpu=threads is not None,
        threads=threads,
        lowering="lower_inner_tiled" if mma is not None else "lower_vectors" if vl is not None else None,
        vector_lowering=None
        if vl is None
        else VectorLoweringPlan(
            LOWER_CONTRACTION.spell(dict(vl)), LOWER_TRANSPOSE.spell(dict(vl)), LOWER_TRANSFER.spell(dict(vl))
        ),
        cse=vectorize != "match_func" or bool(s.cleanup),
        no_pipeline=threads is None,
    )
