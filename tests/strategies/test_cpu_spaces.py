"""The ready CPU op-level spaces of ``tdsl tune`` (tdsl.strategies.cpu.space): which ops get
a packing space, and that every candidate of one is a valid set whose blocking reaches its
own packed op only -- on generated matmul shapes."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdsl import ContractionMatch, CpuLowering, CpuTarget, GraphCpuLowering, Rule, StrategySet, compile, render, run
from tdsl.bindings import linalg_ops
from tdsl.compiler.ops import OpView, matcher_for
from tdsl.errors import StrategyError
from tdsl.strategies.cpu.blocking import mmt4d_tiles
from tdsl.strategies.cpu.layout_spaces import IN_PLACE_MAPS, MMT4D_MAPS, packable, packing_space, panel_space
from tdsl.strategies.cpu.space import contraction_space, convolution_space, convolution_tunable

UNIT_BATCH = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "unit_batch.mlir"


def _view(m: int, n: int, k: int, transposed_b: bool = False, batch: int = 0) -> OpView:
    """The graph-level view of one f32 matmul (as the op listing reads it)."""
    b_type = f"tensor<{n}x{k}xf32>" if transposed_b else f"tensor<{k}x{n}xf32>"
    op = "linalg.matmul"
    if transposed_b:
        maps = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"]
        op += " indexing_maps = [" + ", ".join(f"affine_map<{m}>" for m in maps) + "]"
    a_type, r_type = f"tensor<{m}x{k}xf32>", f"tensor<{m}x{n}xf32>"
    if batch:
        op, a_type, b_type, r_type = (
            "linalg.batch_matmul",
            f"tensor<{batch}x{m}x{k}xf32>",
            f"tensor<{batch}x{k}x{n}xf32>",
            f"tensor<{batch}x{m}x{n}xf32>",
        )
    text = f"""
func.func @f(%a: {a_type}, %b: {b_type}, %c: {r_type}) -> {r_type} {{
  %r = {op} ins(%a, %b : {a_type}, {b_type}) outs(%c : {r_type}) -> {r_type}
  return %r : {r_type}
}}"""
    [found] = linalg_ops(text)
    return OpView.of(found)


def test_which_ops_get_a_packing_space() -> None:
    """2-D matmuls, plain or with a transposed B, get one, and so does a 1 x K by K x N
    product (inner tile 1 x N0: with constant weights the packed matrix is read in panels;
    1x4096x4096 measured 1.13x data tiling here), and so does a batch-1 batch matmul (its
    batch folded first: packed with its batch, IREE would lower it as an untiled
    linalg.contract); a real batch, or a batch-1 one whose m is 1, does not, with the
    reason."""
    for view in (_view(96, 64, 128), _view(96, 64, 128, transposed_b=True)):
        assert packable(view, matcher_for(view)) == ""
    matvec = _view(1, 256, 256)
    assert packable(matvec, matcher_for(matvec)) == ""
    [m0] = [
        knob
        for knob in packing_space(matvec, matcher_for(matvec), "avx512", CpuTarget(), "mv").knobs
        if knob.name == "m0"
    ]
    assert tuple(m0.values()) == (1,)
    unit = _view(64, 256, 256, batch=1)
    assert packable(unit, matcher_for(unit)) == ""
    [layout, *_] = packing_space(unit, matcher_for(unit), "avx512", CpuTarget(), "op0").template.rules
    assert layout.strategy.generalize and layout.strategy.fold_unit_dims
    batch = _view(64, 256, 256, batch=4)
    assert "batch" in packable(batch, matcher_for(batch))
    with pytest.raises(ValueError, match="batch"):
        packing_space(batch, matcher_for(batch), "avx512", CpuTarget(data_tiling=True), "op0")
    unit_m = _view(1, 256, 256, batch=1)
    assert "unit m, n or k" in packable(unit_m, matcher_for(unit_m))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.sampled_from(["mk_kn", "mk_nk", "batch-1"]),
    st.sampled_from(["avx512", "avx2"]),
)
def test_generated_matmuls_packing_candidates(m: int, n: int, k: int, form: str, isa: str) -> None:
    """On generated shapes: the library's point is a seed; every candidate validates, runs
    with ukernels off (the base's data tiling kept for the other ops), pads to its inner tile, and its mmt4d blocking selects
    exactly the packed op of its own tile (mmt4d maps, M1 x M0 by N1 x N0 by K x 1), or, in
    place, the generic that writes the result (only where the tile divides M and N); the LHS
    pack rule is there only with a step; a batch-1 batch matmul is folded first; what was
    left out is counted."""
    transposed_b = form == "mk_nk"
    view = _view(m, n, k, transposed_b, batch=1 if form == "batch-1" else 0)
    if form == "batch-1" and 1 in (m, n, k):
        assert packable(view, matcher_for(view))
        return
    space = packing_space(view, matcher_for(view), isa, CpuTarget(data_tiling=True), "op0")
    assert space.seeds and all(space.index_of(v) < space.size for v in space.seeds)
    candidates = list(space.candidates(count=12, seed=m + n + k))
    assert candidates or space.pruned.total
    lanes = 16 if isa == "avx512" else 8
    for c in candidates:
        target, (layout, blocking, *pack) = c.strategies.targets[0], c.strategies.rules
        assert (target.ukernels, target.data_tiling) == ("none", True)  # data tiling kept for the other ops
        m0, n0, k0 = layout.strategy.pack.matmul_packed_sizes
        assert (m0, n0) == (c.values["m0"], c.values["n0"]) and n0 % lanes == 0
        if c.values["in_place"]:  # K unpacked, the generic kept, the unpack lowered: the result written in place
            assert k0 == 0 and not layout.strategy.specialize and layout.strategy.lower_unpack
            assert m % m0 == 0 and n % n0 == 0 and m // m0 > 1 and n // n0 > 1 and k > 1
            assert blocking.match.maps == IN_PLACE_MAPS and blocking.strategy.pipeline == "DoubleTilingExpert"
            assert (
                blocking.match.m == ((m // m0, m0),)
                and blocking.match.n == ((n // n0, n0),)
                and blocking.match.k == ((k,),)
            )
            assert blocking.strategy.vector_common_parallel == (1, m0, 1, n0, 0)
            assert not pack or pack[0].match.matchers[0].inner_tiles == (m0,)
        else:
            assert k0 == 1 and layout.strategy.specialize and not layout.strategy.lower_unpack
            assert blocking.match.maps == MMT4D_MAPS
            assert (
                blocking.match.m == ((-(-m // m0), m0),)
                and blocking.match.n == ((-(-n // n0), n0),)
                and blocking.match.k == ((k, 1),)
            )
        assert bool(pack) == bool(c.values["lhs_pack_step"])
        assert [t.operand for t in layout.strategy.pack_transposes] == ([] if transposed_b else ["rhs"])
        assert layout.strategy.fold_unit_dims == (form == "batch-1")
        assert c.values["m0"] * c.values["n0"] // lanes <= (24 if isa == "avx512" else 12)  # accumulator registers


@pytest.mark.parametrize("isa, m0", [("avx512", 8), ("avx2", 4)])
def test_packing_seeds_keep_the_library_tile_on_a_short_matmul(isa: str, m0: int) -> None:
    """BERT's 64-row projections: the library's blocking (32 micro panels per workgroup)
    does not fit 64 rows; the seed keeps the library's register tile and takes fewer micro
    panels, every seed passes the constraints (none is pruned before it is tried), and the
    in-place form of it is one of them."""
    view = _view(64, 1024, 256)
    space = packing_space(view, matcher_for(view), isa, CpuTarget(data_tiling=True), "op0")
    first = space.seeds[0]
    assert (first["m0"], first["m_tiles"] * first["m0"]) == (m0, 64) and not first["in_place"]
    assert all(c(v) for v in space.seeds for c in space.constraints)
    assert first | {"in_place": True} in space.seeds
    assert len(list(space.take(iter([(space.index_of(v), v) for v in space.seeds])))) == len(space.seeds)


def test_a_packing_candidate_renders() -> None:
    view = _view(384, 128, 384)
    space = packing_space(view, matcher_for(view), "avx512", CpuTarget(data_tiling=True), "op0")
    """The library's point renders: packing at the graph level (preprocessing), the mmt4d
    blocking and the LHS pack tiles at codegen (tuning spec)."""
    rendered = render(space.candidate(space.seeds[0]), "cpu")
    preprocessing, tuning = rendered.script("preprocessing"), rendered.script("tuning_spec")
    assert preprocessing is not None and "pack_greedily" in preprocessing.text and "specialize" in preprocessing.text
    assert tuning is not None and "Mmt4dTilingExpert" in tuning.text and "op0_lhs_pack" in tuning.text
    unit = _view(384, 128, 384, batch=1)
    space = packing_space(unit, matcher_for(unit), "avx512", CpuTarget(data_tiling=True), "op0")
    folded = render(space.candidate(space.seeds[0]), "cpu").script("preprocessing")
    assert (
        folded is not None
        and "fold_unit_extent_dims_via_reshapes" in folded.text
        and "@tdsl_r0_op0_packed" in folded.text
    )


def test_pinned_space_keeps_the_base_target() -> None:
    view = _view(96, 64, 128)
    space = contraction_space(view, matcher_for(view), "avx512", CpuTarget(data_tiling=True), "op0")
    assert all(c.strategies.targets[0].data_tiling for c in space.candidates(count=4))


def test_data_tiling_leaves_a_packed_mmt4d_to_its_codegen_rules() -> None:
    """A codegen-time lowering of a matmul is refused under data tiling (IREE drops it when
    the op becomes linalg.mmt4d), but one of linalg.mmt4d's own loops is not: data tiling
    leaves a graph-level packed mmt4d alone."""
    blocking = mmt4d_tiles("b", 8, 32, 1, 1, 1)
    mmt4d = ContractionMatch(
        lhs_type="f32", rhs_type="f32", output_type="f32", maps=MMT4D_MAPS, batch=[], m=[16, 8], n=[12, 32], k=[256, 1]
    )
    target = CpuTarget(data_tiling=True, ukernels="none")
    StrategySet(name="s", targets=[target], rules=[Rule(target="cpu", match=mmt4d, strategy=blocking)])
    matmul = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], operand_layout="mk_kn")
    tiles = CpuLowering(
        name="t", distribution=[16, 64, 0], vector_common_parallel=[8, 16, 0], vector_reduction=[0, 0, 16]
    )
    with pytest.raises(
        StrategyError, match="data_tiling: expected False when a codegen-time cpu_lowering configures a matmul"
    ):
        StrategySet(name="s", targets=[target], rules=[Rule(target="cpu", match=matmul, strategy=tiles)])


@pytest.mark.compile
def test_a_packed_batch1_candidate_compiles_beside_data_tiling() -> None:
    """On a program with a batch-1 batch matmul and a plain matmul, the packing candidate of
    the first (ukernels off, data tiling kept) packs it for linalg.mmt4d with its own
    blocking and LHS pack tiles, while data tiling takes the plain matmul."""
    text = UNIT_BATCH.read_text()
    view = next(OpView.of(op) for op in linalg_ops(text) if op.function == "bmm" and op.kind == "contraction")
    space = packing_space(view, matcher_for(view), "avx512", CpuTarget(data_tiling=True), "op0")
    report = compile(UNIT_BATCH, space.candidate(space.seeds[0]), "cpu", strict=True)
    applied = {o.strategy: o.dispatches for o in report.rules}
    assert all(applied.values()) and len(applied) == 3
    [packed] = applied["op0_mmt4d"]
    assert "mmt4d" in packed and "bmm" in packed
    by_name = {d.name: d for d in report.dispatches}
    assert any(
        name.startswith("mm_") and "linalg.mmt4d" in by_name[name].compute_ops for name in by_name
    )  # data tiling's


FFN_GELU = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "ffn_gelu.mlir"


@pytest.mark.compile
@pytest.mark.parametrize("isa", ["avx512", "avx2"])
def test_an_in_place_candidate_takes_the_gelu_into_its_dispatch_and_computes_the_ffn(isa: str) -> None:
    """The in-place form of the FFN-up projection (batch 1, as ONNX exports it), beside RHS
    panels for the FFN-down (BERT's tuned set): its three rules apply, its dispatch is the
    packed generic with the bias and GELU fused, no unpack is left, and the outputs match
    numpy and IREE default. (Where the GELU's result feeds an unfolded batch matmul, IREE
    leaves the GELU a dispatch of its own: the reshape back to 1x64x1024 stops its
    propagation; under data tiling it joins that matmul's LHS pack.)"""
    text = FFN_GELU.read_text()
    views = [OpView.of(op) for op in linalg_ops(text) if op.kind == "contraction"]
    up, down = (next(v for v in views if list(v.sizes("n")) == [n]) for n in (1024, 256))
    space = packing_space(up, matcher_for(up), isa, CpuTarget(), "up")
    in_place = space.candidate(next(v for v in space.seeds if v["in_place"]))
    panels = panel_space(down, matcher_for(down), isa, CpuTarget(), "down")
    ffn = StrategySet(
        name="ffn", targets=in_place.targets, rules=[*in_place.rules, *panels.candidate(panels.seeds[0]).rules]
    )
    report = run(FFN_GELU, ffn)
    assert report.ok, report.text()
    applied = {o.strategy: o.dispatches for o in report.compile_report.rules}
    assert all(applied.values()) and applied["up"] == applied["up_in_place"]
    [fused] = applied["up_in_place"]
    by_name = {d.name: d for d in report.compile_report.dispatches}
    assert by_name[fused].compute_ops == ("linalg.generic", "linalg.generic")  # the contraction, then bias + GELU
    assert not any("linalg.unpack" in d.compute_ops for d in report.compile_report.dispatches)
    assert (
        sum(d.compute_ops == ("linalg.generic",) for d in report.compile_report.dispatches) == 1
    )  # the FFN-down alone


@pytest.mark.compile
@settings(max_examples=4, deadline=None, derandomize=True)
@given(
    st.sampled_from([2, 4, 8]),
    st.integers(2, 8),
    st.integers(2, 12),
    st.integers(1, 300),
    st.booleans(),
    st.integers(0, 10_000),
)
def test_generated_in_place_candidates_apply_and_compute_the_matmul(
    m0: int, m1: int, n1: int, k: int, transposed_b: bool, seed: int
) -> None:
    """On generated shapes (whole M0 x N0 tiles, K from 1: the space offers no in-place point
    where a loop would be a unit one) every rule of an in-place candidate applies and the
    outputs match numpy and IREE default."""
    m, n = m0 * m1, 16 * n1
    view = _view(m, n, k, transposed_b)
    space = packing_space(view, matcher_for(view), "avx512", CpuTarget(), "op0")
    candidate = next((c for c in space.candidates(count=64, seed=seed) if c.values["in_place"]), None)
    if candidate is None:
        return
    b_type = f"tensor<{n}x{k}xf32>" if transposed_b else f"tensor<{k}x{n}xf32>"
    maps = (
        " indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]"
        if transposed_b
        else ""
    )
    text = f"""func.func @f(%a: tensor<{m}x{k}xf32>, %b: {b_type}) -> tensor<{m}x{n}xf32> {{
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul{maps} ins(%a, %b : tensor<{m}x{k}xf32>, {b_type}) outs(%c : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}"""
    with tempfile.TemporaryDirectory() as tmp:
        payload = Path(tmp) / "mm.mlir"
        payload.write_text(text)
        report = run(payload, candidate.strategies)
    assert report.ok, report.text()
    assert all(o.dispatches for o in report.compile_report.rules), [
        (o.strategy, o.dispatches) for o in report.compile_report.rules
    ]


WIDENED_INTEGER_MATMUL = """
func.func @mmi(%a: tensor<8x784xi32>, %b: tensor<784x512xi32>) -> tensor<8x512xi64> {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8x512xi64>
  %c = linalg.fill ins(%zero : i64) outs(%e : tensor<8x512xi64>) -> tensor<8x512xi64>
  %r = linalg.matmul ins(%a, %b : tensor<8x784xi32>, tensor<784x512xi32>) outs(%c : tensor<8x512xi64>) -> tensor<8x512xi64>
  return %r : tensor<8x512xi64>
}"""


@pytest.mark.e2e
def test_the_widened_integer_matmul_of_onnx_matmulinteger_gets_pinned_tiles_only(tmp_path: Path) -> None:
    """ONNX MatMulInteger (onnxruntime's quantize_dynamic) reaches IREE 3.13 as an i32 x i32
    -> i64 matmul: it gets the pinned-tile space (an 8-row MLP measured 1.14x IREE default
    with it), and no packing or panel space, with the reason (there is no mmt4d inner tile
    for those types) instead of an error; a candidate compiles and applies."""
    from tdsl.strategies.cpu.layout_spaces import panelable
    from tdsl.strategies.cpu.space import tunable

    [found] = [op for op in linalg_ops(WIDENED_INTEGER_MATMUL) if op.name == "linalg.matmul"]
    view = OpView.of(found)
    match = matcher_for(view)
    assert tunable(view) == ""
    assert "no mmt4d inner tile" in packable(view, match) and "no panel space" in panelable(view, match, "avx2")
    space = contraction_space(view, match, "avx2", CpuTarget(), "op0")
    candidate = space.candidate(space.seeds[0])
    payload = tmp_path / "mmi.mlir"
    payload.write_text(WIDENED_INTEGER_MATMUL)
    [applied] = compile(payload, candidate, "cpu").rules
    assert applied.dispatches and applied.dispatches[0].startswith("mmi_dispatch_0_matmul_8x512x784")


BATCH_CONVS = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "batch_convs.mlir"


@pytest.fixture(scope="module")
def conv_listing() -> dict[str, Any]:
    """The op listing of the batch-convolution payload, by function."""
    from tdsl.compiler.ops import list_dispatches

    return {d.name.split("_dispatch_")[0]: d for d in list_dispatches(BATCH_CONVS, CpuTarget()).dispatches}


def test_which_convolutions_get_a_space_and_why_the_others_do_not(conv_listing: dict[str, Any]) -> None:
    """Batch convolutions (plain and grouped) get a space; a batch-1 convolution does not
    (IREE 3.13 drops a compilation_info on it) nor does a pooling op; each says why."""
    reasons = {name: convolution_tunable(d.graph_op, d.pipeline) for name, d in conv_listing.items()}
    assert reasons["nchw_3x3"] == "" and reasons["grouped_dilated"] == ""
    assert "batch-1 convolution" in reasons["batch1_3x3"] and "InsertBatchDimForBatchlessConv" in reasons["batch1_3x3"]
    assert "pooling" in reasons["max_pool"]


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_every_convolution_candidate_validates_and_pins_its_layout(
    conv_listing: dict[str, Any], data: st.DataObject
) -> None:
    """Every candidate of a convolution's space is a valid set whose rule selects that
    op's layout exactly (its indexing maps) on IREE's own pipeline for it, keeps the register
    tile inside the workgroup tile and tiles the outer image and filter loops by 1 (IREE's
    conv pipelines decompose the op into 1-D convolutions there)."""
    name = data.draw(st.sampled_from(["nchw_3x3", "grouped_dilated"]))
    d = conv_listing[name]
    space = convolution_space(
        d.graph_op,
        d.graph_matcher,
        data.draw(st.sampled_from(["avx2", "avx512"])),
        CpuTarget(),
        "conv",
        d.pipeline,
        d.lowering_config,
    )
    for c in space.candidates(count=6, seed=data.draw(st.integers(0, 1000))):
        [rule] = c.strategies.rules
        lowering, roles = rule.strategy, d.graph_op.roles
        assert rule.match.maps == d.graph_op.maps and d.pipeline.endswith(f"<{lowering.pipeline}>")
        for loop in roles["filter_loop"]:
            assert lowering.vector_reduction[loop] == 1 and lowering.distribution[loop] == 0
        for loop in roles["output_image"][:-1] + roles["batch"]:
            assert lowering.vector_common_parallel[loop] == 1
        for wg, vec in zip(lowering.distribution, lowering.vector_common_parallel):
            assert wg == 0 or wg % vec == 0


def test_the_seed_of_a_convolution_is_iree_own_tiles(conv_listing: dict[str, Any]) -> None:
    """IREE's lowering config of the op (from the listing) is the space's seed: the search
    starts at IREE's point and its neighbours."""
    d = conv_listing["nchw_3x3"]
    space = convolution_space(d.graph_op, d.graph_matcher, "avx2", CpuTarget(), "conv", d.pipeline, d.lowering_config)
    [seed] = space.seeds
    [candidate] = space.take(iter([(space.index_of(seed), seed)]))
    lowering = candidate.strategies.rules[0].strategy
    assert f"distribution = [{', '.join(map(str, lowering.distribution))}]" in d.lowering_config
    assert f"vector_common_parallel = [{', '.join(map(str, lowering.vector_common_parallel))}]" in d.lowering_config


@pytest.mark.parametrize("name", ["nchw_3x3", "grouped_dilated"])
@pytest.mark.e2e
def test_a_convolution_candidate_applies_and_computes_the_convolution(conv_listing: dict[str, Any], name: str) -> None:
    """A candidate away from IREE's tiles compiles, applies to its op only, and matches numpy
    and IREE default."""
    d = conv_listing[name]
    space = convolution_space(d.graph_op, d.graph_matcher, "avx2", CpuTarget(), "conv", d.pipeline, d.lowering_config)
    candidate = next(c for c in space.candidates(count=20, seed=3) if c.values["vec_f"] > 1 and c.values["vec_w"] > 1)
    report = run(BATCH_CONVS, candidate.strategies)
    assert report.ok, report.text()
    [rule] = report.compile_report.rules
    assert [d.split("_dispatch_")[0] for d in rule.dispatches] == [name]


@pytest.mark.e2e
def test_im2col_takes_a_convolution_before_its_graph_level_pin_reaches_it(conv_listing: dict[str, Any]) -> None:
    """The fact the tuner's probe guards against: under IREE's im2col the plain convolution
    is rewritten before the preprocessing spec's pin reaches it (matched nothing), while the
    grouped one, which im2col leaves alone, keeps it."""
    found = {}
    for name in ("nchw_3x3", "grouped_dilated"):
        d = conv_listing[name]
        space = convolution_space(
            d.graph_op, d.graph_matcher, "avx2", CpuTarget(im2col_convs=True), "conv", d.pipeline, d.lowering_config
        )
        candidate = next(space.candidates(count=4, seed=0))
        found[name] = [
            d.split("_dispatch_")[0] for d in compile(BATCH_CONVS, candidate.strategies, "cpu").rules[0].dispatches
        ]
    assert found == {"nchw_3x3": [], "grouped_dilated": ["grouped_dilated"]}


QUANTIZED_MATMUL = """
func.func @qmm(%a: tensor<96x192xi8>, %b: tensor<192x320xi8>) -> tensor<96x320xi32> {
  %zp = arith.constant 0 : i32
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<96x320xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<96x320xi32>) -> tensor<96x320xi32>
  %r = linalg.quantized_matmul ins(%a, %b, %zp, %zp : tensor<96x192xi8>, tensor<192x320xi8>, i32, i32) outs(%f : tensor<96x320xi32>) -> tensor<96x320xi32>
  return %r : tensor<96x320xi32>
}
"""


@pytest.mark.e2e
def test_a_quantized_matmul_gets_no_space_and_says_a_pin_is_lost_with_it(tmp_path: Path) -> None:
    """ONNX QLinearMatMul reaches IREE as linalg.quantized_matmul, which IREE rewrites into a
    matmul and zero-point sums after the graph-level rules run: a pin on it reaches nothing
    by codegen (checked here), so it gets no space, and the reason says why."""
    from tdsl.strategies.cpu.space import tunable

    [found] = [op for op in linalg_ops(QUANTIZED_MATMUL) if op.name == "linalg.quantized_matmul"]
    view = OpView.of(found)
    assert "quantized matmul" in tunable(view) and "lost with the op" in tunable(view)
    pin = GraphCpuLowering(
        name="qpin", distribution=[32, 64, 0], vector_common_parallel=[4, 16, 0], vector_reduction=[0, 0, 4]
    )
    payload = tmp_path / "qmm.mlir"
    payload.write_text(QUANTIZED_MATMUL)
    [rule] = compile(
        payload,
        StrategySet(name="q", targets=[CpuTarget()], rules=[Rule(target="cpu", match=matcher_for(view), strategy=pin)]),
        "cpu",
    ).rules
    assert not rule.dispatches


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 600),
    n=st.integers(1, 3000),
    k=st.integers(1, 512),
    threads=st.integers(1, 64),
    batch=st.sampled_from([0, 1, 3]),
)
def test_every_contraction_candidate_gives_every_thread_a_workgroup(
    m: int, n: int, k: int, threads: int, batch: int
) -> None:
    """Tuned for N threads, a point makes at least N workgroups (as many as the smallest
    tiles make, where the op has less work): no thread idles on a tuned op."""
    view = _view(m, n, k, batch=batch)
    space = contraction_space(view, matcher_for(view), "avx2", CpuTarget(), "op0", threads=threads)
    lanes = 8  # f32 on AVX2: the smallest tiles are one row (and batch) by one vector of columns
    need = min(threads, (batch or 1) * m * -(-n // lanes))
    named = [c.name for c in space.constraints if "workgroups_for" in c.name]
    assert named == ([f"at_least_{need}_workgroups_for_{threads}_threads"] if need > 1 else [])
    for c in space.candidates(count=8, seed=threads):
        wg = c.strategies.rules[0].strategy.distribution
        count = 1
        for size, tile in zip(view.loop_sizes, wg):
            count *= -(-size // tile) if tile else 1
        assert count >= need
