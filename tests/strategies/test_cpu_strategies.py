"""The CPU strategy library: every packing rule is correct on aligned and unaligned shapes,
against IREE's default pipeline and numpy; goldens of the packed IR."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import ContractionMatch, CpuLowering, CpuTarget, PackMatch, Rule, StrategySet, TdslError, compile, run
from tdsl.strategies.cpu import auto, detect_isa, inner_tile, mmt4d_layout

ROOT = Path(__file__).resolve().parent.parent.parent
AUTO = ROOT / "examples" / "cpu_auto"


@pytest.mark.compile
def test_auto_packs_every_supported_matmul_and_stays_correct() -> None:
    report = run(AUTO / "payload.mlir", auto(small_max=None, pack_matmuls=True))
    assert report.ok
    applied = {f for rule in report.compile_report.rules for f in rule.functions}
    assert applied == {"odd", "mt", "mv", "h", "q"}  # bmm (no exact batch matcher) stays with IREE
    by_name = {rule.strategy: rule for rule in report.compile_report.rules}
    isa = detect_isa()
    assert by_name[f"{isa}_f32_f32_matvec_default"].functions == ("mv",)
    assert by_name[f"{isa}_f32_f32_mk_nk"].functions == ("mt",)
    dispatches = [d for d in report.compile_report.dispatches if "mmt4d" in d.compute_ops[0]]
    assert {d.name.split("_dispatch")[0] for d in dispatches} == {"odd", "mt", "h", "q"}
    # The f32 LHS-pack tiles reach exactly one pack per f32 mmt4d (its LHS), never the RHS pack.
    packs = [d for d in report.compile_report.dispatches if d.compute_ops == ("linalg.pack",)]
    tiled = [d.name.split("_dispatch")[0] for d in packs if f"{isa}_f32_lhs_pack_tiles" in d.applied_strategies]
    assert sorted(tiled) == ["mt", "odd"] and len(packs) > len(tiled)


@pytest.mark.compile
def test_pack_match_selects_the_result_unpack() -> None:
    """PackMatch(op="unpack") reaches the unpacks of f32 mmt4d results (h: f16 -> f32),
    not the i8 -> i32 one, never a pack."""
    tile = inner_tile(detect_isa(), "f32", "f32", "f32")
    base = auto(small_max=None, pack_matmuls=True)
    strip = CpuLowering(
        name="unpack_strip",
        pipeline="DataTiling",
        distribution=[tile.m0, 16 * tile.n0],
        vector_common_parallel=[tile.m0, tile.n0],
    )
    unpack = PackMatch(op="unpack", element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[tile.m0, tile.n0])
    strategies = base.model_copy(update={"rules": [*base.rules, Rule(target="cpu", match=unpack, strategy=strip)]})
    report = run(AUTO / "payload.mlir", strategies)
    assert report.ok, report.text()
    hit = [d for d in report.compile_report.dispatches if "unpack_strip" in d.applied_strategies]
    assert sorted(d.name.split("_dispatch")[0] for d in hit) == ["h", "mt", "odd"]
    assert all(d.compute_ops == ("linalg.unpack",) for d in hit)


@pytest.mark.compile
def test_batch_matmul_packing_with_an_exact_batch_matcher() -> None:
    bmm = StrategySet(
        name="bmm_pack",
        targets=[CpuTarget(ukernels="none")],
        rules=[
            Rule(
                target="cpu",
                match=ContractionMatch(
                    lhs_type="f32", rhs_type="f32", output_type="f32", batch=[3], operand_layout="mk_kn"
                ),
                strategy=mmt4d_layout("bmm_packed", inner_tile(detect_isa(), "f32", "f32", "f32"), batch=True),
            )
        ],
    )
    report = run(AUTO / "payload.mlir", bmm)
    assert report.ok and report.compile_report.rules[0].functions == ("bmm",)


def test_tiles() -> None:
    assert inner_tile("avx512", "f32", "f32", "f32").sizes() == [8, 32, 1]
    assert inner_tile("avx512", "f32", "f32", "f32", m=1).sizes() == [1, 32, 1]
    assert inner_tile("avx2", "i8", "i8", "i32").sizes() == [6, 16, 1]
    assert detect_isa("flags\t: fpu sse avx2 fma avx512f\n") == "avx512"
    assert detect_isa("flags\t: fpu sse avx2 fma\n") == "avx2"
    with pytest.raises(TdslError, match="no packing tile for f32 x f16 -> f32"):
        inner_tile("avx512", "f32", "f16", "f32")
    assert auto(pack_matmuls=True).targets[0].ukernels == "none"


@pytest.mark.parametrize("isa", ["avx512", "avx2", "neon", "generic"])
def test_auto_leaves_what_it_did_not_measure_to_data_tiling(isa: str) -> None:
    """By default every ISA's set is IREE's data tiling plus only the measured choices; every
    rule is a ready-library (optional) rule; the overrides take effect."""
    from tdsl.strategies.cpu.measured import CHOICES

    choices = CHOICES[isa]  # type: ignore[index]
    constant = auto(isa=isa)  # type: ignore[arg-type]
    cpu = constant.targets[0]
    assert isinstance(cpu, CpuTarget) and cpu.data_tiling and cpu.ukernels == "default"
    assert "--iree-opt-data-tiling" in cpu.compile_flags()
    # IREE's data tiling may make vectors its own check refuses (gpt2_block on AVX2): allowed,
    # except in the baseline, which stays IREE's own.
    assert cpu.allow_large_vectors and "--iree-llvmcpu-fail-on-large-vector=false" in cpu.compile_flags()
    assert not cpu.baseline().allow_large_vectors and not any(
        "large-vector" in f for f in cpu.baseline().compile_flags()
    )
    assert cpu.im2col_convs == choices.im2col_convs
    # Convolutions packed as matmuls stay channels-first; otherwise the measured choice.
    conv_matmuls = choices.convs_as_packed_matmuls_with_constant_weights
    assert cpu.convs_as_matmuls == conv_matmuls
    assert cpu.channels_last_convs == (choices.channels_last_convs_with_constant_weights and not conv_matmuls)
    knobs = ("im2col_convs", "channels_last_convs", "convs_as_matmuls")
    assert set(cpu.ready_knobs) >= {k for k in knobs if getattr(cpu, k)}
    assert cpu.peel_vector_loops == choices.peel_vector_loops
    pinned = choices.narrow_matmuls_off_data_tiling + 2 * choices.i64_matmul_tiles
    over = choices.packed_matmuls_over_data_tiling_with_constant_weights
    packing = auto(isa=isa, packed_matmuls_over_data_tiling=True).rules  # type: ignore[arg-type]
    assert len(constant.rules) == pinned + over * (len(packing) - pinned) and cpu.fold_batch_matmuls == over
    runtime = auto(isa=isa, weights="runtime")  # type: ignore[arg-type]
    assert len(runtime.rules) == pinned + choices.matvec_tiles_with_runtime_weights
    assert not runtime.targets[0].fold_batch_matmuls  # type: ignore[union-attr]
    assert not runtime.targets[0].channels_last_convs  # type: ignore[union-attr]
    assert all(rule.optional for rule in runtime.rules)
    assert choices.evidence and all(line.strip() for line in choices.evidence)
    packed = auto(isa=isa, pack_matmuls=True, im2col_convs=not choices.im2col_convs)  # type: ignore[arg-type]
    target = packed.targets[0]
    assert isinstance(target, CpuTarget) and not target.data_tiling and target.ukernels == "none"
    assert target.im2col_convs != choices.im2col_convs and all(rule.optional for rule in packed.rules)
    # Packed matmuls over data tiling: data tiling and its ukernels stay, batch-1 batch matmuls
    # are folded first, only the f32 rules that pack come (matvec and small ones stay with data
    # tiling), and the mmt4d and LHS pack rules code generate their ops without ukernels.
    over = auto(isa=isa, packed_matmuls_over_data_tiling=True)  # type: ignore[arg-type]
    target = over.targets[0]
    assert isinstance(target, CpuTarget) and target.data_tiling and target.ukernels == "default"
    assert target.fold_batch_matmuls and "fold_batch_matmuls" in target.ready_knobs
    layouts = [r.strategy for r in over.rules if r.strategy.kind == "data_layout"]
    assert layouts and all(getattr(s, "pack", None) is not None and "f32" in s.name for s in layouts)
    codegen = [r.strategy for r in over.rules if isinstance(r.strategy, CpuLowering)]
    assert {s.name for s in codegen if not s.ukernels} >= {f"{isa}_mmt4d_blocking", f"{isa}_f32_lhs_pack_tiles"}
    assert auto(isa=isa, packed_matmuls_over_data_tiling=False).rules == runtime.rules[:pinned]  # type: ignore[arg-type]


@pytest.mark.compile
def test_narrow_matmuls_keep_iree_default_tiles_under_data_tiling(tmp_path: Path) -> None:
    """auto() on AVX-512: a 3136x64x64 matmul (N <= 128, K <= 1024) is one DoubleTilingExpert
    matmul dispatch with the pinned tiles and no encode dispatch; a 3136x64x2048 one (K too
    large) and a 3136x64x72 one (K no multiple of 16) are data tiled; numbers agree."""
    payload = tmp_path / "narrow.mlir"
    fn = """
func.func @{name}(%a: tensor<3136x{k}xf32>, %b: tensor<{k}x64xf32>) -> tensor<3136x64xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3136x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3136x64xf32>) -> tensor<3136x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3136x{k}xf32>, tensor<{k}x64xf32>) outs(%f : tensor<3136x64xf32>) -> tensor<3136x64xf32>
  return %r : tensor<3136x64xf32>
}}"""
    payload.write_text("".join(fn.format(name=n, k=k) for n, k in (("narrow", 64), ("deep", 2048), ("odd", 72))))
    report = run(payload, auto(isa="avx512"))
    assert report.ok, report.text()
    dispatches = report.compile_report.dispatches
    pinned = [d for d in dispatches if "avx512_f32_narrow_matmul_tiles" in d.applied_strategies]
    assert [d.name.split("_dispatch")[0] for d in pinned] == ["narrow"] and pinned[0].compute_ops == ("linalg.matmul",)
    tiled = {d.name.split("_dispatch")[0] for d in dispatches if d.compute_ops and d.compute_ops[0] == "linalg.mmt4d"}
    assert tiled == {"deep", "odd"}


@pytest.mark.compile
def test_runtime_weight_matvec_is_pinned_before_data_tiling() -> None:
    """auto(weights="runtime"): the (k, n)-matrix matvec keeps its pinned tiles (one
    matmul dispatch, no encode dispatches for it), the other matmuls are data tiled."""
    report = run(ROOT / "tests" / "payloads" / "cpu" / "matvec.mlir", auto(isa="avx512", weights="runtime"))
    assert report.ok, report.text()
    pinned = [d for d in report.compile_report.dispatches if "avx512_f32_matvec_tiles" in d.applied_strategies]
    assert [d.name.split("_dispatch")[0] for d in pinned] == ["mv"]
    assert pinned[0].compute_ops == ("linalg.matmul",) and "DoubleTilingExpert" in (pinned[0].pipeline or "")


@pytest.mark.compile
def test_packed_ir_golden(golden) -> None:
    golden.check_ir(
        AUTO / "payload.mlir",
        auto(isa="avx2", small_max=None, pack_matmuls=True),
        "cpu",
        "preprocessing",
        "../goldens/cpu/cpu_auto.preprocessing.mlir",
        mode="interpreter",
    )


@pytest.mark.compile
def test_auto_convolutions_take_the_im2col_path_and_stay_correct() -> None:
    """NHWC 3x3 (batch 2, odd sizes), NCHW 3x3 stride 2 and a 1x1 conv against IREE's
    default pipeline and numpy (float64)."""
    report = run(ROOT / "tests" / "payloads" / "cpu" / "convs.mlir", auto(isa="avx2", pack_matmuls=True))
    assert report.ok, report.text()
    assert "--iree-global-opt-use-im2col-for-convs" in auto(isa="avx2").targets[0].compile_flags()
    checked = {(c.function, cmp.reference) for c in report.functions for cmp in c.comparisons}
    assert {("nhwc_3x3", "numpy"), ("nchw_3x3_stride2", "numpy"), ("nhwc_1x1", "numpy")} <= checked


def test_blocking_from_cache_sizes(tmp_path: Path) -> None:
    from tdsl.strategies.cpu import Caches, detect_caches, mmt4d_blocking

    avx2 = mmt4d_blocking("b", inner_tile("avx2", "f32", "f32", "f32"), Caches(l1=32 * 1024, l2=512 * 1024))
    assert avx2.distribution == (32, 2, 0, 0, 0, 0)  # 2 * 16 * 2048 * 4 B = 256 KiB <= L2 / 2
    assert avx2.cache_reduction is None  # Mmt4dTilingExpert has no cache levels
    small_l2 = mmt4d_blocking("b", inner_tile("avx2", "f32", "f32", "f32"), Caches(l1=32 * 1024, l2=256 * 1024))
    assert small_l2.distribution == (32, 1, 0, 0, 0, 0)
    zen5 = mmt4d_blocking("b", inner_tile("avx512", "f32", "f32", "f32"), Caches(l1=48 * 1024, l2=1024 * 1024))
    assert zen5.distribution == (32, 2, 0, 0, 0, 0) and zen5.vector_common_parallel == (1, 1, 0, 8, 32, 0)
    for level, kind, size in (
        (1, "Data", "48K"),
        (1, "Instruction", "32K"),
        (2, "Unified", "1024K"),
        (3, "Unified", "32M"),
    ):
        index = tmp_path / f"index{level}{kind[0]}"
        index.mkdir()
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")
    assert detect_caches(str(tmp_path)) == Caches(l1=48 * 1024, l2=1024 * 1024)
    assert detect_caches(str(tmp_path / "missing")) == Caches()


@pytest.mark.compile
def test_small_matmuls_stay_with_iree_by_default() -> None:
    """With the default ``small_max`` (256), the example's matmuls (every dim <= 256) are only
    generalized: no mmt4d dispatch, same numbers."""
    report = run(AUTO / "payload.mlir", auto(isa="avx2", pack_matmuls=True))
    assert report.ok, report.text()
    assert not [d for d in report.compile_report.dispatches if "mmt4d" in d.compute_ops[0]]
    small = {rule.strategy: rule.functions for rule in report.compile_report.rules if rule.functions}
    assert small["avx2_f32_f32_mk_kn_small_default"] == ("odd",)
    assert small["avx2_f32_f32_mk_nk_small_default"] == ("mt",)


@pytest.mark.compile
def test_matvec_tiles_apply_to_kn_matrices_only_and_stay_correct() -> None:
    report = run(ROOT / "tests" / "payloads" / "cpu" / "matvec.mlir", auto(isa="avx2", pack_matmuls=True))
    assert report.ok, report.text()
    tiled = {
        d.name.split("_dispatch")[0]
        for d in report.compile_report.dispatches
        if "avx2_f32_f32_matvec_kn_tiles" in d.applied_strategies
    }
    assert tiled == {"mv"}


def test_matvec_layouts_need_no_m_loop() -> None:
    from tdsl import StrategyError

    with pytest.raises(StrategyError, match=r"m: expected \[\] \(no M loop\) with operand_layout 'k_kn'"):
        ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=1, operand_layout="k_kn")
    mv = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=[], operand_layout="k_nk")
    assert mv.indexing_maps() == [[1], [0, 1], [0]]


@pytest.mark.compile
def test_packed_matmuls_over_data_tiling_on_an_onnx_mlp(tmp_path: Path) -> None:
    """auto(packed_matmuls_over_data_tiling=True) on an ONNX MLP of a batch-1 3-D activation
    (MatMul -> Relu -> MatMul with constant weights, as exporters write a transformer's FFN):
    both products are packed at the graph level into mmt4d dispatches, and the outputs match
    IREE default's and onnxruntime's."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
        for name, shape in (("w1", (256, 384)), ("w2", (384, 128)))
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 48, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 48, 128])],
        weights,
    )
    path = tmp_path / "mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    report = run(path, auto(isa="avx2", packed_matmuls_over_data_tiling=True))
    assert report.ok
    packed = [o for o in report.compile_report.rules if o.dispatches and "mk_" in o.strategy]
    assert packed and sum("mmt4d" in d for o in packed for d in o.dispatches) == 2, [
        (o.strategy, o.dispatches) for o in report.compile_report.rules
    ]


def _ukernel_calls(dump: Path) -> dict[str, bool]:
    """{dispatch function: whether it calls IREE's mmt4d ukernel} from the LLVM IR of an
    ``--iree-hal-dump-executable-intermediates-to`` dump, before LLVM inlines anything."""
    calls: dict[str, bool] = {}
    for ll in dump.glob("*.codegen.ll"):
        for body in ll.read_text().split("\ndefine ")[1:]:
            name = body.split("@", 1)[1].split("(", 1)[0]
            if "_dispatch_" in name:
                calls[name] = "@iree_uk_mmt4d(" in body.split("\n}\n", 1)[0]
    return calls


@pytest.mark.compile
def test_packed_matmuls_over_data_tiling_keep_ukernels_for_integer_matmuls(tmp_path: Path) -> None:
    """auto(packed_matmuls_over_data_tiling=True) keeps IREE's ukernels on: a QLinearMatMul
    (i8 x i8 -> i32, data tiled) calls the mmt4d ukernel, a float MatMul (a quantize_dynamic
    layer's left-out node) is a graph-level mmt4d code generated without it
    (CpuLowering(ukernels=False)); outputs match onnxruntime's."""
    import numpy as np
    import onnx
    import quantized_models as qm

    over = auto(isa="avx2", packed_matmuls_over_data_tiling=True)
    assert over.targets[0].ukernels == "default"  # type: ignore[union-attr]
    calls: dict[str, bool] = {}
    for name, model in (
        ("qlinear", qm.qlinear_matmul(np.int8, (48, 256), 384)),
        ("dynamic", qm.dynamic_linear(48, 256, 384)),
    ):
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, str(path))
        assert run(path, over).ok
        dump = tmp_path / f"{name}_ll"
        compile(path, over, "cpu", extra_flags=[f"--iree-hal-dump-executable-intermediates-to={dump}"])
        calls.update(_ukernel_calls(dump))
    integer = [uses for name, uses in calls.items() if "matmul_48x384x256_i8xi8xi32" in name]
    packed = [uses for name, uses in calls.items() if "mmt4d" in name and name.endswith('_f32"')]
    assert integer == [True] and packed == [False], calls
