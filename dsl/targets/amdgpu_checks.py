"""Checks of GPU strategies against an AMD GPU's facts, made before compiling: subgroup
and workgroup sizes, MMA intrinsics and their fit to the problem, subgroup tiles, LDS per
workgroup (:mod:`tdsl.targets.amdgpu_resources`), and a Codegen strategy's thread mapping.
Each raises the ``problem`` error that names the strategy field.
"""

from __future__ import annotations

from ..model.all_of import leaves
from ..model.base import Described, fmt, problem
from ..model.codegen import Codegen
from ..model.kinds import MatcherKind
from ..model.lowering import GpuLowering
from ..model.matchers import ContractionMatch
from .amdgpu_facts import AmdGpuArch, MmaIntrinsic
from .amdgpu_resources import lds_problem


def check_gpu_lowering(match: MatcherKind, strategy: GpuLowering, facts: AmdGpuArch) -> None:
    """Subgroup size, workgroup size, MMA intrinsic, then the resources of the contraction."""
    if strategy.subgroup_size != facts.subgroup_size:
        raise problem(
            "subgroup_size",
            f"{facts.subgroup_size}, the subgroup size of {facts.arch}",
            strategy.subgroup_size,
            strategy=strategy.name,
        )
    if strategy.thread_count() > facts.max_workgroup_size:
        raise problem(
            "workgroup_size",
            f"at most {facts.max_workgroup_size} threads on {facts.arch}",
            Described(f"{fmt(strategy.workgroup_size)} ({strategy.thread_count()} threads)"),
            strategy=strategy.name,
        )
    if strategy.mma_kind is not None and facts.intrinsic(strategy.mma_kind) is None:
        raise problem(
            "mma_kind",
            f"an MMA intrinsic of {facts.arch}: " + ", ".join(x.name for x in facts.mma_intrinsics),
            strategy.mma_kind,
            strategy=strategy.name,
        )
    _check_resources(match, strategy, facts)


def _check_resources(match: MatcherKind, strategy: GpuLowering, facts: AmdGpuArch) -> None:
    """LDS budget and MMA shape fit, for contractions whose loop roles the matcher fixes."""
    contractions = [leaf for leaf in leaves(match) if isinstance(leaf, ContractionMatch)]
    if not contractions:
        return
    contraction = contractions[0]
    intrinsic = facts.intrinsic(strategy.mma_kind) if strategy.mma_kind else None
    sizes = contraction.problem_sizes()
    if intrinsic is not None and sizes is not None and strategy.padding is None:
        m, n, k = sizes
        if m % intrinsic.m or n % intrinsic.n or k % intrinsic.k:
            types = (contraction.lhs_type, contraction.rhs_type, contraction.output_type)
            fitting = [
                x.name
                for x in facts.mma_intrinsics
                if (x.a_type, x.b_type, x.c_type) == types and not (m % x.m or n % x.n or k % x.k)
            ]
            raise problem(
                "mma_kind",
                f"an intrinsic whose M, N and K ({intrinsic.m}, {intrinsic.n}, {intrinsic.k} for "
                f"{intrinsic.name}) divide the problem's {m}x{n}x{k}, or a 'padding' tile; "
                "intrinsics for these element types that fit: " + (", ".join(fitting) or "none"),
                strategy.mma_kind,
                strategy=strategy.name,
            )
    roles = contraction.loop_roles()
    if (
        intrinsic is not None
        and strategy.subgroup is not None
        and roles is not None
        and len(roles) == len(strategy.workgroup)
    ):
        _check_subgroups(strategy, roles, intrinsic, facts)
    lds = lds_problem(strategy, contraction, facts)
    if lds is None:
        return
    estimate = lds.estimate()
    if not estimate.fits:
        legal = lds.largest_legal_reduction()
        hint = (
            f"the largest reduction[{legal[0]}] that fits is {legal[1]}"
            if legal is not None
            else "shrink the workgroup tile"
        )
        raise problem(
            "reduction",
            f"at most {facts.lds_bytes_per_workgroup} bytes of LDS per workgroup on {facts.arch}; "
            f"workgroup {list(strategy.workgroup)} with reduction {list(strategy.reduction or ())} "
            f"promotes {estimate.unpadded} bytes",
            list(strategy.reduction or ()),
            hint=hint,
            strategy=strategy.name,
        )


def _check_subgroups(strategy: GpuLowering, roles: tuple[str, ...], intrinsic: MmaIntrinsic, facts: AmdGpuArch) -> None:
    """TileAndFuse + MMA: each workgroup tile is a whole number of subgroup tiles
    (subgroup x intrinsic), and the subgroups fill the workgroup exactly."""
    assert strategy.subgroup is not None
    subgroups = 1
    innermost = {role: max(i for i, r in enumerate(roles) if r == role) for role in "mn" if role in roles}
    for i, role in enumerate(roles):
        if role not in "mn" or not strategy.workgroup[i]:
            continue
        size = (intrinsic.m if role == "m" else intrinsic.n) if innermost[role] == i else 1
        span = strategy.subgroup[i] * size
        if span == 0 or strategy.workgroup[i] % span:
            raise problem(
                f"subgroup[{i}]",
                f"a tile whose span (subgroup x {size} for {intrinsic.name}) divides "
                f"workgroup[{i}] = {strategy.workgroup[i]}",
                strategy.subgroup[i],
                strategy=strategy.name,
            )
        subgroups *= strategy.workgroup[i] // span
    threads = subgroups * facts.subgroup_size
    if threads != strategy.thread_count():
        raise problem(
            "workgroup_size",
            f"{threads} threads: the workgroup tile {list(strategy.workgroup)} holds {subgroups} subgroup "
            f"tiles of {list(strategy.subgroup)} x {intrinsic.m}x{intrinsic.n} ({intrinsic.name})",
            Described(f"{list(strategy.workgroup_size)} ({strategy.thread_count()} threads)"),
            strategy=strategy.name,
        )


def check_codegen(match: MatcherKind, strategy: Codegen, facts: AmdGpuArch) -> None:
    """A Codegen strategy on this GPU: a thread mapping within the workgroup limit, and for
    an MFMA chain an intrinsic of the GPU on one subgroup per workgroup whose shape divides
    the innermost tiles."""
    if strategy.gpu is None:
        raise problem("gpu", "a GpuThreads mapping for a rocm target", None, strategy=strategy.name)
    x, y, z = strategy.gpu.workgroup_dims
    if strategy.mma is not None:
        if facts.intrinsic(strategy.mma.intrinsic) is None:
            raise problem(
                "mma.intrinsic",
                f"an MMA intrinsic of {facts.arch}: " + ", ".join(i.name for i in facts.mma_intrinsics),
                strategy.mma.intrinsic,
                strategy=strategy.name,
            )
        _check_mma_tiles(match, strategy, facts)
        if (x, y, z) != (facts.subgroup_size, 1, 1):
            raise problem(
                "gpu.workgroup_dims",
                f"[{facts.subgroup_size}, 1, 1]: the MFMA chain runs one subgroup per workgroup",
                list(strategy.gpu.workgroup_dims),
                strategy=strategy.name,
            )
    if x * y * z > facts.max_workgroup_size or x * y * z == 0:
        raise problem(
            "gpu.workgroup_dims",
            f"1 to {facts.max_workgroup_size} threads on {facts.arch}",
            list(strategy.gpu.workgroup_dims),
            strategy=strategy.name,
        )


def _check_mma_tiles(match: MatcherKind, strategy: Codegen, facts: AmdGpuArch) -> None:
    """The MFMA chain packs the innermost tile of each of m, n and k into intrinsic tiles:
    each must be a multiple of the intrinsic's M, N or K (else iree-compile fails:
    'iree_codegen.inner_tiled op failed to populate offsets'). Checked where the matcher
    fixes the loops and every level gives its tile sizes (not num_threads)."""
    assert strategy.mma is not None
    intrinsic = facts.intrinsic(strategy.mma.intrinsic)
    if intrinsic is None:
        return
    if (intrinsic.m, intrinsic.n) != (16, 16):
        same = [
            x.name
            for x in facts.mma_intrinsics
            if (x.m, x.n) == (16, 16)
            and (x.a_type, x.b_type, x.c_type) == (intrinsic.a_type, intrinsic.b_type, intrinsic.c_type)
        ]
        raise problem(
            "mma.intrinsic",
            "a 16x16 intrinsic: the MFMA chain's lane distribution fails on 32x32 ones in IREE 3.13 "
            "('iree_codegen.inner_tiled op failed to populate offsets')",
            strategy.mma.intrinsic,
            hint=f"use {same[0]}" if same else "",
            strategy=strategy.name,
        )
    shape = match.loop_shape()
    if shape is None:
        return
    if sorted(shape.roles) != ["k", "m", "n"]:
        raise problem(
            "mma",
            "a matmul with three loops (m, n, k): the MFMA chain packs the op with one size per loop "
            f"({intrinsic.m}, {intrinsic.n}, {intrinsic.k})",
            Described(f"matched ops with {len(shape.roles)} loops ({''.join(shape.roles)})"),
            strategy=strategy.name,
        )
    contraction = next((m for m in leaves(match) if isinstance(m, ContractionMatch)), None)
    dims = contraction.problem_dims(shape.roles) if contraction is not None else [None] * len(shape.roles)
    for loop, role in enumerate(shape.roles):
        tile: int | None = dims[loop]
        field = ""
        for i, level in enumerate(strategy.tiling):
            sizes = level.sizes
            if loop < len(sizes) and sizes[loop]:
                if getattr(level, "num_threads", None) is not None:
                    tile, field = None, ""
                else:
                    tile, field = sizes[loop], f"tiling[{i}].tile_sizes[{loop}]"
        need = {"m": intrinsic.m, "n": intrinsic.n, "k": intrinsic.k}[role]
        if tile is not None and tile % need:
            raise problem(
                field or "mma.intrinsic",
                f"a multiple of {need}: the innermost tile of loop {loop} ({role}) is packed into "
                f"{intrinsic.name} tiles ({intrinsic.m}x{intrinsic.n}x{intrinsic.k})",
                tile,
                hint=f"the nearest legal value is {max(need, tile // need * need)}",
                strategy=strategy.name,
            )
