"""Every validation message: where (strategy + field path), what was expected, what was received.

Each test pins the exact text with pytest.raises(match=...)."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

import pytest
from tdsl import (
    AllOf,
    AmdGpuTarget,
    Codegen,
    ContractionMatch,
    ConvolutionMatch,
    CpuLowering,
    CpuTarget,
    DataLayout,
    FunctionMatch,
    Fuse,
    GpuLowering,
    GpuThreads,
    OpNameMatch,
    Pack,
    PackGreedily,
    PackMatch,
    PackTranspose,
    Rule,
    StrategyError,
    StrategySet,
    TileUsingFor,
    TileUsingForall,
    VectorLowering,
)
from tdsl.strategies.cpu.blocking import mmt4d_tiles

F32 = {"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32"}
F16 = {"lhs_type": "f16", "rhs_type": "f16", "output_type": "f32"}


@contextmanager
def raises(message: str, strategy: str | None = None, path: str | None = None) -> Iterator[None]:
    """Expects a StrategyError whose text contains ``message`` (and, if given, whose
    strategy and first field path are ``strategy`` / ``path``)."""
    with pytest.raises(StrategyError, match=re.escape(message)) as info:
        yield
    if strategy is not None:
        assert info.value.strategy == strategy
    if path is not None:
        assert info.value.problems[0].path == path


def gpu(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "gpu_lowering",
        "name": "g",
        "workgroup": [64, 64, 0],
        "reduction": [0, 0, 4],
        "subgroup": [2, 2, 0],
        "mma_kind": "MFMA_F32_16x16x16_F16",
        "promote_operands": [0, 1],
        "workgroup_size": [256, 1, 1],
    }
    base.update(overrides)
    return base


def gpu_set(strategy: dict[str, Any], match: dict[str, Any] | None = None) -> StrategySet:
    return StrategySet.model_validate(
        {
            "name": "s",
            "rules": [{"target": "gfx942", "match": match or {"kind": "contraction", **F16}, "strategy": strategy}],
        }
    )


# -- data layout ---------------------------------------------------------------------


def test_inner_dims_order_must_be_a_permutation() -> None:
    with raises(
        "invalid strategy: PackGreedily.matmul_inner_dims_order: expected a permutation of [0, 1, 2], received [0, 0, 2]",
        "PackGreedily",
        "matmul_inner_dims_order",
    ):
        PackGreedily(matmul_packed_sizes=[8, 16, 32], matmul_inner_dims_order=[0, 0, 2])


def test_nested_errors_are_anchored_at_the_strategy_name() -> None:
    with raises(
        "mm.pack.matmul_inner_dims_order: expected a permutation of [0, 1, 2], received [0, 0, 2]",
        "mm",
        "pack.matmul_inner_dims_order",
    ):
        StrategySet.model_validate(
            {
                "name": "s",
                "rules": [
                    {
                        "target": "cpu",
                        "match": {"kind": "op_name", "names": ["linalg.matmul"]},
                        "strategy": {
                            "kind": "data_layout",
                            "name": "mm",
                            "pack": {
                                "kind": "pack_greedily",
                                "matmul_packed_sizes": [8, 16, 32],
                                "matmul_inner_dims_order": [0, 0, 2],
                            },
                        },
                    }
                ],
            }
        )


def test_packed_size_and_padded_multiple_on_one_dim() -> None:
    with raises(
        "PackGreedily.matmul_padded_sizes_next_multiple_of[2]: expected 0 because matmul_packed_sizes[2] = 32 already packs this dim "
        "(at most one of packed size / padded multiple per dim), received 64"
    ):
        PackGreedily(matmul_packed_sizes=[8, 16, 32], matmul_padded_sizes_next_multiple_of=[0, 0, 64])


def test_negative_and_all_zero_sizes() -> None:
    with raises("PackGreedily.matmul_packed_sizes[1]: expected a non-negative size, received -16"):
        PackGreedily(matmul_packed_sizes=[8, -16, 32])
    with raises(
        "PackGreedily.matmul_packed_sizes: expected at least one non-zero packed size (or a padded multiple), received [0, 0, 0]"
    ):
        PackGreedily(matmul_packed_sizes=[0, 0, 0])
    with raises("Pack.packed_sizes: expected at least one non-zero packed size, received [0, 0]"):
        Pack(packed_sizes=[0, 0])


def test_pack_transpose_rules() -> None:
    with raises("PackTranspose.outer_perm: expected an outer_perm and/or an inner_perm, received None"):
        PackTranspose(operand="lhs")
    # IREE 3.13 transposes the result's unpack outer dims too (MLIR's transform-op-pack.mlir).
    assert PackTranspose(operand="result", outer_perm=[1, 0]).outer_perm == (1, 0)
    with raises("PackTranspose.inner_perm: expected a permutation of [0, 1], received [1, 1]"):
        PackTranspose(operand="rhs", inner_perm=[1, 1])


def test_data_layout_rules() -> None:
    with raises(
        "mm.pack: expected at least one of generalize, interchange, consumer_interchange, pack or fuse_head_split, received None",
        "mm",
        "pack",
    ):
        DataLayout(name="mm")
    with raises("mm.specialize: expected a 'pack' to act on (it is None), received True"):
        DataLayout(name="mm", generalize=True, specialize=True)
    with raises("mm.interchange: expected a permutation of [0, 1, 2], received [0, 2, 2]"):
        DataLayout(name="mm", generalize=True, interchange=[0, 2, 2])
    with raises(
        "mm.pack_transposes[1].operand: expected each operand transposed at most once (merge the permutations), received 'rhs'"
    ):
        DataLayout(
            name="mm",
            pack=PackGreedily(matmul_packed_sizes=[8, 16, 1]),
            pack_transposes=[
                PackTranspose(operand="rhs", outer_perm=[1, 0]),
                PackTranspose(operand="rhs", inner_perm=[1, 0]),
            ],
        )
    with raises(
        "mm.lower_packs: expected False when specialize is set (lowering the packs undoes the packed form), received True"
    ):
        DataLayout(name="mm", pack=PackGreedily(matmul_packed_sizes=[8, 16, 1]), specialize=True, lower_packs=True)
    with raises("mm.lower_packs: expected False unless every loop is packed"):
        DataLayout(name="mm", pack=Pack(packed_sizes=[8, 0, 4]), lower_packs=True)


# -- names, matchers -----------------------------------------------------------------


@pytest.mark.parametrize("bad", ["a b", 'x"y', "1abc", "", "a-b", "mm)loc("])
def test_names_are_mlir_symbols(bad: str) -> None:
    with raises(f"expected an MLIR symbol name: a letter or '_' then letters, digits or '_', received {bad!r}"):
        DataLayout(name=bad, generalize=True)
    with raises(
        f"FunctionMatch.function: expected an MLIR symbol name: a letter or '_' then letters, digits or '_', received {bad!r}"
    ):
        FunctionMatch(function=bad)


@pytest.mark.parametrize("bad", ["matmul", "linalg.", "Linalg.Matmul", 'linalg.matmul"]'])
def test_op_names_are_dialect_dot_op(bad: str) -> None:
    with raises(f"OpNameMatch.names[0]: expected an operation name such as 'linalg.matmul', received {bad!r}"):
        OpNameMatch(names=[bad])


def test_matcher_messages() -> None:
    with raises(
        "ContractionMatch.batch: expected an exact batch ([] or one dimension) when operand_layout is set, received 'any'"
    ):
        ContractionMatch(**F32, operand_layout="mk_nk")
    with raises(
        "ContractionMatch.m: expected None (any size), an int, a list of ints ('?' or -1 for a dynamic dimension), or a set of lists {one_of: [[..], ..]}, received 'big'"
    ):
        ContractionMatch(**F32, m="big")
    with raises("ContractionMatch.k: expected a size, or -1 (or '?') for a dynamic dimension, received -2"):
        ContractionMatch(**F32, k=-2)
    with raises("ContractionMatch.lhs_type: expected 'f64', 'f32', 'f16'"):
        ContractionMatch(lhs_type="f31", rhs_type="f32", output_type="f32")
    with raises(
        "AllOf.matchers: expected at most one function name (an op lives in one function), received ['a', 'b']"
    ):
        AllOf(matchers=[FunctionMatch(function="a"), FunctionMatch(function="b"), OpNameMatch(names="linalg.matmul")])
    with raises(
        "AllOf.matchers: expected a matcher that selects the op besides the function matcher, received ['function']"
    ):
        AllOf(matchers=[FunctionMatch(function="a")])
    with raises("Rule.match: expected a matcher that selects ops; a function matcher only restricts where to look"):
        Rule(target="cpu", match=FunctionMatch(function="f"), strategy=DataLayout(name="g", generalize=True))


def test_unknown_field_suggests_the_nearest() -> None:
    with raises(
        "PackGreedily.matmul_packed_size: expected one of the fields kind, matmul_inner_dims_order, matmul_packed_sizes, "
        "matmul_padded_sizes_next_multiple_of, received unknown field 'matmul_packed_size' (did you mean 'matmul_packed_sizes'?)"
    ):
        PackGreedily(matmul_packed_size=[8, 16, 32])


def test_missing_field_and_wrong_kind() -> None:
    with raises("c.distribution: expected a value for this required field, received nothing", "c", "distribution"):
        CpuLowering(name="c")
    with raises(
        "s.rules[0].strategy: expected a 'kind' among 'data_layout', 'cpu_lowering', 'graph_cpu_lowering', 'gpu_lowering', 'kernel_rewrite', 'call_replacement', 'codegen', 'raw_config', 'raw_tuning_action', 'raw_preprocessing_action', 'raw_codegen_action', received 'tiles'",
        "s",
    ):
        StrategySet.model_validate(
            {
                "name": "s",
                "rules": [
                    {
                        "target": "cpu",
                        "match": {"kind": "op_name", "names": "linalg.matmul"},
                        "strategy": {"kind": "tiles", "name": "t"},
                    }
                ],
            }
        )
    with raises("PackGreedily.matmul_packed_sizes[0]: expected a valid integer, received 'eight'"):
        PackGreedily(matmul_packed_sizes=["eight", 16, 32])


# -- lowering configs ------------------------------------------------------------------


def test_cpu_lowering_levels() -> None:
    with raises(
        "c.vector_reduction: expected 3 entries, one per loop, like distribution, received 4 entries [0, 0, 0, 1]",
        "c",
        "vector_reduction",
    ):
        CpuLowering(name="c", distribution=[64, 64, 0], vector_reduction=[0, 0, 0, 1])
    with raises("c.vector_reduction[1]: expected 0 because vector_common_parallel[1] = 32 tiles loop 1 as parallel"):
        CpuLowering(name="c", distribution=[64, 64, 0], vector_common_parallel=[8, 32, 0], vector_reduction=[0, 4, 1])
    with raises("c.distribution[0]: expected a non-negative size, received -64"):
        CpuLowering(name="c", distribution=[-64, 64, 0])
    with raises(
        "m.cache_reduction: expected no cache_reduction with pipeline Mmt4dTilingExpert: IREE 3.13 tiles only "
        "distribution and the vector levels there, so these sizes would be silently ignored, received [0, 0, 128, 0, 0, 0]",
        "m",
        "cache_reduction",
    ):
        CpuLowering(
            name="m",
            pipeline="Mmt4dTilingExpert",
            distribution=[32, 2, 0, 0, 0, 0],
            cache_reduction=[0, 0, 128, 0, 0, 0],
        )


def test_pack_match_messages() -> None:
    with raises("inner_tiles: expected one tile per entry of inner_dims_pos (2), received [6]"):
        PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[6])
    with raises("inner_dims_pos: expected distinct dims of the rank-2 unpacked tensor (0..1), received [0, 2]"):
        PackMatch(element_type="f32", inner_dims_pos=[0, 2], inner_tiles=[6, 1])
    with raises("inner_tiles[1]: expected a positive tile size, received 0"):
        PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[6, 0])
    with raises("outer_dims_perm: expected a permutation of [0, 1], received [0, 0]"):
        PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[6, 1], outer_dims_perm=[0, 0])


def test_gpu_lowering_messages() -> None:
    with raises(
        "g.workgroup_size: expected a positive thread count that is a multiple of subgroup_size 64, received [96, 1, 1] (96 threads)"
    ):
        GpuLowering.model_validate(gpu(workgroup_size=[96, 1, 1]))
    with raises("g.subgroup: expected subgroup tiles (in intrinsics) when mma_kind is set, received None"):
        GpuLowering.model_validate(gpu(subgroup=None))
    with raises("g.thread: expected thread tiles when there is no mma_kind (SIMT), received None"):
        GpuLowering.model_validate(gpu(subgroup=None, mma_kind=None))
    with raises(
        "g.subgroup_basis: expected subgroup_basis and mma_kind for the VectorDistribute pipeline, received None"
    ):
        GpuLowering.model_validate(gpu(pipeline="VectorDistribute", subgroup=None))
    with raises("g.subgroup_basis[1]: expected a permutation of [0, 1, 2], received [0, 0, 2]"):
        GpuLowering.model_validate(
            gpu(pipeline="VectorDistribute", subgroup=None, subgroup_basis=[[2, 2, 1], [0, 0, 2]])
        )
    with raises("g.prefetch_num_stages: expected 0 to 4, received 9"):
        GpuLowering.model_validate(gpu(prefetch_num_stages=9))
    with raises("g.mma_kind: expected an MMA intrinsic name such as 'MFMA_F32_16x16x16_F16', received 'X>, y = 1'"):
        GpuLowering.model_validate(gpu(mma_kind="X>, y = 1"))


def test_target_checks_at_set_level() -> None:
    with raises(
        "g.mma_kind: expected an MMA intrinsic of gfx942: MFMA_F32_16x16x4_F32, MFMA_F32_16x16x16_F16", "g", "mma_kind"
    ):
        gpu_set(gpu(mma_kind="WMMA_F32_16x16x16_F16"))
    with raises("g.subgroup_size: expected 64, the subgroup size of gfx942, received 32"):
        gpu_set(gpu(subgroup_size=32, workgroup_size=[256, 1, 1]))
    with raises("g.workgroup_size: expected at most 1024 threads on gfx942, received [2048, 1, 1] (2048 threads)"):
        gpu_set(gpu(workgroup_size=[2048, 1, 1]))
    with raises(
        "s.rules[0].match.names: expected an op that exists at codegen time on gfx942: linalg.matmul is a linalg.generic by then, "
        "so this rule would match nothing, received 'linalg.matmul' (use a contraction matcher)",
        "s",
    ):
        gpu_set(gpu(), {"kind": "op_name", "names": ["linalg.matmul"]})
    with raises(
        "g.workgroup: expected 4 entries, one per loop of the matched op (rules[0].match fixes 4 loops), received 3 entries [64, 64, 0]"
    ):
        gpu_set(gpu(), {"kind": "contraction", **F16, "batch": [8], "m": 64, "n": 64, "k": 64})


def test_set_level_rules() -> None:
    mm = OpNameMatch(names="linalg.matmul")
    tiles = CpuLowering(name="t", distribution=[64, 64, 0])
    with raises(
        "s.rules[0].target: expected one of the targets ['cpu', 'gfx942'], received 'arm'", "s", "rules[0].target"
    ):
        StrategySet(name="s", rules=[Rule(target="arm", match=mm, strategy=tiles)])
    with raises(
        "s.rules[1].strategy.name: expected a name not used by another strategy for target 'cpu', received 't'"
    ):
        StrategySet(
            name="s",
            rules=[
                Rule(target="cpu", match=mm, strategy=tiles),
                Rule(target="cpu", match=mm, strategy=CpuLowering(name="t", distribution=[32, 32, 0])),
            ],
        )
    with raises(
        "s.rules[0].strategy.kind: expected a strategy for rocm (target 'gfx942'); cpu_lowering runs on llvm-cpu, received 'cpu_lowering'"
    ):
        StrategySet(name="s", rules=[Rule(target="gfx942", match=ContractionMatch(**F32), strategy=tiles)])
    with raises("s.targets[1].name: expected unique target names, received 'cpu'"):
        StrategySet(name="s", targets=[CpuTarget(), CpuTarget()], rules=[Rule(target="cpu", match=mm, strategy=tiles)])
    assert StrategySet(name="s", rules=[]).rules == ()  # an empty set means IREE's default pipeline
    with raises(
        "s.rules[0].match.batch: expected a batch other than 1: IREE drops the compilation_info of batch-1 convolutions"
    ):
        StrategySet(
            name="s",
            rules=[
                Rule(
                    target="cpu",
                    match=ConvolutionMatch(**F32, batch=1),
                    strategy=CpuLowering(name="c", distribution=[0, 4, 16, 32, 0, 0, 0]),
                )
            ],
        )
    with raises(
        "s.rules[0].match.names: expected an op that exists at codegen time on cpu: linalg.conv_2d_nhwc_hwcf is a linalg.generic by then"
    ):
        StrategySet(
            name="s", rules=[Rule(target="cpu", match=OpNameMatch(names="linalg.conv_2d_nhwc_hwcf"), strategy=tiles)]
        )
    with raises(
        "t.distribution: expected 4 entries, one per loop of the matched op (rules[0].match fixes 4 loops), received 3 entries [64, 64, 0]",
        "t",
    ):
        StrategySet(
            name="s",
            rules=[Rule(target="cpu", match=ContractionMatch(**F32, batch=[4], m=64, n=64, k=64), strategy=tiles)],
        )


def test_mmt4d_layout_needs_ukernels_off() -> None:
    layout = DataLayout(
        name="p",
        pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]),
        pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
        specialize=True,
    )
    with raises(
        "s.targets[0].ukernels: expected 'none' when a data_layout specializes to linalg.mmt4d",
        "s",
        "targets[0].ukernels",
    ):
        StrategySet(name="s", rules=[Rule(target="cpu", match=OpNameMatch(names="linalg.matmul"), strategy=layout)])
    # With ukernels on, a rule that code generates every linalg.mmt4d without them is enough;
    # one that matches only some mmt4d ops, or keeps the ukernels, is not.
    blocking = mmt4d_tiles("b", 8, 32, 1, 32, 2)
    packing = Rule(target="cpu", match=OpNameMatch(names="linalg.matmul"), strategy=layout)
    every_mmt4d = OpNameMatch(names="linalg.mmt4d")
    for match, strategy, ok in (
        (every_mmt4d, blocking.model_copy(update={"ukernels": False}), True),
        (every_mmt4d, blocking, False),
        (
            AllOf(matchers=[every_mmt4d, FunctionMatch(function="f")]),
            blocking.model_copy(update={"ukernels": False}),
            False,
        ),
    ):
        rules = [packing, Rule(target="cpu", match=match, strategy=strategy)]
        if ok:
            StrategySet(name="s", targets=[CpuTarget(ukernels="all")], rules=rules)
            continue
        with raises("and no rule configures linalg.mmt4d with ukernels=False", "s", "targets[0].ukernels"):
            StrategySet(name="s", targets=[CpuTarget()], rules=rules)


def test_ukernel_choice_is_codegen_time_only() -> None:
    from tdsl.model.lowering import GraphCpuLowering

    with raises("ukernels: expected True on a graph-level config", "g", "ukernels"):
        GraphCpuLowering(name="g", distribution=[64, 64, 0], ukernels=False)


def test_cpu_target_messages() -> None:
    with raises("CpuTarget.cpu: expected an explicit CPU name when features are given"):
        CpuTarget(features=["+avx512f"])
    with raises("CpuTarget.features[0]: expected an LLVM feature toggle such as '+avx512f', received 'avx512f'"):
        CpuTarget(cpu="znver4", features=["avx512f"])
    with raises("CpuTarget.cpu: expected an LLVM CPU name such as 'host' or 'znver4', received 'zn ver4'"):
        CpuTarget(cpu="zn ver4")
    assert CpuTarget(cpu="znver4", features=["+avx512f"], ukernels="none").compile_flags()[-2:] == [
        "--iree-llvmcpu-target-cpu-features=+avx512f",
        "--iree-llvmcpu-enable-ukernels=none",
    ]


# -- full transform-dialect codegen ----------------------------------------------------


def test_forall_mapping_has_one_entry_per_tiled_dim() -> None:
    with raises(
        "TileUsingForall.mapping: expected 2 entries, one per tiled dimension of tile_sizes [32, 64, 0] (iree-compile crashes otherwise), "
        "received ['block_y', 'block_x', 'block_z']"
    ):
        TileUsingForall(tile_sizes=[32, 64, 0], mapping=["block_y", "block_x", "block_z"])
    with raises("TileUsingForall.tile_sizes: expected exactly one of tile_sizes and num_threads, received None"):
        TileUsingForall(mapping=["block_x"])
    with raises(
        "TileUsingForall.mapping: expected one mapping kind (all block, thread or warp), received ['block_y', 'thread_x']"
    ):
        TileUsingForall(tile_sizes=[4, 4], mapping=["block_y", "thread_x"])
    with raises("TileUsingFor.interchange: expected a permutation of [0, 1, 2], received [0, 1]"):
        TileUsingFor(tile_sizes=[8, 16, 1], interchange=[0, 1])


def _codegen(**overrides: Any) -> Codegen:
    base: dict[str, Any] = {
        "name": "cg",
        "root": "linalg.matmul",
        "tiling": [
            TileUsingForall(tile_sizes=[32, 64], mapping=["block_y", "block_x"]),
            TileUsingFor(tile_sizes=[8, 16, 0]),
        ],
    }
    base.update(overrides)
    return Codegen(**base)


def test_codegen_messages() -> None:
    with raises(
        "cg.tiling[0]: expected a forall mapped to #gpu.block<..> (the workgroup level), received 'for'",
        "cg",
        "tiling[0]",
    ):
        _codegen(tiling=[TileUsingFor(tile_sizes=[8, 16, 0])])
    with raises(
        "cg.tiling[0].tile_sizes[2]: expected 0: loop 2 of linalg.matmul is a reduction and a forall may not tile it (use a 'for' level), received 8"
    ):
        _codegen(tiling=[TileUsingForall(tile_sizes=[32, 64, 8], mapping=["block_z", "block_y", "block_x"])])
    with raises(
        "cg.tiling[1].mapping: expected thread or warp mapping (only tiling[0] maps to blocks), received ['block_x']"
    ):
        _codegen(
            tiling=[
                TileUsingForall(tile_sizes=[32, 64], mapping=["block_y", "block_x"]),
                TileUsingForall(tile_sizes=[8], mapping=["block_x"]),
            ]
        )
    with raises("cg.fusion[0].into[0]: expected the index of a forall level in tiling [0], received 1"):
        _codegen(fusion=[Fuse(producers=["linalg.fill"], into=[1])])
    with raises("cg.promote_after: expected a tiling level index below 2, received 5"):
        _codegen(promote_operands=[0, 1], promote_after=5)
    with raises(
        "cg.tiling[1].tile_sizes: expected at most 3 entries, one per loop of linalg.matmul, received [8, 16, 0, 1]"
    ):
        _codegen(
            tiling=[
                TileUsingForall(tile_sizes=[32, 64], mapping=["block_y", "block_x"]),
                TileUsingFor(tile_sizes=[8, 16, 0, 1]),
            ]
        )


def test_codegen_target_checks() -> None:
    cg = _codegen(root="linalg.generic")
    with raises("cg.gpu: expected a GpuThreads mapping for a rocm target, received None", "cg", "gpu"):
        StrategySet(name="s", rules=[Rule(target="gfx942", match=ContractionMatch(**F32), strategy=cg)])
    with raises("cg.gpu: expected nothing on llvm-cpu (GPU only)"):
        StrategySet(
            name="s",
            rules=[
                Rule(
                    target="cpu",
                    match=ContractionMatch(**F32),
                    strategy=_codegen(gpu=GpuThreads(workgroup_dims=[16, 16, 1])),
                )
            ],
        )
    with raises("cg.gpu.workgroup_dims: expected 1 to 1024 threads on gfx942, received [64, 32, 1]"):
        StrategySet(
            name="s",
            targets=[AmdGpuTarget()],
            rules=[
                Rule(
                    target="gfx942",
                    match=ContractionMatch(**F32),
                    strategy=_codegen(root="linalg.generic", gpu=GpuThreads(workgroup_dims=[64, 32, 1])),
                )
            ],
        )


def test_mma_chain_checks() -> None:
    from tdsl import MmaChain

    mfma = _codegen(
        root="linalg.generic",
        gpu=GpuThreads(workgroup_dims=[64, 1, 1]),
        mma=MmaChain(intrinsic="MFMA_F32_16x16x16_F16"),
    )
    with raises("cg.mma: expected nothing on llvm-cpu (GPU only), received <MmaChain>"):
        StrategySet(
            name="s",
            rules=[
                Rule(
                    target="cpu",
                    match=ContractionMatch(**F16),
                    strategy=Codegen.model_validate({**mfma.model_dump(), "root": "linalg.matmul", "gpu": None}),
                )
            ],
        )
    with raises(
        "cg.gpu.workgroup_dims: expected [64, 1, 1]: the MFMA chain runs one subgroup per workgroup, received [16, 16, 1]"
    ):
        StrategySet(
            name="s",
            targets=[AmdGpuTarget()],
            rules=[
                Rule(
                    target="gfx942",
                    match=ContractionMatch(**F16),
                    strategy=Codegen.model_validate({**mfma.model_dump(), "gpu": {"workgroup_dims": [16, 16, 1]}}),
                )
            ],
        )
    with raises("cg.mma.intrinsic: expected an MMA intrinsic of gfx942"):
        StrategySet(
            name="s",
            targets=[AmdGpuTarget()],
            rules=[
                Rule(
                    target="gfx942",
                    match=ContractionMatch(**F16),
                    strategy=Codegen.model_validate(
                        {**mfma.model_dump(), "mma": {"intrinsic": "WMMA_F32_16x16x16_F16"}}
                    ),
                )
            ],
        )


def test_k_min_needs_an_operand_layout() -> None:
    with raises("ContractionMatch.k_min: expected an operand_layout, which locates K in the lhs, received 128"):
        ContractionMatch(**F32, k_min=128)
    with raises("ContractionMatch.k_min: expected a positive size, received 0"):
        ContractionMatch(**F32, batch=[], operand_layout="mk_kn", k_min=0)


# -- hardening: names, enums, integer ranges, paths, one-line messages ----------------


def _set(
    strategy: dict[str, Any],
    match: dict[str, Any] | None = None,
    target: str = "cpu",
    targets: list[dict[str, Any]] | None = None,
) -> StrategySet:
    data: dict[str, Any] = {
        "name": "s",
        "rules": [
            {"target": target, "match": match or {"kind": "op_name", "names": ["linalg.matmul"]}, "strategy": strategy}
        ],
    }
    if targets is not None:
        data["targets"] = targets
    return StrategySet.model_validate(data)


def _one_line(info: pytest.ExceptionInfo[StrategyError]) -> None:
    assert "\n" not in str(info.value)


def test_names_with_a_trailing_newline_are_refused_on_one_line() -> None:
    with raises(
        "s.rules[0].strategy.name: expected an MLIR symbol name: a letter or '_' then letters, digits or '_', received 'mm\\n'",
        "s",
        "rules[0].strategy.name",
    ):
        _set({"kind": "data_layout", "name": "mm\n", "generalize": True})
    with raises(
        "s.rules[0].match.names[0]: expected an operation name such as 'linalg.matmul', received 'linalg.matmul\\n'"
    ):
        _set(
            {"kind": "data_layout", "name": "mm", "generalize": True}, {"kind": "op_name", "names": ["linalg.matmul\n"]}
        )
    with raises("CpuTarget.cpu: expected an LLVM CPU name such as 'host' or 'znver4', received 'host\\n'"):
        CpuTarget(cpu="host\n", features=["+avx512f"])
    with raises("CpuTarget.features[0]: expected an LLVM feature toggle such as '+avx512f', received '+avx512f\\n'"):
        CpuTarget(cpu="znver4", features=["+avx512f\n"])
    with raises(
        "StrategySet.name: expected an MLIR symbol name: a letter or '_' then letters, digits or '_', received 's\\r\\n'"
    ):
        StrategySet.model_validate({"name": "s\r\n", "rules": []})
    with pytest.raises(StrategyError) as info:
        _set({"kind": "data_layout", "name": "a\u2028b", "generalize": True})
    _one_line(info)
    assert "received 'a\\u2028b'" in str(info.value)


def test_function_matcher_path_does_not_repeat_the_kind_tag() -> None:
    with raises(
        "s.rules[0].match.matchers[0].function: expected an MLIR symbol name: a letter or '_' then letters, digits or '_', received 'f\\n'",
        "s",
        "rules[0].match.matchers[0].function",
    ):
        _set(
            {"kind": "data_layout", "name": "mm", "generalize": True},
            {
                "kind": "all_of",
                "matchers": [{"kind": "function", "function": "f\n"}, {"kind": "op_name", "names": ["linalg.matmul"]}],
            },
        )
    with raises("s.rules[0].match.matchers[0].function: expected a valid string, received 5"):
        _set(
            {"kind": "data_layout", "name": "mm", "generalize": True},
            {
                "kind": "all_of",
                "matchers": [{"kind": "function", "function": 5}, {"kind": "op_name", "names": ["linalg.matmul"]}],
            },
        )


def test_unknown_keys_and_huge_values_print_on_one_line() -> None:
    with raises("s.['bad\\nkey']: expected one of the fields name, rules, targets, received unknown field 'bad\\nkey'"):
        StrategySet.model_validate({"name": "s", "rules": [], "bad\nkey": 1})
    with raises(
        "c.distribution[0]: expected a size at most 9223372036854775807 (2**63 - 1, the largest MLIR i64), received an integer of about 301 digits (about 2**999)"
    ):
        CpuLowering(name="c", distribution=[2**999, 0, 0])
    with raises(
        "s.rules[0].match: expected a 'kind' among 'op_name', 'contraction', 'convolution', 'function', 'consumer', 'producer', 'pack_op', 'attention', 'no_lowering_config', 'operand', 'dag', 'raw', 'all_of', received no 'kind' in {names: ['linalg.matmul']}"
    ):
        _set({"kind": "data_layout", "name": "mm", "generalize": True}, {"names": ["linalg.matmul"]})


def test_enum_values_are_the_compilers() -> None:
    with raises(
        "VectorLowering.contraction: expected 'dot', 'llvmintr', 'outerproduct' or 'parallelarith', received 'matmulintrinsics'"
    ):
        VectorLowering(contraction="matmulintrinsics")
    with raises(
        "VectorLowering.transpose: expected 'eltwise', 'llvmintr', 'shuffle_1d' or 'shuffle_16x16', received 'flat_transpose'"
    ):
        VectorLowering(transpose="flat_transpose")


def test_integers_fit_their_attributes() -> None:
    i64 = "expected a size at most 9223372036854775807 (2**63 - 1, the largest MLIR i64)"
    largest = "(the largest legal value is 9223372036854775807)"
    with raises(f"c.distribution[0]: {i64}, received 9223372036854775808 {largest}"):
        CpuLowering(name="c", distribution=[2**63, 0, 0])
    with raises(f"ContractionMatch.m: {i64}, received 18446744073709551616 {largest}"):
        ContractionMatch(**F32, m=2**64)
    with raises(f"ContractionMatch.k_min: {i64}, received 9223372036854775808"):
        ContractionMatch(**F32, batch=[], operand_layout="mk_kn", k_min=2**63)
    with raises(f"PackGreedily.matmul_packed_sizes[0]: {i64}, received 9223372036854775808"):
        PackGreedily(matmul_packed_sizes=[2**63, 1, 1])
    with raises(f"Pack.packed_sizes[1]: {i64}, received 9223372036854775808"):
        Pack(packed_sizes=[8, 2**63])
    with raises(
        "PackMatch.unpacked_rank: expected a rank of at most 16, received 1000000000 (the largest legal value is 16)"
    ):
        PackMatch(element_type="f32", inner_dims_pos=[0], inner_tiles=[8], unpacked_rank=10**9)
    with raises(
        "g.workgroup_size[0]: expected at most 65536 threads along one dimension, received 4294967296 (the largest legal value is 65536)"
    ):
        GpuLowering.model_validate(gpu(workgroup_size=[2**32, 1, 1]))
    with raises(
        "g.subgroup_size: expected at most 128 threads per subgroup, received 4096 (the largest legal value is 128)"
    ):
        GpuLowering.model_validate(gpu(subgroup_size=4096))
    with raises(
        "VectorLowering.transfer_max_rank: expected a rank of at most 16, received 99 (the largest legal value is 16)"
    ):
        VectorLowering(transfer_max_rank=99)
    with raises("c.distribution: expected at most 16 entries (one per loop), received 17 entries"):
        CpuLowering(name="c", distribution=[1] * 17)


def test_zero_or_boolean_subgroup_size_is_refused() -> None:
    with raises(
        "g.subgroup_size: expected at least 1 thread, received 0 (the nearest legal value is 1)", "g", "subgroup_size"
    ):
        gpu_set(gpu(subgroup_size=0))
    with raises("g.subgroup_size: expected a valid integer, received False"):
        gpu_set(gpu(subgroup_size=False))


@pytest.mark.parametrize(
    ("field", "value", "build"),
    [
        ("c.distribution[1]", True, lambda: CpuLowering(name="c", distribution=[64, True, 0])),
        ("g.workgroup_size[0]", True, lambda: GpuLowering.model_validate(gpu(workgroup_size=[True, 1, 1]))),
        ("g.prefetch_num_stages", False, lambda: GpuLowering.model_validate(gpu(prefetch_num_stages=False))),
        ("ContractionMatch.m[0][0]", True, lambda: ContractionMatch(**F32, m=[[True]])),
        ("PackTranspose.outer_perm[0]", True, lambda: PackTranspose(operand="lhs", outer_perm=[True, 0])),
        ("cg.promote_after", True, lambda: _codegen(promote_after=True)),
    ],
)
def test_booleans_are_not_integers(field: str, value: bool, build: Any) -> None:
    with raises(f"{field}: expected a valid integer, received {value}"):
        build()


def test_integers_are_not_booleans() -> None:
    with raises("mm.specialize: expected a valid boolean, received 1"):
        DataLayout(name="mm", pack=PackGreedily(matmul_packed_sizes=[8, 16, 1]), specialize=1)


def test_empty_permutations_are_refused() -> None:
    with raises("PackTranspose.inner_perm: expected a non-empty permutation such as [1, 0], received []"):
        PackTranspose(operand="lhs", inner_perm=[])
    with raises("mm.interchange: expected a non-empty permutation such as [1, 0], received []"):
        DataLayout(name="mm", generalize=True, interchange=[])


def test_one_of_alternatives_are_capped() -> None:
    six = {"one_of": [[i] for i in range(1, 7)]}
    conv = {"kind": "convolution", **F32, **{g: six for g in ConvolutionMatch.GROUPS}}
    with raises(
        "s.rules[0].match.batch: expected at most 64 matcher sequences per rule: tdsl renders one per combination of the one_of "
        "alternatives of its groups, received 6 (batch) x 6 (output_image) x 6 (output_channel) x 6 (filter) x 6 (input_channel) "
        "x 6 (depth) x 6 (strides) x 6 (dilations) = 1679616 sequences (split the rule into several rules with fewer alternatives each)",
        "s",
        "rules[0].match.batch",
    ):
        _set({"kind": "data_layout", "name": "mm", "generalize": True}, conv)
    with raises(
        "ContractionMatch.m: expected at most 64 matcher sequences per rule: tdsl renders one per combination of the one_of "
        "alternatives of batch, m, n and k, received 9 (m) x 8 (n) = 72 sequences (give m at most 8 alternatives, or split the rule)"
    ):
        ContractionMatch(**F32, m={"one_of": list(range(1, 10))}, n={"one_of": list(range(1, 9))})
    packs = [{"kind": "pack_op", "element_type": "f32", "inner_dims_pos": [0], "inner_tiles": [t]} for t in range(1, 8)]
    with raises(
        "AllOf.matchers[0]: expected at most 64 matcher sequences per rule: tdsl renders one per combination of the "
        "alternatives of its matchers, received 2 (matchers[0]) x 2 (matchers[1])"
    ):
        AllOf.model_validate({"matchers": packs})


MATMUL = {"kind": "contraction", **F32, "batch": [], "m": 256, "n": 384, "k": 512}
NO_UKERNELS = [{"kind": "llvm-cpu", "cpu": "znver4", "ukernels": "none"}]


def test_promoted_operands_exist() -> None:
    with raises(
        "g.promote_operands[0]: expected an operand index of the matched op: 0 to 2 (0 lhs, 1 rhs, 2 result), received 3 (the largest legal value is 2)",
        "g",
        "promote_operands[0]",
    ):
        gpu_set(gpu(promote_operands=[3]))
    with raises("g.promote_operands[1]: expected each operand at most once (0 is already at [0]), received 0"):
        GpuLowering.model_validate(gpu(promote_operands=[0, 0]))
    with raises(
        "cg.promote_operands[0]: expected an operand index of linalg.matmul: 0 to 2 (0 lhs, 1 rhs, 2 result), received 5"
    ):
        Rule(
            target="gfx942",
            match=OpNameMatch(names="linalg.generic"),
            strategy=_codegen(promote_operands=[5], gpu=GpuThreads(workgroup_dims=[16, 16, 1])),
        )


def test_pack_transposes_fit_the_packed_operands() -> None:
    layout = {"kind": "data_layout", "name": "p", "pack": {"kind": "pack_greedily", "matmul_packed_sizes": [8, 16, 1]}}
    with raises(
        "p.pack_transposes[0].outer_perm: expected a permutation of the 2 outer dims of the packed lhs: [0, 1], received [2, 0, 1]",
        "p",
        "pack_transposes[0].outer_perm",
    ):
        _set({**layout, "pack_transposes": [{"operand": "lhs", "outer_perm": [2, 0, 1]}]})
    with raises(
        "p.pack_transposes[0].inner_perm: expected a permutation of the 1 inner tiles of the packed lhs (m0): [0], received [1, 0]"
    ):
        DataLayout.model_validate(
            {
                **layout,
                "pack": {"kind": "pack_greedily", "matmul_packed_sizes": [8, 16, 0]},
                "pack_transposes": [{"operand": "lhs", "inner_perm": [1, 0]}],
            }
        )
    with raises(
        "p.pack_transposes[0].operand: expected an operand that the pack step packs (rhs, result); matmul_packed_sizes [0, 16, 0] packs no dim of the lhs, received 'lhs'"
    ):
        DataLayout.model_validate(
            {
                **layout,
                "pack": {"kind": "pack_greedily", "matmul_packed_sizes": [0, 16, 0]},
                "pack_transposes": [{"operand": "lhs", "inner_perm": [0]}],
            }
        )
    with raises(
        "p.pack_transposes[0].outer_perm: expected a permutation of the 3 outer dims of the packed rhs: [0, 1, 2], received [1, 0]"
    ):
        _set(
            {**layout, "pack_transposes": [{"operand": "rhs", "outer_perm": [1, 0]}]},
            {"kind": "op_name", "names": ["linalg.batch_matmul"]},
        )


def test_specialize_needs_the_mmt4d_layout() -> None:
    layout = {
        "kind": "data_layout",
        "name": "p",
        "pack": {"kind": "pack_greedily", "matmul_packed_sizes": [8, 16, 1]},
        "specialize": True,
    }
    with raises(
        "p.pack_transposes: expected the transposes that give linalg.mmt4d's layout for specialize (lhs [M1, K1, M0, K0]; "
        "rhs [N1, K1, N0, K0]; result [M1, N1, M0, N0]); with operand_layout 'mk_kn' these pack the rhs as [K1, N1, N0, K0], "
        "received [] (use pack_transposes: [{operand: rhs, outer_perm: [1, 0]}])",
        "p",
        "pack_transposes",
    ):
        _set(layout, {**MATMUL, "operand_layout": "mk_kn"}, targets=NO_UKERNELS)
    with raises(
        "these pack the lhs as [M1, K1, K0, M0], the rhs as [N1, K1, K0, N0], the result as [M1, N1, N0, M0], "
        "received [{operand: rhs, outer_perm: [1, 0]}] (use pack_transposes: [{operand: lhs, inner_perm: [1, 0]}, "
        "{operand: rhs, outer_perm: [1, 0], inner_perm: [1, 0]}, {operand: result, inner_perm: [1, 0]}])"
    ):
        _set(
            {
                **layout,
                "pack": {
                    "kind": "pack_greedily",
                    "matmul_packed_sizes": [8, 16, 1],
                    "matmul_inner_dims_order": [2, 1, 0],
                },
                "pack_transposes": [{"operand": "rhs", "outer_perm": [1, 0]}],
            },
            targets=NO_UKERNELS,
        )
    # mk_nk is already mmt4d's layout; a k left unpacked keeps a linalg.generic (nothing to check)
    _set(layout, {**MATMUL, "operand_layout": "mk_nk"}, targets=NO_UKERNELS)
    _set(
        {**layout, "pack": {"kind": "pack_greedily", "matmul_packed_sizes": [8, 16, 0]}},
        {**MATMUL, "operand_layout": "mk_kn"},
        targets=NO_UKERNELS,
    )


def test_cpu_tile_levels_follow_loop_roles() -> None:
    with raises(
        "c.distribution[2]: expected 0: loop 2 is a reduction loop (k of the matched loops mnk) and distribution tiles only "
        "parallel loops, received 16 (tile reduction loops in cache_reduction or vector_reduction)",
        "c",
        "distribution[2]",
    ):
        _set({"kind": "cpu_lowering", "name": "c", "distribution": [64, 64, 16]}, MATMUL)
    with raises(
        "c.vector_reduction[0]: expected 0: loop 0 is a parallel loop (m of the matched loops mnk) and vector_reduction tiles only reduction loops"
    ):
        _set({"kind": "cpu_lowering", "name": "c", "distribution": [64, 64, 0], "vector_reduction": [8, 0, 4]}, MATMUL)
    with raises("c.cache_parallel[1]: expected 0: loop 1 is a reduction loop (k of the matched loops bk)"):
        _set(
            {"kind": "cpu_lowering", "name": "c", "distribution": [1, 0], "cache_parallel": [1, 8]},
            {"kind": "contraction", **F32, "batch": [4], "m": [], "n": [], "k": [64]},
        )


def test_cpu_vector_tiles_stay_below_the_vector_size_limit() -> None:
    znver4 = [{"kind": "llvm-cpu", "cpu": "znver4"}]
    with raises(
        "c.vector_common_parallel[1]: expected vector tiles below IREE's vector size limit on znver4 (32768 bytes): the vector tile "
        "16x32x16 of f32 (loops mnk) makes a 32768-byte vector.contract, received 32 (the largest legal vector_common_parallel[1] is 31)",
        "c",
        "vector_common_parallel[1]",
    ):
        _set(
            {
                "kind": "cpu_lowering",
                "name": "c",
                "distribution": [64, 64, 0],
                "vector_common_parallel": [16, 32, 0],
                "vector_reduction": [0, 0, 16],
            },
            MATMUL,
            targets=znver4,
        )
    with raises(
        "c.vector_reduction[2]: expected vector tiles below IREE's vector size limit on haswell (16384 bytes): the vector tile 8x16x512 "
        "of f32 (loops mnk) makes a 262144-byte vector.contract, received no tile (the largest legal vector_reduction[2] is 31)"
    ):
        _set(
            {"kind": "cpu_lowering", "name": "c", "distribution": [64, 64, 0], "vector_common_parallel": [8, 16, 0]},
            MATMUL,
            targets=[{"kind": "llvm-cpu", "cpu": "haswell"}],
        )
    with raises(
        "c.cache_parallel[0]: expected a result tile below IREE's vector size limit on znver4 (32768 bytes): with cache_reduction set "
        "the accumulator is a vector of the cache_parallel tile, here 128x128 of f32 (65536 bytes), received 128 (the largest legal cache_parallel[0] is 63)"
    ):
        _set(
            {
                "kind": "cpu_lowering",
                "name": "c",
                "distribution": [128, 128, 0],
                "cache_parallel": [128, 128, 0],
                "cache_reduction": [0, 0, 16],
                "vector_common_parallel": [8, 16, 0],
                "vector_reduction": [0, 0, 1],
            },
            MATMUL,
            targets=znver4,
        )
    with raises(
        "c.distribution[1]: expected a distribution tile below IREE's vector size limit on znver4 (32768 bytes): pipeline DataTiling "
        "vectorizes the distribution tile, here a result tile of 64x384 f32 (98304 bytes), received 0 (the whole dimension) (the largest legal distribution[1] is 127)"
    ):
        _set(
            {"kind": "cpu_lowering", "name": "c", "pipeline": "DataTiling", "distribution": [64, 0, 0]},
            MATMUL,
            targets=[{"kind": "llvm-cpu", "cpu": "znver4"}],
        )
    # 15 (k) and 127 are legal: both accepted
    _set(
        {
            "kind": "cpu_lowering",
            "name": "c",
            "distribution": [64, 64, 0],
            "vector_common_parallel": [16, 32, 0],
            "vector_reduction": [0, 0, 15],
        },
        MATMUL,
        targets=znver4,
    )
    _set(
        {
            "kind": "cpu_lowering",
            "name": "c",
            "distribution": [128, 128, 0],
            "cache_parallel": [64, 127, 0],
            "cache_reduction": [0, 0, 16],
            "vector_common_parallel": [8, 16, 0],
            "vector_reduction": [0, 0, 1],
        },
        MATMUL,
        targets=znver4,
    )


def test_empty_targets_and_empty_tile_lists() -> None:
    with raises("s.targets: expected at least one target (leave it out for the default cpu and gfx942), received []"):
        StrategySet.model_validate(
            {
                "name": "s",
                "targets": [],
                "rules": [
                    {
                        "target": "cpu",
                        "match": {"kind": "op_name", "names": "linalg.matmul"},
                        "strategy": {"kind": "data_layout", "name": "d", "generalize": True},
                    }
                ],
            }
        )
    with raises("g.workgroup: expected at least one entry, one per loop, received []"):
        GpuLowering.model_validate(gpu(workgroup=[], reduction=None, subgroup=None))


def test_cpu_pipeline_and_codegen_checks() -> None:
    with raises(
        "c.pipeline: expected a pipeline that lowers contractions and convolutions: BufferOpsTileAndVectorize lowers only dispatches of buffer copies"
    ):
        _set(
            {"kind": "cpu_lowering", "name": "c", "pipeline": "BufferOpsTileAndVectorize", "distribution": [64, 64, 0]},
            MATMUL,
        )
    with raises(
        "cg.vector_lowering.transfer_max_rank: expected 1: the strategy's vector lowering is the last before LLVM (llvm-cpu) "
        "or the GPU lowering (rocm), and neither takes the n-D vector transfers a higher rank leaves",
        "cg",
        "vector_lowering.transfer_max_rank",
    ):
        _codegen(vector_lowering=VectorLowering(transfer_max_rank=2))
    conv = {"kind": "convolution", **F32, "batch": [2]}
    with raises(
        "p.specialize: expected False for a convolution: a packed convolution is no named op", "p", "specialize"
    ):
        _set(
            {
                "kind": "data_layout",
                "name": "p",
                "pack": {"kind": "pack_greedily", "matmul_packed_sizes": [4, 4, 16]},
                "specialize": True,
            },
            conv,
            targets=NO_UKERNELS,
        )


def test_gpu_crashers_are_refused() -> None:
    with raises(
        "g.padding[2]: expected a positive size to pad loop i to a multiple of (IREE 3.13 divides by it: 0 crashes iree-compile with SIGFPE in GPUPadOperandsPass), received 0 (the nearest legal value is 1 (no padding))"
    ):
        GpuLowering.model_validate(gpu(padding=[64, 64, 0]))
    simt = gpu(mma_kind=None, subgroup=None, thread=[4, 4, 0], prefetch_num_stages=3)
    with raises(
        "g.prefetch_num_stages: expected at most 2 for a SIMT TileAndFuse configuration (no mma_kind) that promotes operands: IREE 3.13 crashes with 3 or more stages",
        "g",
    ):
        GpuLowering.model_validate(simt)
    GpuLowering.model_validate({**simt, "promote_operands": []})
    conv = {
        "kind": "convolution",
        **F16,
        "batch": [2],
        "output_image": [32, 32],
        "output_channel": [64],
        "filter": [3, 3],
        "input_channel": [32],
    }
    with raises(
        "g.workgroup: expected 5 or 6 entries, one per loop of the convolution with use_igemm_convolution = true: its batch, output_image, "
        "output_channel and depth loops and one reduction loop (the im2col K), received 7 entries [1, 4, 16, 64, 0, 0, 0]"
    ):
        gpu_set(
            gpu(
                workgroup=[1, 4, 16, 64, 0, 0, 0],
                reduction=[0, 0, 0, 0, 1, 1, 2],
                subgroup=[1, 1, 1, 2, 0, 0, 0],
                use_igemm_convolution=True,
            ),
            conv,
        )
    with raises(
        "g.workgroup: expected 7 or 8 entries, one per loop of the convolution with use_igemm_convolution = false"
    ):
        gpu_set(gpu(workgroup=[1, 4, 16, 64, 0], reduction=[0, 0, 0, 0, 2], subgroup=[1, 1, 1, 2, 0]), conv)


def test_mfma_chain_tiles_fit_the_intrinsic() -> None:
    from tdsl import MmaChain

    def chain(intrinsic: str, *tiling: Any) -> StrategySet:
        cg = _codegen(
            root="linalg.generic",
            tiling=list(tiling),
            gpu=GpuThreads(workgroup_dims=[64, 1, 1]),
            mma=MmaChain(intrinsic=intrinsic),
        )
        return StrategySet(
            name="s",
            targets=[AmdGpuTarget()],
            rules=[Rule(target="gfx942", match=ContractionMatch(**F16, batch=[], m=256, n=256, k=256), strategy=cg)],
        )

    blocks = TileUsingForall(tile_sizes=[32, 32], mapping=["block_y", "block_x"])
    with raises(
        "cg.mma.intrinsic: expected a 16x16 intrinsic: the MFMA chain's lane distribution fails on 32x32 ones in IREE 3.13 "
        "('iree_codegen.inner_tiled op failed to populate offsets'), received 'MFMA_F32_32x32x8_F16' (use MFMA_F32_16x16x16_F16)"
    ):
        chain("MFMA_F32_32x32x8_F16", blocks, TileUsingFor(tile_sizes=[0, 0, 16]))
    with raises(
        "cg.tiling[1].tile_sizes[2]: expected a multiple of 16: the innermost tile of loop 2 (k) is packed into MFMA_F32_16x16x16_F16 "
        "tiles (16x16x16), received 8 (the nearest legal value is 16)",
        "cg",
        "tiling[1].tile_sizes[2]",
    ):
        chain("MFMA_F32_16x16x16_F16", blocks, TileUsingFor(tile_sizes=[0, 0, 8]))
    with raises(
        "cg.tiling[1].tile_sizes[0]: expected a multiple of 16: the innermost tile of loop 0 (m) is packed into MFMA_F32_16x16x16_F16 tiles (16x16x16), received 24 (the nearest legal value is 16)"
    ):
        chain("MFMA_F32_16x16x16_F16", blocks, TileUsingFor(tile_sizes=[24, 0, 16]))
    chain("MFMA_F32_16x16x16_F16", blocks, TileUsingFor(tile_sizes=[0, 0, 16]))
    cg = _codegen(
        root="linalg.generic",
        tiling=[blocks],
        gpu=GpuThreads(workgroup_dims=[64, 1, 1]),
        mma=MmaChain(intrinsic="MFMA_F32_16x16x16_F16"),
    )
    with raises(
        "cg.mma: expected a matmul with three loops (m, n, k): the MFMA chain packs the op with one size per loop (16, 16, 16), received matched ops with 4 loops (bmnk)"
    ):
        StrategySet(
            name="s",
            targets=[AmdGpuTarget()],
            rules=[Rule(target="gfx942", match=ContractionMatch(**F16, batch=[4], m=64, n=64, k=64), strategy=cg)],
        )


def test_bad_json_and_unvalidated_matchers() -> None:
    from tdsl.model.all_of import expand

    with raises(
        "StrategySet: expected a JSON document, received Expecting ',' delimiter: line 1 column 26 (char 25)",
        "StrategySet",
    ):
        StrategySet.model_validate_json('{"name": "s", "rules": [1')
    many = ContractionMatch.model_construct(
        **F32, batch=((1,), (2,)), m=tuple((i,) for i in range(1, 9)), n=tuple((i,) for i in range(1, 9)), k=None
    )
    with raises("ContractionMatch: expected at most 64 matcher sequences per rule, received 128 sequences"):
        expand(many)


def test_operand_match_refuses_a_result() -> None:
    """IREE 3.13 refuses transform.get_result in a matcher: result=True is a field error,
    never a script that fails inside iree-compile."""
    from tdsl import OperandMatch

    with pytest.raises(
        StrategyError, match=r"OperandMatch\.result: expected False: IREE 3\.13 refuses transform\.get_result"
    ):
        OperandMatch(operand=0, result=True, type="tensor<?x?xf32>")
