"""LDS estimates made before compiling, against the compiled gfx942 kernels' metadata,
and the budget / MMA-shape checks that refuse a strategy before iree-compile runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from tdsl import AmdGpuTarget, ContractionMatch, GpuLowering, Rule, StrategyError, StrategySet, compile
from tdsl.targets import GFX942
from tdsl.targets.amdgpu_resources import lds_for

PAYLOAD = Path(__file__).resolve().parent.parent / "payloads" / "gpu" / "contractions.mlir"

SHAPES = {
    "mm_f16": ("f16", "f32", [], 1024, 2048, 512),
    "mm_bf16": ("bf16", "f32", [], 512, 1024, 512),
    "mm_i8": ("i8", "i32", [], 512, 512, 1024),
    "mm_f32": ("f32", "f32", [], 256, 256, 256),
    "bmm_f16": ("f16", "f32", [8], 512, 512, 256),
}


def _match(function: str) -> ContractionMatch:
    element, acc, batch, m, n, k = SHAPES[function]
    return ContractionMatch(lhs_type=element, rhs_type=element, output_type=acc, batch=batch, m=m, n=n, k=k)


def _tf(wg: list[int], r: int, mma: str, prefetch: int = 2, batch: bool = False) -> dict[str, Any]:
    sub = [max(1, wg[0] // 32), max(1, wg[1] // 32), 0]
    red = [0, 0, r]
    if batch:
        wg, sub, red = [1, *wg], [1, *sub], [0, *red]
    return dict(
        workgroup=[*wg, 0],
        reduction=red,
        subgroup=sub,
        mma_kind=mma,
        promote_operands=[0, 1],
        workgroup_size=[256, 1, 1],
        prefetch_num_stages=prefetch,
    )


F16 = "MFMA_F32_16x16x16_F16"
CONFIGS: list[tuple[str, str, dict[str, Any]]] = [
    *[
        (f"f16_{m}x{n}_r{r}", "mm_f16", _tf([m, n], r, F16, p))
        for (m, n), r, p in [
            ((64, 64), 1, 0),
            ((64, 64), 2, 2),
            ((64, 64), 4, 2),
            ((128, 128), 1, 2),
            ((128, 128), 2, 0),
            ((128, 128), 4, 2),
            ((64, 128), 1, 2),
            ((64, 128), 4, 0),
            ((128, 256), 1, 2),
            ((128, 256), 2, 2),
            ((128, 256), 4, 0),
            ((256, 128), 2, 2),
            ((128, 128), 8, 2),
        ]
    ],
    ("f16_32x32x8_128x128_r2", "mm_f16", {**_tf([128, 128], 2, "MFMA_F32_32x32x8_F16"), "subgroup": [2, 2, 0]}),
    ("bf16_128x128_r2", "mm_bf16", _tf([128, 128], 2, "MFMA_F32_16x16x16_BF16")),
    ("bf16_64x128_r4", "mm_bf16", _tf([64, 128], 4, "MFMA_F32_16x16x16_BF16")),
    ("i8_128x128_r2", "mm_i8", _tf([128, 128], 2, "MFMA_I32_16x16x32_I8")),
    ("i8_64x64_r4", "mm_i8", _tf([64, 64], 4, "MFMA_I32_16x16x32_I8")),
    ("f32_mfma_64x64_r4", "mm_f32", _tf([64, 64], 4, "MFMA_F32_16x16x4_F32")),
    (
        "f32_simt_64x64_k16",
        "mm_f32",
        dict(
            workgroup=[64, 64, 0],
            reduction=[0, 0, 16],
            thread=[4, 4, 0],
            promote_operands=[0, 1],
            workgroup_size=[256, 1, 1],
        ),
    ),
    (
        "f32_simt_32x64_k32",
        "mm_f32",
        dict(
            workgroup=[32, 64, 0],
            reduction=[0, 0, 32],
            thread=[2, 4, 0],
            promote_operands=[0, 1],
            workgroup_size=[256, 1, 1],
        ),
    ),
    (
        "f16_vd_64x128_k64",
        "mm_f16",
        dict(
            pipeline="VectorDistribute",
            workgroup=[64, 128, 0],
            reduction=[0, 0, 64],
            subgroup_basis=[[2, 2, 1], [0, 1, 2]],
            mma_kind=F16,
            promote_operands=[0, 1],
            workgroup_size=[256, 1, 1],
            prefetch_num_stages=2,
        ),
    ),
    (
        "f16_vd_128x128_k32",
        "mm_f16",
        dict(
            pipeline="VectorDistribute",
            workgroup=[128, 128, 0],
            reduction=[0, 0, 32],
            subgroup_basis=[[2, 2, 1], [0, 1, 2]],
            mma_kind=F16,
            promote_operands=[0, 1],
            workgroup_size=[256, 1, 1],
            prefetch_num_stages=2,
        ),
    ),
    ("bmm_f16_64x64_r2", "bmm_f16", _tf([64, 64], 2, F16, batch=True)),
    ("f16_lhs_only_128x128_r2", "mm_f16", {**_tf([128, 128], 2, F16), "promote_operands": [0]}),
]


def _set(function: str, name: str, config: dict[str, Any]) -> StrategySet:
    return StrategySet(
        name="lds",
        targets=[AmdGpuTarget()],
        rules=[Rule(target="gfx942", match=_match(function), strategy=GpuLowering(name=name, **config))],
    )


def _payloads(directory: Path) -> dict[str, Path]:
    """One payload per function of PAYLOAD (a configuration's compile needs only its own)."""
    paths = {}
    for chunk in PAYLOAD.read_text().split("\nfunc.func @")[1:]:
        name = chunk.split("(", 1)[0]
        paths[name] = directory / f"{name}.mlir"
        paths[name].write_text("func.func @" + chunk)
    assert sorted(paths) == sorted(SHAPES)
    return paths


@pytest.mark.compile
def test_lds_estimates_match_compiled_kernels(tmp_path: Path) -> None:
    """Every configuration compiles, and the estimate equals .group_segment_fixed_size."""
    assert len(CONFIGS) >= 20
    payloads = _payloads(tmp_path)
    mismatches = []
    for name, function, config in CONFIGS:
        strategy_set = _set(function, name, config)
        strategy = strategy_set.rules[0].strategy
        estimate = lds_for(strategy, _match(function), GFX942)
        assert estimate is not None and estimate.fits
        report = compile(payloads[function], strategy_set, "gfx942")
        assert report.rules[0].applied, name
        (kernel,) = [k for k in report.kernels if k.name.startswith(function + "_dispatch")]
        if kernel.lds_bytes != estimate.bytes:
            mismatches.append(f"{name}: estimated {estimate.bytes}, compiled {kernel.lds_bytes}")
    assert mismatches == []


def test_over_budget_is_refused_before_compiling_with_the_largest_legal_value() -> None:
    with pytest.raises(
        StrategyError,
        match=r"big\.reduction: expected at most 65536 bytes of LDS per workgroup on gfx942; "
        r"workgroup \[256, 256, 0\] with reduction \[0, 0, 8\] promotes 131072 bytes, received \[0, 0, 8\] "
        r"\(the largest reduction\[2\] that fits is 4\)",
    ):
        _set("mm_f16", "big", _tf([256, 256], 8, F16))


def test_exactly_the_budget_is_legal_and_padding_is_dropped() -> None:
    strategy = _set("mm_f16", "edge", _tf([128, 128], 8, F16)).rules[0].strategy
    estimate = lds_for(strategy, _match("mm_f16"), GFX942)
    assert estimate is not None and (estimate.unpadded, estimate.padded, estimate.bytes) == (65536, 67584, 65536)


def test_intrinsic_that_does_not_tile_the_problem_names_those_that_do() -> None:
    odd = ContractionMatch(lhs_type="f16", rhs_type="f16", output_type="f32", batch=[], m=1008, n=2048, k=512)
    config = GpuLowering(name="odd", **{**_tf([64, 64], 2, "MFMA_F32_32x32x8_F16"), "subgroup": [1, 1, 0]})
    with pytest.raises(
        StrategyError,
        match=r"odd\.mma_kind: .*divide the problem's 1008x2048x512, or a 'padding' tile; "
        r"intrinsics for these element types that fit: MFMA_F32_16x16x16_F16, received 'MFMA_F32_32x32x8_F16'",
    ):
        StrategySet(name="s", targets=[AmdGpuTarget()], rules=[Rule(target="gfx942", match=odd, strategy=config)])
    padded = GpuLowering(
        name="odd", padding=[64, 64, 16], **{**_tf([64, 64], 2, "MFMA_F32_32x32x8_F16"), "subgroup": [1, 1, 0]}
    )
    StrategySet(name="s", targets=[AmdGpuTarget()], rules=[Rule(target="gfx942", match=odd, strategy=padded)])


def test_subgroup_tiles_must_fill_the_workgroup() -> None:
    with pytest.raises(
        StrategyError,
        match=re.escape(
            "sg.workgroup_size: expected 256 threads: the workgroup tile [128, 128, 0] holds 4 subgroup tiles of "
            "[4, 4, 0] x 16x16 (MFMA_F32_16x16x16_F16), received [128, 1, 1] (128 threads)"
        ),
    ):
        _set("mm_f16", "sg", {**_tf([128, 128], 2, F16), "workgroup_size": [128, 1, 1]})
    with pytest.raises(
        StrategyError,
        match=re.escape(
            "sg.subgroup[0]: expected a tile whose span (subgroup x 16 for MFMA_F32_16x16x16_F16) divides workgroup[0] = 128, received 3"
        ),
    ):
        _set("mm_f16", "sg", {**_tf([128, 128], 2, F16), "subgroup": [3, 4, 0]})
