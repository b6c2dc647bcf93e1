"""AMD GPU targets (rocm): per-architecture facts and the flags that select them.

The facts (subgroup size, LDS per workgroup, MFMA intrinsics) live here and only here;
target-independent strategy concepts never hard-code them.
"""

from __future__ import annotations

import re
from typing import Literal

from ..model import StrategyModel, SymbolName

_MMA_RE = re.compile(r"^MFMA_(F32|I32|F64)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+)(?:_([A-Z0-9]+))?$")
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
        match = _MMA_RE.match(name)
        if match is None:
            raise ValueError(f"not an MFMA intrinsic name: {name!r}")
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
        return {"f32": 4, "f16": 2, "bf16": 2}.get(self.a_type, 1)


class AmdGpuArch(StrategyModel):
    """Facts about one AMD GPU architecture that strategies are checked against."""

    arch: str
    subgroup_size: int
    lds_bytes_per_workgroup: int
    max_workgroup_size: int
    vgprs_per_simd: int
    simds_per_cu: int
    mma_intrinsics: tuple[MmaIntrinsic, ...]

    def intrinsic(self, name: str) -> MmaIntrinsic | None:
        for intrinsic in self.mma_intrinsics:
            if intrinsic.name == name:
                return intrinsic
        return None


GFX942 = AmdGpuArch(
    arch="gfx942",
    subgroup_size=64,
    lds_bytes_per_workgroup=65536,
    max_workgroup_size=1024,
    vgprs_per_simd=512,
    simds_per_cu=4,
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


class AmdGpuTarget(StrategyModel):
    """A rocm target. Emits ``--iree-hal-target-device=hip --iree-rocm-target=<arch>``.

    Example::

        AmdGpuTarget(arch="gfx942")   # facts: subgroup 64, 64 KiB LDS, CDNA3 MFMA set
    """

    kind: Literal["rocm"] = "rocm"
    name: SymbolName = "gfx942"
    arch: Literal["gfx942"] = "gfx942"

    @property
    def backend(self) -> str:
        return "rocm"

    @property
    def facts(self) -> AmdGpuArch:
        return ARCHITECTURES[self.arch]

    def compile_flags(self) -> list[str]:
        """The ``iree-compile`` flags that select this target (no strategy files)."""
        return ["--iree-hal-target-device=hip", f"--iree-rocm-target={self.arch}"]
