"""AMD GPU resource checks made before compiling: LDS per workgroup and MMA shape fit.

LDS model (validated against ``.group_segment_fixed_size`` of compiled gfx942 kernels,
see tests/targets/test_gpu_resources.py): IREE promotes each operand in ``promote_operands``
(0 = lhs, 1 = rhs) into shared memory as one tile per workgroup, and pads every row of
each tile by 8 bytes to avoid bank conflicts:

    lhs tile: B x M x Kt elements, B*M rows;   rhs tile: B x Kt x N elements, B*Kt rows
    LDS = (lhs + rhs) * element_bytes + 8 * (rows of each promoted tile)

and promoting the result (operand 2) adds two B x M x N tiles of the result type, each
padded by 8 bytes per row (64x64 f32: 33792 bytes, 32x128 f32: 33280 bytes, measured).

where B, M, N are the products of the workgroup tile over batch / m / n loops and Kt is
the reduction tile in elements (TileAndFuse with an ``mma_kind`` counts intrinsics on the
innermost k loop: Kt = reduction * intrinsic K there; outer k loops count elements). When
the padded size would exceed the budget IREE drops the padding, so a configuration is legal
when the unpadded size fits. Prefetching
(TileAndFuse ``prefetch_num_stages``) does not change LDS in IREE 3.13.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..model.element_types import element_bytes
from ..model.lowering import GpuLowering
from ..model.matchers import ContractionMatch
from .amdgpu_facts import AmdGpuArch

ROW_PAD_BYTES = 8


@dataclass(frozen=True)
class LdsEstimate:
    """Shared memory one workgroup uses: unpadded bytes and bytes with IREE's row padding."""

    unpadded: int
    padded: int
    limit: int

    @property
    def bytes(self) -> int:
        """What the compiled kernel reports: padded, unless padding would not fit."""
        return self.padded if self.padded <= self.limit else self.unpadded

    @property
    def fits(self) -> bool:
        return self.unpadded <= self.limit


@dataclass(frozen=True)
class LdsProblem:
    """What LDS depends on: loop roles ('b', 'm', 'n', 'k' per loop), the workgroup and
    reduction tiles, the promoted operands, operand element sizes, the elements per
    reduction step (the intrinsic K when ``reduction`` counts intrinsics, else 1) and the
    budget."""

    roles: tuple[str, ...]
    workgroup: tuple[int, ...]
    reduction: tuple[int, ...]
    promote_operands: tuple[int, ...]
    lhs_bytes: int
    rhs_bytes: int
    k_per_reduction_step: int
    limit: int
    result_bytes: int = 4

    def estimate(self, reduction: Sequence[int] | None = None) -> LdsEstimate:
        """The estimate for this problem (or for another ``reduction`` tile)."""
        red = list(self.reduction if reduction is None else reduction)
        b = m = n = kt = 1
        innermost_k = max((i for i, role in enumerate(self.roles) if role == "k"), default=-1)
        for i, (role, wg, r) in enumerate(zip(self.roles, self.workgroup, red + [0] * len(self.roles))):
            if role == "b":
                b *= max(wg, 1)
            elif role == "m":
                m *= max(wg, 1)
            elif role == "n":
                n *= max(wg, 1)
            elif role == "k":  # only the innermost k loop is packed into intrinsics; outer ones count elements
                kt *= max(r, 1) * (self.k_per_reduction_step if i == innermost_k else 1)
        unpadded = padding = 0
        if 0 in self.promote_operands:
            unpadded += b * m * kt * self.lhs_bytes
            padding += ROW_PAD_BYTES * b * m
        if 1 in self.promote_operands:
            unpadded += b * kt * n * self.rhs_bytes
            padding += ROW_PAD_BYTES * b * kt
        if 2 in self.promote_operands:
            unpadded += 2 * b * m * n * self.result_bytes
            padding += 2 * ROW_PAD_BYTES * b * m
        return LdsEstimate(unpadded, unpadded + padding, self.limit)

    def largest_legal_reduction(self) -> Optional[tuple[int, int]]:
        """(loop index, value): the largest value of the innermost reduction tile that fits."""
        k_loops = [i for i, r in enumerate(self.roles) if r == "k" and i < len(self.reduction) and self.reduction[i]]
        if not k_loops:
            return None
        index = k_loops[-1]

        def fits(value: int) -> bool:
            trial = list(self.reduction)
            trial[index] = value
            return self.estimate(trial).fits

        # LDS grows with the reduction tile, so bisect (the tile may be huge).
        low, high = 0, self.reduction[index]
        while low < high:
            middle = (low + high + 1) // 2
            if fits(middle):
                low = middle
            else:
                high = middle - 1
        return None if low == 0 else (index, low)


def lds_problem(strategy: GpuLowering, match: ContractionMatch, facts: AmdGpuArch) -> Optional[LdsProblem]:
    """The LDS problem of a GPU config on a contraction, or None when the matcher does not
    fix the loop roles (any-rank groups) or the ranks disagree."""
    roles = match.loop_roles()
    if roles is None or len(roles) != len(strategy.workgroup):
        return None
    intrinsic = facts.intrinsic(strategy.mma_kind) if strategy.mma_kind else None
    k_step = intrinsic.k if intrinsic is not None and strategy.pipeline == "TileAndFuse" else 1
    return LdsProblem(
        roles,
        tuple(strategy.workgroup),
        tuple(strategy.reduction or ()),
        tuple(strategy.promote_operands),
        element_bytes(match.lhs_type),
        element_bytes(match.rhs_type),
        k_step,
        facts.lds_bytes_per_workgroup,
        element_bytes(match.output_type),
    )


def lds_for(strategy: GpuLowering, match: ContractionMatch, facts: AmdGpuArch) -> Optional[LdsEstimate]:
    """Estimated LDS of ``strategy`` on the contraction ``match`` selects (None if unknown)."""
    problem = lds_problem(strategy, match, facts)
    return None if problem is None else problem.estimate()
