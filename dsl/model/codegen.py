"""Full transform-dialect codegen: a codegen library (``--iree-codegen-transform-dialect-library``).

A :class:`Codegen` strategy renders to one ``transform.named_sequence`` that lowers a whole
dispatch. The library's ``__kernel_config`` marks the matched op with
``tdsl.root = "<name>"`` and points the dispatch's ``translation_info`` at the strategy
(``#iree_codegen.transform_dialect_codegen codegen_spec = @<name>``); the strategy then
runs on the dispatch module, in this order:

1. ``tiling``: each level is ``transform.structured.tile_using_forall`` (tile sizes or
   thread counts and a ``mapping``) or ``transform.structured.tile_using_for``. Level 0
   must be a forall mapped to ``#gpu.block<..>``; it also emits
   ``transform.iree.populate_workgroup_count_region_using_num_threads_slice``.
2. ``fusion``: after each forall level listed in ``into``, the named producers (e.g.
   ``linalg.fill``) are fused with ``transform.structured.fuse_into_containing_op``.
   The default fuses ``linalg.fill`` into the workgroup forall: an op left outside
   that forall runs in every workgroup over the whole tensor, so an unfused fill of the
   accumulator races with the other workgroups' results.
3. ``promote_operands`` (rocm): ``transform.iree.promote_operands`` into shared memory,
   after the level given by ``promote_after``.
4. ``vectorize``: ``transform.structured.vectorize_children_and_apply_patterns``, then the
   ``cleanup`` pattern sets and CSE (no CSE when it neither vectorizes nor cleans up).
5. ``transform.iree.eliminate_empty_tensors``, ``transform.iree.bufferize``
   (``<{target_gpu}>`` on rocm), ``transform.iree.forall_to_workgroup``.
6. rocm: ``transform.iree.map_nested_forall_to_gpu_threads`` with ``workgroup_dims`` and
   the target's subgroup size, and shared-memory copy distribution if operands are promoted.
7. ``vector_lowering``: contraction / transpose / transfer lowering, each in its own
   ``apply_patterns`` block (one combined block can loop forever), then canonicalization
   and CSE; none with ``vector_lowering=None`` (a strategy that does not vectorize).
8. llvm-cpu: the func is annotated ``translation_info = #iree_codegen.no_pipeline``.

Example (llvm-cpu)::

    Codegen(name="mm_td", root="linalg.matmul",
            tiling=[TileUsingForall(tile_sizes=[32, 64], mapping=["block_y", "block_x"]),
                    TileUsingFor(tile_sizes=[8, 16, 0]), TileUsingFor(tile_sizes=[0, 0, 1])],
            fusion=[Fuse(producers=["linalg.fill"], into=[0])])

renders, among others::

    %t1, %forall0 = transform.structured.tile_using_forall %t0 tile_sizes [32, 64]
        (mapping = [#gpu.block<y>, #gpu.block<x>]) : ...
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Optional, Union

from pydantic import Field, model_validator

from .base import (
    MAX_RANK,
    Described,
    Indices,
    Int64,
    OperandIndex,
    OpName,
    Rank,
    Sizes,
    StrategyModel,
    StrictBool,
    SymbolName,
    ThreadCount,
    check_non_negative,
    check_permutation,
    problem,
)
from .kinds import Backend, Injection, MatcherKind, StrategyKind
from .lowering import check_distinct, check_promoted

Mapping = Literal["block_x", "block_y", "block_z", "thread_x", "thread_y", "thread_z", "warp_x", "warp_y", "warp_z"]

# Iterator kinds of the named ops whose loops tdsl knows ("p" parallel, "r" reduction).
_ITERATORS = {
    "linalg.matmul": "ppr",
    "linalg.batch_matmul": "pppr",
    "linalg.mmt4d": "pprppr",
    "linalg.batch_mmt4d": "ppprppr",
}


class TileUsingForall(StrategyModel):
    """``transform.structured.tile_using_forall``: ``tile_sizes`` or ``num_threads``, and one
    ``mapping`` entry per tiled (non-zero) dimension."""

    kind: Literal["forall"] = "forall"
    """The discriminator: transform.structured.tile_using_forall."""
    tile_sizes: Optional[Sizes] = None
    """Tile size per loop (tile_sizes); 0 leaves a loop untiled. Exclusive with num_threads."""
    num_threads: Optional[Sizes] = None
    """Number of threads per loop (num_threads). Exclusive with tile_sizes."""
    mapping: tuple[Mapping, ...]
    """One #gpu.block/thread/warp mapping entry per tiled loop (mapping)."""

    @model_validator(mode="after")
    def _check(self) -> "TileUsingForall":
        if (self.tile_sizes is None) == (self.num_threads is None):
            raise problem("tile_sizes", "exactly one of tile_sizes and num_threads", None)
        field = "tile_sizes" if self.tile_sizes is not None else "num_threads"
        sizes = self.sizes
        check_non_negative(field, sizes)
        tiled = sum(1 for s in sizes if s)
        if tiled == 0:
            raise problem(field, "at least one non-zero entry", list(sizes))
        if len(self.mapping) != tiled:
            raise problem(
                "mapping",
                f"{tiled} entries, one per tiled dimension of {field} {list(sizes)} (iree-compile crashes otherwise)",
                list(self.mapping),
            )
        if len(set(self.mapping)) != len(self.mapping):
            raise problem("mapping", "distinct mapping entries", list(self.mapping))
        if len({m.split("_")[0] for m in self.mapping}) != 1:
            raise problem("mapping", "one mapping kind (all block, thread or warp)", list(self.mapping))
        return self

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.tile_sizes if self.tile_sizes is not None else self.num_threads or ()

    @property
    def mapping_kind(self) -> str:
        return self.mapping[0].split("_")[0]

    def mapping_attrs(self) -> list[tuple[str, str]]:
        """(dialect attr name, dim) per entry: ``("block", "y")`` renders ``#gpu.block<y>``."""
        return [(m.split("_")[0], m.split("_")[1]) for m in self.mapping]


class TileUsingFor(StrategyModel):
    """``transform.structured.tile_using_for``: one ``scf.for`` per non-zero tile size."""

    kind: Literal["for"] = "for"
    """The discriminator: transform.structured.tile_using_for."""
    tile_sizes: Sizes
    """Tile size per loop (tile_sizes); one scf.for per non-zero size."""
    interchange: Optional[Indices] = None
    """Order of the generated loops (interchange)."""

    @model_validator(mode="after")
    def _check(self) -> "TileUsingFor":
        check_non_negative("tile_sizes", self.tile_sizes)
        if not any(self.tile_sizes):
            raise problem("tile_sizes", "at least one non-zero tile size", list(self.tile_sizes))
        if self.interchange is not None:
            check_permutation("interchange", self.interchange, len(self.tile_sizes))
        return self

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.tile_sizes

    @property
    def loop_count(self) -> int:
        return sum(1 for s in self.tile_sizes if s)


TileStep = Annotated[Union[TileUsingForall, TileUsingFor], Field(discriminator="kind")]


class Fuse(StrategyModel):
    """Fuse ``producers`` (op names, e.g. ``linalg.fill``) into the forall of each level in
    ``into`` with ``transform.structured.fuse_into_containing_op``.

    ``distribute`` then tiles the fused producers with a forall of their own (e.g. over
    threads), for producers that cannot follow the root into a nested forall because a
    ``for`` level sits in between.
    """

    producers: tuple[OpName, ...]
    """Names of the producer ops to fuse (transform.structured.fuse_into_containing_op)."""
    into: Indices
    """Indices of the forall tiling levels to fuse them into."""
    distribute: Optional[TileUsingForall] = None
    """Tile the fused producers again with a forall of their own."""


CleanupPatterns = Literal["canonicalization", "tiling_canonicalization", "for_loop_canonicalization"]


ContractionLowering = Literal["dot", "llvmintr", "outerproduct", "parallelarith"]
"""``vector.lower_contraction lowering_strategy``: exactly what IREE 3.13 parses."""

TransposeLowering = Literal["eltwise", "llvmintr", "shuffle_1d", "shuffle_16x16"]
"""``vector.lower_transpose lowering_strategy``: exactly what IREE 3.13 parses."""


class VectorLowering(StrategyModel):
    """Vector lowering after bufferization, each group in its own ``apply_patterns`` block:
    ``lower_contraction lowering_strategy = <contraction>``, ``transfer_permutation_patterns``,
    ``lower_transpose lowering_strategy = <transpose>``; then ``lower_transfer
    max_transfer_rank = <transfer_max_rank>`` and ``lower_shape_cast``."""

    contraction: ContractionLowering = "outerproduct"
    """lowering_strategy of transform.apply_patterns.vector.lower_contraction."""
    transpose: TransposeLowering = "shuffle_1d"
    """lowering_strategy of transform.apply_patterns.vector.lower_transpose."""
    transfer_max_rank: Rank = 1
    """max_transfer_rank of transform.apply_patterns.vector.lower_transfer."""


class MmaChain(StrategyModel):
    """rocm matrix cores in a full TD strategy: after the last tiling level the op is packed to
    the intrinsic's tile (``transform.structured.pack packed_sizes = [m, n, k]``), turned into
    ``iree_codegen.inner_tiled`` (``transform.iree.convert_to_multi_mma``) and distributed to
    the 64 lanes of one subgroup (``transform.iree.distribute_inner_tiled``); vectorization
    uses IREE's generic vectorization pass, ``transform.iree.forall_to_lanes`` runs before
    thread mapping, and the inner-tiled ops are unrolled and lowered to MFMA instructions
    (``unroll_multi_mma``, ``lower_inner_tiled``, ``eliminate_hoistable_conversions`` twice).

    One subgroup per workgroup: ``gpu.workgroup_dims`` must be ``[64, 1, 1]``. The global to
    LDS copies are not distributed over lanes and there is no software pipelining: a
    compile-level starting point, not a tuned kernel.
    """

    intrinsic: str
    """The MFMA intrinsic (#iree_gpu.mma_layout<..>) of transform.iree.convert_to_multi_mma."""


class GpuThreads(StrategyModel):
    """rocm thread mapping: ``transform.iree.map_nested_forall_to_gpu_threads
    workgroup_dims = [x, y, z]``; the subgroup size comes from the target."""

    workgroup_dims: tuple[ThreadCount, ThreadCount, ThreadCount]
    """workgroup_dims of transform.iree.map_nested_forall_to_gpu_threads."""


class Codegen(StrategyKind):
    """A full transform-dialect codegen strategy; see the module docstring."""

    injection: ClassVar[Injection] = Injection.CODEGEN_LIBRARY
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU, Backend.ROCM})
    template: ClassVar[str] = "strategies/codegen.mlir.j2"

    kind: Literal["codegen"] = "codegen"
    """The discriminator: a full transform-dialect strategy, rendered into the codegen library."""
    name: SymbolName
    """The strategy's name: its named sequence symbol, locations and the tdsl.root/tdsl.applied markers."""
    root: OpName
    """The op the strategy lowers (marked tdsl.root; the tiling acts on it)."""
    tiling: tuple[TileStep, ...]
    """The tiling hierarchy: level 0 a forall mapped to blocks, then foralls or fors."""
    fusion: tuple[Fuse, ...] = (Fuse(producers=("linalg.fill",), into=(0,)),)
    """Producers fused into forall levels (default: linalg.fill into the workgroup forall)."""
    promote_operands: tuple[OperandIndex, ...] = ()
    """Operands promoted to shared memory (transform.iree.promote_operands; rocm)."""
    promote_after: Int64 = 0
    """The tiling level after which operands are promoted."""
    vectorize: StrictBool = True
    """transform.structured.vectorize_children_and_apply_patterns on the function."""
    cleanup: tuple[CleanupPatterns, ...] = (
        "tiling_canonicalization",
        "for_loop_canonicalization",
        "canonicalization",
    )
    """Pattern sets applied after vectorization (transform.apply_patterns.<set>), then CSE."""
    vector_lowering: Optional[VectorLowering] = VectorLowering()
    """How vector contractions, transposes and transfers are lowered after bufferization;
    None: no vector lowering (and no cleanup after it), for a sequence that does not vectorize."""
    gpu: Optional[GpuThreads] = None
    """rocm: the thread mapping of the workgroup."""
    mma: Optional[MmaChain] = None
    """rocm: lower the op to MFMA instructions (pack, convert_to_multi_mma, distribute_inner_tiled)."""

    @model_validator(mode="after")
    def _check(self) -> "Codegen":
        if not self.tiling:
            raise problem("tiling", "at least one level (a forall mapped to blocks)", [])
        if len(self.tiling) > MAX_RANK:
            raise problem("tiling", f"at most {MAX_RANK} levels", Described(f"{len(self.tiling)} levels"))
        check_distinct("promote_operands", self.promote_operands)
        first = self.tiling[0]
        if not isinstance(first, TileUsingForall) or first.mapping_kind != "block":
            raise problem(
                "tiling[0]",
                "a forall mapped to #gpu.block<..> (the workgroup level)",
                first.kind if not isinstance(first, TileUsingForall) else list(first.mapping),
            )
        rank = len(first.sizes)
        iterators = _ITERATORS.get(self.root)
        for i, level in enumerate(self.tiling):
            field = "tile_sizes" if level.kind == "for" or level.tile_sizes is not None else "num_threads"
            if len(level.sizes) > rank and i > 0 and level.kind == "forall":
                raise problem(f"tiling[{i}].{field}", f"at most {rank} entries", list(level.sizes))
            if iterators is not None and len(level.sizes) > len(iterators):
                raise problem(
                    f"tiling[{i}].{field}",
                    f"at most {len(iterators)} entries, one per loop of {self.root}",
                    list(level.sizes),
                )
            if i > 0 and isinstance(level, TileUsingForall) and level.mapping_kind == "block":
                raise problem(
                    f"tiling[{i}].mapping",
                    "thread or warp mapping (only tiling[0] maps to blocks)",
                    list(level.mapping),
                )
            if iterators is not None and isinstance(level, TileUsingForall):
                for d, size in enumerate(level.sizes):
                    if size and iterators[d] == "r":
                        raise problem(
                            f"tiling[{i}].{field}[{d}]",
                            f"0: loop {d} of {self.root} is a reduction and a forall may "
                            "not tile it (use a 'for' level)",
                            size,
                        )
        for j, fuse in enumerate(self.fusion):
            for k, into in enumerate(fuse.into):
                if not 0 <= into < len(self.tiling) or self.tiling[into].kind != "forall":
                    raise problem(
                        f"fusion[{j}].into[{k}]",
                        "the index of a forall level in tiling "
                        + str([i for i, t in enumerate(self.tiling) if t.kind == "forall"]),
                        into,
                    )
        if self.vector_lowering is None and (self.vectorize or self.mma is not None):
            raise problem(
                "vector_lowering",
                "a vector lowering: the strategy vectorizes, and the vectors it leaves fail the "
                "lowering after it (None is for a strategy with vectorize=False and no mma)",
                None,
            )
        if self.mma is None and self.vector_lowering is not None and self.vector_lowering.transfer_max_rank != 1:
            raise problem(
                "vector_lowering.transfer_max_rank",
                "1: the strategy's vector lowering is the last before LLVM (llvm-cpu) or the GPU "
                "lowering (rocm), and neither takes the n-D vector transfers a higher rank leaves "
                "(IREE 3.13: 'LLVM Translation failed for operation: builtin.unrealized_conversion_cast', "
                "'failed to legalize operation vector.store')",
                self.vector_lowering.transfer_max_rank,
                hint="the nearest legal value is 1",
            )
        if self.promote_operands and not 0 <= self.promote_after < len(self.tiling):
            raise problem("promote_after", f"a tiling level index below {len(self.tiling)}", self.promote_after)
        return self

    def loops(self) -> Optional[tuple[str, int]]:
        """Tile-size lists may be shorter than the loop nest, so no exact count is implied."""
        return None

    def check_match(self, match: MatcherKind) -> None:
        check_promoted(self, match, self.promote_operands)
        if self.root in _ITERATORS:
            for i, operand in enumerate(self.promote_operands):
                if operand > 2:
                    raise problem(
                        f"promote_operands[{i}]",
                        f"an operand index of {self.root}: 0 to 2 (0 lhs, 1 rhs, 2 result)",
                        operand,
                        hint="the largest legal value is 2",
                        strategy=self.name,
                    )

    def fused_at(self, level: int) -> list[tuple[int, "Fuse"]]:
        """(fusion index, rule) for the producers fused after tiling level ``level``."""
        return [(j, f) for j, f in enumerate(self.fusion) if level in f.into]
