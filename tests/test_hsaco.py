"""Resource-report helpers that need no compiler."""

from __future__ import annotations

from tdsl.hsaco import KernelResources, mfma_counts


def test_mfma_counts_per_kernel_label() -> None:
    isa = "\n".join(
        [
            "k0:",
            "  v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]",
            "  s_waitcnt lgkmcnt(0)",
            ".LBB0_1:",
            "  v_mfma_f32_16x16x16_f16 a[4:7], v[0:1], v[2:3], a[4:7]",
            "k1:                                      ; @k1",
            "  v_add_f32 v0, v1, v2",
        ]
    )
    assert mfma_counts(isa) == {"k0": 2, "k1": 0}


def test_waves_per_simd_from_registers() -> None:
    def kernel(vgprs: int, agprs: int = 0) -> KernelResources:
        return KernelResources("k", 0, vgprs, agprs, 10, 0, 0, 0, 256, 0)

    assert kernel(48).waves_per_simd == 8
    assert kernel(118).waves_per_simd == 4
    assert kernel(128, 128).waves_per_simd == 2
    assert kernel(512).waves_per_simd == 1
