"""Resource-report helpers that need no compiler."""

from __future__ import annotations

from tdsl import GFX942
from tdsl.compiler.hsaco import mfma_counts


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
    """gfx942: 512 unified VGPRs per SIMD lane, granules of 8, at most 8 waves."""
    assert GFX942.waves_per_simd(48) == 8
    assert GFX942.waves_per_simd(118) == 4
    assert GFX942.waves_per_simd(128 + 128) == 2
    assert GFX942.waves_per_simd(512) == 1
