"""The gfx942 search space (tdsl.strategies.gpu.space) and its model ranking: sizes and
pruning per shape, the chooser's choice as a candidate and where it ranks, every candidate
of a small shape rendered and verified, a few top candidates compiled for gfx942 (no GPU:
nothing is run), and the re-ranking rule with compiled kernels' resources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Union

import pytest
from tdsl import GpuLowering, TdslError, compile, render
from tdsl.compiler.hsaco import KernelResources
from tdsl.model.knobs import KnobError
from tdsl.strategies.gpu.chooser import choose, rank_key
from tdsl.strategies.gpu.problems import Contraction, Convolution, Convolution2d
from tdsl.strategies.gpu.space import Gfx942Space, Ranked, gfx942_space, rank, rerank_with_resources, tiling_of
from tdsl.targets import GFX942

Problem = Union[Contraction, Convolution, Convolution2d]

CONSTRAINTS = {
    "tiles_fit_intrinsic",
    "subgroups_per_workgroup",
    "subgroups_fill_workgroup",
    "reduction_tiles_k",
    "vector_distribute_unpadded",
    "lds_fits",
    "registers_fit",
    "prefetch_needs_three_k_iterations",
    "waves_per_eu_fits_registers",
}

# name: (problem, assignments, valid candidates, pruned per constraint) with the default spread of 2
SHAPES: dict[str, tuple[Problem, int, int, dict[str, int]]] = {
    "mm_f16_4096": (
        Contraction((), 4096, 4096, 4096, "f16", "f16", "f32"),
        5832,
        1292,
        {
            "subgroups_per_workgroup": 1944,
            "subgroups_fill_workgroup": 1044,
            "lds_fits": 1032,
            "registers_fit": 276,
            "waves_per_eu_fits_registers": 244,
        },
    ),
    "skinny_f16": (
        Contraction((), 64, 4096, 4096, "f16", "f16", "f32"),
        5832,
        548,
        {
            "subgroups_fill_workgroup": 1800,
            "subgroups_per_workgroup": 1620,
            "tiles_fit_intrinsic": 972,
            "lds_fits": 684,
            "waves_per_eu_fits_registers": 112,
            "registers_fit": 96,
        },
    ),
    "bmm_f32": (
        Contraction((8,), 512, 512, 256, "f32", "f32", "f32"),
        2916,
        1480,
        {
            "subgroups_per_workgroup": 972,
            "subgroups_fill_workgroup": 216,
            "waves_per_eu_fits_registers": 128,
            "registers_fit": 120,
        },
    ),
    "conv_nhwc_f16": (
        Convolution2d(2, 32, 32, 128, 3, 3, 64, "f16", "f16", "f32"),
        5832,
        648,
        {
            "subgroups_fill_workgroup": 1800,
            "subgroups_per_workgroup": 1620,
            "tiles_fit_intrinsic": 972,
            "reduction_tiles_k": 372,
            "lds_fits": 174,
            "waves_per_eu_fits_registers": 117,
            "registers_fit": 102,
            "prefetch_needs_three_k_iterations": 27,
        },
    ),
}

SMALL = Contraction((), 128, 128, 512, "f16", "f16", "f32")
SMALL_PAYLOAD = """\
func.func @mm(%a: tensor<128x512xf16>, %b: tensor<512x128xf16>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x512xf16>, tensor<512x128xf16>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
"""


def _lowering(item: Ranked) -> GpuLowering:
    strategy = item.candidate.strategies.rules[0].strategy
    assert isinstance(strategy, GpuLowering)
    return strategy


def _chooser_rank(ranked: list[Ranked], problem: Problem, name: str) -> int:
    """1-based rank of the candidate that is exactly the chooser's configuration."""
    chosen = choose(problem, name)
    (position,) = [i for i, item in enumerate(ranked) if _lowering(item) == chosen]
    return position + 1


@pytest.mark.parametrize("name", list(SHAPES))
def test_space_sizes_pruning_and_the_chooser_ranks_first(name: str) -> None:
    problem, size, valid, pruned = SHAPES[name]
    space = gfx942_space(problem, name)
    assert isinstance(space, Gfx942Space) and space.size == size
    ranked = rank(space, problem)
    assert len(ranked) == valid and valid + space.pruned.total == size
    assert dict(space.pruned.by_constraint) == pruned and set(pruned) <= CONSTRAINTS
    assert not space.pruned.by_validation  # the constraints leave nothing the gfx942 checks refuse
    # assignment 0 is the chooser's configuration, exactly as choose() returns it, and it ranks first
    first = space.candidate(next(space.assignments())).rules[0].strategy
    assert first == choose(problem, name)
    assert _chooser_rank(ranked, problem, name) == 1
    keys = [rank_key(item.estimate) for item in ranked]
    assert keys == sorted(keys)
    assert len({json.dumps(item.candidate.values, sort_keys=True) for item in ranked}) == valid


def test_template_holds_the_knobs_in_the_fields_they_decide() -> None:
    space = gfx942_space(SHAPES["mm_f16_4096"][0], "mm")
    paths = {knob.name: path[3:] for path, knob in space.template.knobs().items()}
    assert paths == {
        "intrinsic": ("mma_kind",),
        "workgroup": ("workgroup",),
        "subgroups_m": ("subgroup_m_count",),
        "subgroups_n": ("subgroup_n_count",),
        "reduction": ("reduction", 2),
        "pipeline": ("pipeline",),
        "prefetch": ("prefetch_num_stages",),
        "waves_per_eu": ("llvm_func_attrs",),
    }
    values = {knob.name: knob.values() for knob in space.knobs}
    assert values["intrinsic"] == ("MFMA_F32_16x16x16_F16", "MFMA_F32_32x32x8_F16")
    assert values["workgroup"][0] == [64, 128, 0] and len(values["workgroup"]) == 9  # m in 32..128, n in 64..256
    assert values["reduction"] == (8, 4, 16) and values["prefetch"] == (2, 0)
    assert values["waves_per_eu"] == (None, {"amdgpu-waves-per-eu": "2"}, {"amdgpu-waves-per-eu": "4"})
    # a convolution has no pipeline knob (implicit GEMM is TileAndFuse's); spread=None takes the chooser's whole domains
    conv = gfx942_space(SHAPES["conv_nhwc_f16"][0], "conv")
    assert "pipeline" not in {k.name for k in conv.knobs}
    wide = gfx942_space(SHAPES["mm_f16_4096"][0], "mm", spread=None)
    assert {k.name: len(k) for k in wide.knobs} == {
        "intrinsic": 2,
        "workgroup": 25,
        "subgroups_m": 4,
        "subgroups_n": 4,
        "reduction": 7,
        "pipeline": 2,
        "prefetch": 2,
        "waves_per_eu": 3,
    }
    assert wide.size == 67200


def test_every_candidate_of_a_small_shape_renders_and_verifies() -> None:
    space = gfx942_space(SMALL, "mm")
    ranked = rank(space, SMALL)
    assert len(ranked) == 550 and _chooser_rank(ranked, SMALL, "mm") == 1
    kinds = set()
    for item in ranked:
        rendered = render(item.candidate.strategies, "gfx942")
        assert rendered.scripts
        strategy = _lowering(item)
        kinds.add(
            (strategy.pipeline, strategy.mma_kind, strategy.prefetch_num_stages, json.dumps(strategy.llvm_func_attrs))
        )
        assert strategy.subgroup_m_count is None and strategy.thread_count() <= 512
        model = space.model(item.candidate.values)
        assert model is not None and tiling_of(strategy, SMALL.gemm()) == model[0]
        data = json.loads(json.dumps(item.to_json()))
        assert data["values"] == item.candidate.values and data["resources"] is None and not data["spills"]
        assert data["cycles"] > 0 and 0 < data["mfma_utilization"] <= 1 and 0 < data["peak_fraction"] <= 1
        assert data["lds_bytes"] <= 65536 and 1 <= data["waves_per_simd"] <= 8 and data["global_bytes"] > 0
    assert (
        len(kinds) == 2 * 2 * 2 * 3
    )  # both pipelines, both intrinsics, both prefetch stages, three waves-per-eu settings


def test_sampled_ranking_is_seeded_and_a_subset() -> None:
    space = gfx942_space(SMALL, "mm")
    every = {item.candidate.index for item in rank(space, SMALL)}
    a = rank(space, SMALL, count=1000, seed=3)
    b = rank(space, SMALL, count=1000, seed=3)
    assert [x.candidate.index for x in a] == [x.candidate.index for x in b]
    assert a and {x.candidate.index for x in a} <= every and len(a) + space.pruned.total == 1000


def test_values_that_are_no_tiling_and_problems_without_an_intrinsic_are_named() -> None:
    space = gfx942_space(SMALL, "mm")
    values = next(space.assignments())
    with pytest.raises(KnobError, match="waves_per_eu missing"):
        space.candidate({k: v for k, v in values.items() if k != "waves_per_eu"})
    with pytest.raises(KnobError, match=r"workgroup: expected a workgroup tile that 4 x 4 subgroups split into whole"):
        space.candidate({**values, "workgroup": [16, 16, 0], "subgroups_m": 4, "subgroups_n": 4})
    with pytest.raises(TdslError, match="no MFMA intrinsic of gfx942 takes f16 x f16 -> f16"):
        gfx942_space(Contraction((), 256, 256, 256, "f16", "f16", "f16"), "simt")


def _kernel(vgprs: int, spills: int = 0, lds: int = 16384) -> KernelResources:
    return KernelResources("mm_dispatch_0", lds, vgprs, 0, 30, spills, 0, 0, 256, 16, GFX942.waves_per_simd(vgprs))


def test_rerank_puts_spills_last_and_uses_real_occupancy() -> None:
    ranked = rank(gfx942_space(SMALL, "mm"), SMALL)
    top, heavy, light = ranked[0], ranked[6], ranked[40]
    resources = {
        top.candidate.index: _kernel(60, spills=3),  # spills: last
        heavy.candidate.index: _kernel(300),  # 1 wave per SIMD instead of the estimate's
        str(light.candidate.index): _kernel(40).to_json(),  # a to_json() dict under a string key
    }
    out = rerank_with_resources(ranked, resources)
    assert len(out) == len(ranked)
    compiled = out[:2]
    assert {x.candidate.index for x in compiled} == {heavy.candidate.index, light.candidate.index}
    assert rank_key(compiled[0].estimate) <= rank_key(compiled[1].estimate)
    assert out[-1].candidate.index == top.candidate.index and out[-1].spills and out[-1].to_json()["spills"]
    again = {x.candidate.index: x for x in compiled}
    assert (
        again[heavy.candidate.index].estimate.waves_per_simd == 1 and again[heavy.candidate.index].estimate.vgprs == 300
    )
    assert (
        again[light.candidate.index].estimate.waves_per_simd == 8 and again[light.candidate.index].resources is not None
    )
    rest = [x.candidate.index for x in out[2:-1]]
    assert rest == [
        x.candidate.index
        for x in ranked
        if x.candidate.index not in resources and str(x.candidate.index) not in resources
    ]
    with pytest.raises(TdslError, match="expected vgprs"):
        rerank_with_resources(ranked, {top.candidate.index: {"lds_bytes": 1}})


@pytest.mark.compile
def test_top_candidates_compile_for_gfx942_and_rerank_with_their_kernels(tmp_path: Path) -> None:
    """Three of the top candidates (the chooser's, the best with amdgpu-waves-per-eu 4, the
    best VectorDistribute one) build for gfx942 with their rule applied, MFMA, no spills;
    re-ranked with their kernels they come first, with the occupancy of their real registers."""
    payload = tmp_path / "mm.mlir"
    payload.write_text(SMALL_PAYLOAD)
    ranked = rank(gfx942_space(SMALL, "mm"), SMALL)
    waves4 = next(i for i, x in enumerate(ranked) if x.candidate.values["waves_per_eu"] == {"amdgpu-waves-per-eu": "4"})
    vd = next(i for i, x in enumerate(ranked) if x.candidate.values["pipeline"] == "VectorDistribute")
    picks = [0, waves4, vd]
    assert picks == [0, 2, 3]
    kernels = {}
    for i in picks:
        report = compile(payload, ranked[i].candidate.strategies, "gfx942", tmp_path / f"mm{i}.vmfb")
        assert report.rules[0].applied and (tmp_path / f"mm{i}.vmfb").stat().st_size > 0
        (kernel,) = report.kernels
        assert (
            kernel.mfma_instructions and kernel.spills == 0 and kernel.scratch_bytes == 0 and kernel.lds_bytes <= 65536
        )
        kernels[ranked[i].candidate.index] = kernel
    pipelines = {_lowering(ranked[i]).pipeline for i in picks}
    assert pipelines == {"TileAndFuse", "VectorDistribute"}
    out = rerank_with_resources(ranked, kernels)
    assert {x.candidate.index for x in out[:3]} == set(kernels)
    for item in out[:3]:
        kernel = kernels[item.candidate.index]
        assert item.resources == kernel and item.estimate.waves_per_simd == kernel.waves_per_simd
        assert item.to_json()["resources"]["vgprs"] == kernel.vgprs
