"""AMD GPU architecture facts: subgroup size, LDS, workgroup and register limits, compute
units and the MFMA intrinsics. They live here and only here; strategies and choosers read
them from :data:`ARCHITECTURES`.
"""

from __future__ import annotations

import re

from ..errors import TdslError
from ..model.base import StrategyModel
from ..model.element_types import element_bytes

SPEC_WORDS = ("#iree_gpu.", "MFMA_", "WMMA_", "#rocdl.", "rocm", "gfx9", "amdgpu")
"""Words that only a transform spec for an AMD GPU holds (its attributes, intrinsics,
targets): how ``tdsl import`` tells a ROCm spec whose configs name no backend."""

_MMA_RE = re.compile(r"MFMA_(F32|I32|F64)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+)(?:_([A-Z0-9]+))?")
_MLIR_TYPE = {
    "F64": "f64",
    "F32": "f32",
    "I32": "i32",
    "F16": "f16",
    "BF16": "bf16",
    "I8": "i8",
    "F8E4M3FNUZ": "f8E4M3FNUZ",
    "F8E5M2FNUZ": "f8E5M2FNUZ",
}


class MmaIntrinsic(StrategyModel):
    """One matrix-core intrinsic: ``C[m x n] (c_type) += A[m x k] (a_type) * B[k x n] (b_type)``."""

    name: str
    m: int
    n: int
    k: int
    a_type: str
    b_type: str
    c_type: str

    @classmethod
    def from_name(cls, name: str) -> "MmaIntrinsic":
        match = _MMA_RE.fullmatch(name)
        if match is None:
            raise TdslError(f"MMA intrinsic: expected a name such as MFMA_F32_16x16x16_F16, received {name!r}")
        acc, m, n, k, a, b = match.groups()
        return cls(
            name=name,
            m=int(m),
            n=int(n),
            k=int(k),
            a_type=_MLIR_TYPE[a],
            b_type=_MLIR_TYPE[b or a],
            c_type=_MLIR_TYPE[acc],
        )

    @property
    def element_bytes(self) -> int:
        """Bytes per A/B element."""
        return element_bytes(self.a_type)

    def __repr__(self) -> str:
        """``MmaIntrinsic('MFMA_F32_16x16x16_F16')`` when the name says it all (it does for
        every intrinsic :meth:`from_name` builds), else every field."""
        try:
            if MmaIntrinsic.from_name(self.name) == self:
                return f"MmaIntrinsic({self.name!r})"
        except TdslError:
            pass
        return super().__repr__()


class AmdGpuArch(StrategyModel):
    """Facts about one AMD GPU architecture that strategies are checked against."""

    arch: str
    subgroup_size: int
    lds_bytes_per_workgroup: int
    max_workgroup_size: int
    vgprs_per_simd: int
    vgpr_allocation_granule: int
    max_waves_per_simd: int
    simds_per_cu: int
    compute_units: int
    mma_intrinsics: tuple[MmaIntrinsic, ...]

    def intrinsic(self, name: str) -> MmaIntrinsic | None:
        for intrinsic in self.mma_intrinsics:
            if intrinsic.name == name:
                return intrinsic
        return None

    def waves_per_simd(self, vgprs: int) -> int:
        """Occupancy bound from registers: ``vgprs`` (VGPRs + AGPRs of one lane, unified on
        CDNA3) rounded up to the allocation granule, at most ``max_waves_per_simd``."""
        granule = self.vgpr_allocation_granule
        granules = max(granule, -(-vgprs // granule) * granule)
        return min(self.max_waves_per_simd, self.vgprs_per_simd // granules)

    def __repr__(self) -> str:
        """``AmdGpuArch('gfx942')`` for a known architecture's facts (:data:`ARCHITECTURES`);
        a modified copy shows the fields that differ (``AmdGpuArch('gfx942',
        compute_units=228)``), an unknown architecture every field; intrinsics as a count."""
        known = ARCHITECTURES.get(self.arch)
        shown = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if name == "arch" or (known is not None and value == getattr(known, name)):
                continue
            if name == "mma_intrinsics":
                shown.append(f"mma_intrinsics=<{len(value)} intrinsics>")
            else:
                shown.append(f"{name}={value!r}")
        return f"AmdGpuArch({', '.join([repr(self.arch), *shown])})"


GFX942 = AmdGpuArch(
    arch="gfx942",
    subgroup_size=64,
    lds_bytes_per_workgroup=65536,
    max_workgroup_size=1024,
    vgprs_per_simd=512,
    vgpr_allocation_granule=8,
    max_waves_per_simd=8,
    simds_per_cu=4,
    compute_units=304,  # MI300X
    mma_intrinsics=tuple(
        MmaIntrinsic.from_name(n)
        # The single-block intrinsics iree-compile 3.13 lists for gfx942 (its target
        # attribute's `mma = [...]`); the multi-block ones (e.g. MFMA_F32_4x4x4x16B_F16) are left out.
        for n in (
            "MFMA_F32_16x16x4_F32",
            "MFMA_F32_16x16x16_F16",
            "MFMA_F32_32x32x8_F16",
            "MFMA_F32_16x16x16_BF16",
            "MFMA_F32_32x32x8_BF16",
            "MFMA_F32_16x16x32_F8E4M3FNUZ",
            "MFMA_F32_16x16x32_F8E5M2FNUZ",
            "MFMA_F32_16x16x32_F8E4M3FNUZ_F8E5M2FNUZ",
            "MFMA_F32_16x16x32_F8E5M2FNUZ_F8E4M3FNUZ",
            "MFMA_F32_32x32x16_F8E4M3FNUZ",
            "MFMA_F32_32x32x16_F8E5M2FNUZ",
            "MFMA_F32_32x32x16_F8E4M3FNUZ_F8E5M2FNUZ",
            "MFMA_F32_32x32x16_F8E5M2FNUZ_F8E4M3FNUZ",
            "MFMA_I32_16x16x32_I8",
            "MFMA_I32_32x32x16_I8",
            "MFMA_F64_16x16x4_F64",
        )
    ),
)

ARCHITECTURES: dict[str, AmdGpuArch] = {"gfx942": GFX942}
