"""Choosing a gfx942 configuration (a GpuLowering) from a contraction's shape and types.

The heuristic, in order:

1. **Intrinsic**: among the target's MFMA intrinsics whose A/B/C types are the op's, the
   16x16 one (more workgroups on small problems, fewer VGPRs) whose M, N, K divide the
   problem; else a 32x32 one that divides; else the 16x16 one with ``padding`` (IREE pads
   the problem to the tile). No intrinsic for the types (e.g. f32 x f16): SIMT.
2. **Workgroup tile** (M x N elements): the largest of 128x128, 128x64, 64x128, 64x64,
   64x32, 32x64, 32x32, 16x16 that divides the problem and still gives at least one
   workgroup per two CUs (``AmdGpuArch.compute_units``: 304 on MI300X; ``min_workgroups``); with four subgroups (2x2, 256
   threads) each owning a quarter of the tile.
3. **Reduction** (in intrinsics): the largest of 4, 2, 1 that divides K and keeps the
   estimated LDS (both operands promoted, see ``tdsl.targets.amdgpu_resources``) within
   half the budget, so two workgroups fit per CU.
4. **Prefetch**: 2 stages when the K loop has at least 3 iterations, else 0.

``choose_contraction(...)`` returns the GpuLowering; ``rule_for(...)`` wraps it in a Rule
whose ContractionMatch pins the shape, ready for a StrategySet.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Optional, Sequence

from tdsl.errors import TdslError
from tdsl import ContractionMatch, ConvolutionMatch, GpuLowering, Rule
from tdsl.targets import GFX942, AmdGpuArch, MmaIntrinsic
from tdsl.spec.element_types import element_bytes
from tdsl.targets.amdgpu_resources import LdsProblem

WORKGROUP_TILES = ((128, 128), (128, 64), (64, 128), (64, 64), (64, 32), (32, 64), (32, 32), (16, 16))


@dataclass(frozen=True)
class Contraction:
    """A contraction's problem, what :func:`choose_contraction` configures.

    ``batch``: the batch loop sizes (``()`` for a plain matmul, ``(8,)`` for a batch
    matmul); ``m``, ``n``, ``k``: the problem sizes; ``lhs_type``, ``rhs_type``,
    ``output_type``: element types as MLIR spells them (``"f16"``, ``"f32"``, ``"i8"``);
    ``loop_order``: the order of the m/n/k loops after the batch loops (``"mnk"`` for
    ``linalg.matmul``). ``match()`` is the ContractionMatch that selects exactly it::

        Contraction((), 4096, 4096, 4096, "f16", "f16", "f32")
    """

    batch: tuple[int, ...]
    m: int
    n: int
    k: int
    lhs_type: str
    rhs_type: str
    output_type: str
    loop_order: str = "mnk"

    def match(self) -> ContractionMatch:
        """The matcher that selects exactly this problem."""
        match: ContractionMatch = ContractionMatch.model_validate(
            {
                "lhs_type": self.lhs_type,
                "rhs_type": self.rhs_type,
                "output_type": self.output_type,
                "batch": list(self.batch),
                "m": self.m,
                "n": self.n,
                "k": self.k,
                "loop_order": None if self.loop_order == "mnk" else "b" * len(self.batch) + self.loop_order,
            }
        )
        return match

    def __repr__(self) -> str:
        """Positional, as the docstring's example: ``Contraction((), 4096, 4096, 4096, 'f16', 'f16', 'f32')``."""
        order = "" if self.loop_order == "mnk" else f", loop_order={self.loop_order!r}"
        return (
            f"Contraction({self.batch!r}, {self.m}, {self.n}, {self.k}, {self.lhs_type!r}, "
            f"{self.rhs_type!r}, {self.output_type!r}{order})"
        )

    def per_loop(self, batch: int, m: int, n: int, k: int) -> list[int]:
        """A tile list in this op's loop order from per-role values."""
        by_role = {"m": m, "n": n, "k": k}
        return [batch] * len(self.batch) + [by_role[r] for r in self.loop_order]


def choose_intrinsic(problem: Contraction, facts: AmdGpuArch = GFX942) -> tuple[Optional[MmaIntrinsic], bool]:
    """(intrinsic or None for SIMT, whether the problem must be padded to use it)."""
    typed = [
        x
        for x in facts.mma_intrinsics
        if (x.a_type, x.b_type, x.c_type) == (problem.lhs_type, problem.rhs_type, problem.output_type)
    ]
    if not typed:
        return None, False
    ordered = sorted(typed, key=lambda x: (x.m != 16, -x.k))
    for intrinsic in ordered:
        if not (problem.m % intrinsic.m or problem.n % intrinsic.n or problem.k % intrinsic.k):
            return intrinsic, False
    return ordered[0], True


def _tile(problem: Contraction, align_m: int, align_n: int, min_workgroups: int) -> tuple[int, int]:
    batch = prod(problem.batch) if problem.batch else 1
    fitting = [
        (wm, wn)
        for wm, wn in WORKGROUP_TILES
        if wm % (2 * align_m) == 0 and wn % (2 * align_n) == 0 and problem.m % wm == 0 and problem.n % wn == 0
    ]
    for wm, wn in fitting:
        if batch * (problem.m // wm) * (problem.n // wn) >= min_workgroups:
            return wm, wn
    if fitting:
        return fitting[-1]
    return 2 * align_m, 2 * align_n  # padded problem: the smallest tile of four subgroups


def choose_contraction(
    problem: Contraction,
    name: str,
    facts: AmdGpuArch = GFX942,
    min_workgroups: Optional[int] = None,
) -> GpuLowering:
    """A TileAndFuse configuration for ``problem``; see the module docstring.
    ``min_workgroups`` defaults to one workgroup per two compute units of ``facts``."""
    if min_workgroups is None:
        min_workgroups = facts.compute_units // 2
    intrinsic, padded = choose_intrinsic(problem, facts)
    nb = len(problem.batch)
    loops = problem.per_loop
    if intrinsic is None:
        wm, wn = _tile(problem, 8, 8, min_workgroups)
        kt = next((t for t in (32, 16, 8, 4, 2, 1) if problem.k % t == 0), 1)
        return GpuLowering(
            name=name,
            workgroup=loops(1, wm, wn, 0),
            reduction=loops(0, 0, 0, kt),
            thread=loops(1, max(1, wm // 16), max(1, wn // 16), 0),
            promote_operands=[0, 1],
            workgroup_size=[256, 1, 1],
        )
    wm, wn = _tile(problem, intrinsic.m, intrinsic.n, min_workgroups)
    roles = tuple("b" * nb + problem.loop_order)
    reduction = 1
    for r in (4, 2, 1):
        if problem.k % (r * intrinsic.k) and not padded:
            continue
        estimate = LdsProblem(
            roles,
            tuple(loops(1, wm, wn, 0)),
            tuple(loops(0, 0, 0, r)),
            (0, 1),
            element_bytes(problem.lhs_type),
            element_bytes(problem.rhs_type),
            intrinsic.k,
            facts.lds_bytes_per_workgroup,
        ).estimate()
        if estimate.padded <= facts.lds_bytes_per_workgroup // 2:
            reduction = r
            break
    k_iterations = -(-problem.k // (reduction * intrinsic.k))
    return GpuLowering(
        name=name,
        workgroup=loops(1, wm, wn, 0),
        reduction=loops(0, 0, 0, reduction),
        subgroup=loops(1, wm // (2 * intrinsic.m), wn // (2 * intrinsic.n), 0),
        mma_kind=intrinsic.name,
        promote_operands=[0, 1],
        padding=loops(1, wm, wn, reduction * intrinsic.k) if padded else None,
        workgroup_size=[256, 1, 1],
        prefetch_num_stages=2 if k_iterations >= 3 else 0,
    )


def rule_for(problem: Contraction, name: str, target: str = "gfx942", facts: AmdGpuArch = GFX942) -> Rule:
    """A gfx942 Rule: the exact-shape matcher and the chosen configuration."""
    return Rule(target=target, match=problem.match(), strategy=choose_contraction(problem, name, facts))


def rules_for(problems: Sequence[tuple[str, Contraction]], target: str = "gfx942") -> list[Rule]:
    """One rule per named problem, in order."""
    return [rule_for(problem, name, target) for name, problem in problems]


@dataclass(frozen=True)
class Convolution2d:
    """A 2-D convolution as IREE's implicit GEMM sees it, what :func:`choose_convolution`
    configures: ``batch``; the output image ``oh`` x ``ow`` (stride and dilation folded in);
    output channels ``oc``; the filter ``kh`` x ``kw``; input channels ``ic``; element
    types; ``layout`` ``"nhwc"`` (``linalg.conv_2d_nhwc_hwcf``) or ``"nchw"``.
    ``match()`` is the ConvolutionMatch that selects exactly it::

        Convolution2d(2, 56, 56, 64, 3, 3, 64, "f16", "f16", "f32")
    """

    batch: int
    oh: int
    ow: int
    oc: int
    kh: int
    kw: int
    ic: int
    lhs_type: str
    rhs_type: str
    output_type: str
    layout: str = "nhwc"

    def __repr__(self) -> str:
        """Positional: ``Convolution2d(2, 56, 56, 64, 3, 3, 64, 'f16', 'f16', 'f32')``."""
        layout = "" if self.layout == "nhwc" else f", {self.layout!r}"
        return (
            f"Convolution2d({self.batch}, {self.oh}, {self.ow}, {self.oc}, {self.kh}, {self.kw}, {self.ic}, "
            f"{self.lhs_type!r}, {self.rhs_type!r}, {self.output_type!r}{layout})"
        )

    def match(self) -> ConvolutionMatch:
        """The matcher that selects exactly this convolution."""
        match: ConvolutionMatch = ConvolutionMatch.model_validate(
            {
                "lhs_type": self.lhs_type,
                "rhs_type": self.rhs_type,
                "output_type": self.output_type,
                "batch": [self.batch],
                "output_image": [self.oh, self.ow],
                "output_channel": [self.oc],
                "filter": [self.kh, self.kw],
                "input_channel": [self.ic],
            }
        )
        return match


def choose_convolution(problem: Convolution2d, name: str, facts: AmdGpuArch = GFX942) -> GpuLowering:
    """TileAndFuse with implicit GEMM: loops (n, oh, ow, oc, K) for NHWC and (n, oc, oh, ow, K)
    for NCHW; M = n*oh*ow, N = oc, K = kh*kw*ic. Four subgroups: two over output rows, two
    over output channels and, for wide tiles, two over the output width."""
    gemm = Contraction((), problem.oh * problem.ow, problem.oc, problem.kh * problem.kw * problem.ic,
                       problem.lhs_type, problem.rhs_type, problem.output_type)
    intrinsic, _ = choose_intrinsic(gemm, facts)
    if intrinsic is None:
        raise TdslError(f"no MFMA intrinsic of {facts.arch} takes {problem.lhs_type} x {problem.rhs_type} -> {problem.output_type}")
    toc = next((t for t in (64, 32, 16) if problem.oc % t == 0 and t % (2 * intrinsic.n) == 0), 2 * intrinsic.n)
    tw = next((t for t in (32, 16) if problem.ow % t == 0 and t % intrinsic.m == 0), intrinsic.m)
    th = next((t for t in (4, 2) if problem.oh % t == 0), 2)
    k_total = gemm.k
    reduction = 1
    for r in (4, 2, 1):
        if k_total % (r * intrinsic.k):
            continue
        lds = (th * tw * r * intrinsic.k) * element_bytes(problem.lhs_type) + (r * intrinsic.k * toc) * element_bytes(problem.rhs_type)
        if lds <= facts.lds_bytes_per_workgroup // 2:
            reduction = r
            break
    # Subgroups: two over output channels, two over output rows, and two over the output
    # width when the width tile holds two intrinsic rows (8 subgroups, as IREE's default).
    ow_split = 2 if tw >= 2 * intrinsic.m else 1
    sg_oc, sg_oh, sg_ow = toc // (2 * intrinsic.n), th // 2, tw // (ow_split * intrinsic.m)
    threads = 4 * ow_split * facts.subgroup_size
    if problem.layout == "nchw":
        workgroup, subgroup = [1, toc, th, tw, 0], [1, sg_oc, sg_oh, sg_ow, 0]
    else:
        workgroup, subgroup = [1, th, tw, toc, 0], [1, sg_oh, sg_ow, sg_oc, 0]
    return GpuLowering(
        name=name,
        workgroup=workgroup,
        reduction=[0, 0, 0, 0, reduction],
        subgroup=subgroup,
        mma_kind=intrinsic.name,
        promote_operands=[0, 1],
        workgroup_size=[threads, 1, 1],
        prefetch_num_stages=2 if k_total // (reduction * intrinsic.k) >= 3 else 0,
        use_igemm_convolution=True,
    )


def conv_rule_for(problem: Convolution2d, name: str, target: str = "gfx942", facts: AmdGpuArch = GFX942) -> Rule:
    """A gfx942 Rule for one convolution: exact-shape matcher and the chosen configuration."""
    return Rule(target=target, match=problem.match(), strategy=choose_convolution(problem, name, facts))
