"""RHS panels (tdsl.strategies.cpu.layout_spaces.panel_space): a matmul whose RHS alone is packed into
``[N/N0, K, N0]`` panels, LHS and result in place (``DataLayout.lower_unpack``), the panel op
pinned -- which ops get the space, what its candidates are on generated shapes, and on the
compiler: one dispatch per matmul beside data tiling, constant weights packed at compile
time, numbers equal to IREE default's and numpy's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tdsl
from hypothesis import given, settings
from hypothesis import strategies as st
from tdsl import (
    ContractionMatch,
    CpuLowering,
    CpuTarget,
    DataLayout,
    Pack,
    PackGreedily,
    Rule,
    StrategySet,
    compile,
    render,
)
from tdsl.bindings import linalg_ops
from tdsl.compiler.ops import OpView, matcher_for
from tdsl.errors import StrategyError
from tdsl.strategies.cpu.layout_spaces import PANEL_MAPS, panel_space, panelable
from test_cpu_spaces import UNIT_BATCH, _view


def test_which_ops_get_a_panel_space() -> None:
    """2-D matmuls (plain or transposed B) and batch-1 batch matmuls whose N is a multiple of
    a vector; not a matrix-vector product, an N off the vector, i8 or a real batch."""
    for view in (_view(96, 64, 128), _view(96, 64, 128, transposed_b=True), _view(64, 256, 256, batch=1)):
        assert panelable(view, matcher_for(view), "avx512") == ""
    assert "matrix-vector" in panelable(_view(1, 256, 256), matcher_for(_view(1, 256, 256)), "avx512")
    padded = _view(96, 1000, 128)  # 63 panels of 16 (1008 columns) on AVX-512; 125 x 8 on AVX2
    assert (
        panelable(padded, matcher_for(padded), "avx512") == "" and panelable(padded, matcher_for(padded), "avx2") == ""
    )
    prime = _view(2999, 256, 64)
    assert "M = 2999 has no workgroup tile" in panelable(prime, matcher_for(prime), "avx512")
    odd = _view(96, 20, 128)  # 16 or 32 columns would pad 20 by 60 %
    assert "not a multiple of a vector (16 lanes) and panels of 16 or 32 would pad it by more than 12.5%" in panelable(
        odd, matcher_for(odd), "avx512"
    )
    one = _view(8, 8, 16)  # one panel of 8 on AVX2: the RHS as it is (the tiles of a panel loop would match nothing)
    assert "N = 8 fits one panel of 8 lanes" in panelable(one, matcher_for(one), "avx2")
    two = _view(8, 16, 16)  # two panels of 8, not one of 16
    assert panelable(two, matcher_for(two), "avx2") == ""
    assert {v["n0"] for v in panel_space(two, matcher_for(two), "avx2", CpuTarget(), "op0").assignments()} == {8}
    batch = _view(64, 256, 256, batch=4)
    assert "batch" in panelable(batch, matcher_for(batch), "avx512")
    with pytest.raises(ValueError, match="not a multiple"):
        panel_space(odd, matcher_for(odd), "avx512", CpuTarget(), "op0")
    [i8] = [
        OpView.of(op)
        for op in linalg_ops("""
func.func @f(%a: tensor<64x128xi8>, %b: tensor<128x64xi8>, %c: tensor<64x64xi32>) -> tensor<64x64xi32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x128xi8>, tensor<128x64xi8>) outs(%c : tensor<64x64xi32>) -> tensor<64x64xi32>
  return %r : tensor<64x64xi32>
}""")
    ]
    assert "i8 x i8 x i32 have no panel space" in panelable(i8, matcher_for(i8), "avx512")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    st.integers(2, 3000),
    st.one_of(st.integers(1, 200).map(lambda v: 16 * v), st.integers(8, 3200)),
    st.integers(1, 3000),
    st.sampled_from(["mk_kn", "mk_nk", "batch-1"]),
    st.sampled_from(["avx512", "avx2"]),
)
def test_generated_matmuls_panel_candidates(m: int, n: int, k: int, form: str, isa: str) -> None:
    """On generated shapes: the seeds are in the space; every candidate validates on the
    base's target (data tiling on), packs the RHS alone in whole-vector panels -- that
    divide N (the result's unpack lowered) or pad it by at most an eighth (the unpack
    kept) --, transposes the RHS pack only for a K x N RHS, folds a
    unit batch first, and pins exactly the panel op of its own width (M x panels x N0 x K,
    the panel maps) with register tiles inside the workgroup tiles, the panels and the
    accumulators, workgroup tiles dividing the rows and panels (a remainder measured 3x slower)."""
    view = _view(m, n, k, form == "mk_nk", batch=1 if form == "batch-1" else 0)
    lanes = 16 if isa == "avx512" else 8
    widths = [w for w in (lanes, 2 * lanes) if n > w and (n % w == 0 or -n % w <= n / 8)]  # at least two panels
    row_tiles = m <= 512 or any(m % d == 0 for d in range(8, 1025))
    if (form == "batch-1" and k == 1) or not row_tiles or not widths:
        assert panelable(view, matcher_for(view), isa)
        return
    space = panel_space(view, matcher_for(view), isa, CpuTarget(data_tiling=True), "op0")
    assert space.seeds and all(space.index_of(v) < space.size for v in space.seeds)
    candidates = list(space.candidates(count=12, seed=m + n + k))
    assert candidates or space.pruned.total
    for c in candidates:
        target, (layout, tiles) = c.strategies.targets[0], c.strategies.rules
        assert target.data_tiling and target == CpuTarget(data_tiling=True)
        v = c.values
        n0 = v["n0"]
        panels = -(-n // n0)
        assert layout.strategy.pack.matmul_packed_sizes == (0, n0, 0) and n0 % lanes == 0 and n0 in widths
        assert n % n0 == 0 or panels * n0 - n <= n / 8
        assert layout.strategy.lower_unpack == (n % n0 == 0) and not layout.strategy.lower_packs
        assert [t.operand for t in layout.strategy.pack_transposes] == ([] if form == "mk_nk" else ["rhs"])
        assert layout.strategy.fold_unit_dims == (form == "batch-1")
        assert (
            tiles.match.maps == PANEL_MAPS
            and tiles.match.m == ((m,),)
            and tiles.match.n == ((panels, n0),)
            and tiles.match.k == ((k,),)
        )
        assert tiles.strategy.distribution == (v["wg_m"], v["wg_n"], n0, 0)
        assert tiles.strategy.vector_common_parallel == (v["vec_m"], v["vec_n"], n0, 0)
        rows, cols = min(v["wg_m"], m), min(v["wg_n"], panels)  # a workgroup's tile
        assert m % rows == 0 and panels % cols == 0 and rows % v["vec_m"] == 0 and cols % v["vec_n"] == 0
        assert v["vec_m"] * v["vec_n"] * n0 // lanes <= (24 if isa == "avx512" else 12)


def test_lower_unpack_is_checked() -> None:
    """lower_unpack needs a packed result, is not with lower_packs, and not with a partial
    explicit pack; one line each."""
    DataLayout(name="p", pack=PackGreedily(matmul_packed_sizes=[0, 16, 0]), lower_unpack=True)
    for bad, message in (
        (
            {"pack": PackGreedily(matmul_packed_sizes=[0, 0, 16])},
            "p.lower_unpack: expected False when the result is not packed",
        ),
        (
            {"pack": PackGreedily(matmul_packed_sizes=[0, 16, 0]), "lower_packs": True},
            "p.lower_unpack: expected False when lower_packs is set",
        ),
        ({"pack": Pack(packed_sizes=[0, 16, 0])}, "p.lower_unpack: expected False unless every loop is packed"),
        ({}, "p.lower_unpack: expected a 'pack' to act on"),
    ):
        with pytest.raises(StrategyError, match=message):
            DataLayout(name="p", lower_unpack=True, **bad)


def test_data_tiling_leaves_the_panel_op_to_its_codegen_rule() -> None:
    """A codegen-time lowering of the panel op validates beside data tiling (its N loops are
    apart in the RHS, so IREE cannot collapse them and sets no encoding), while one of a
    matmul whose loops collapse (two M loops in order) is still refused."""
    target = CpuTarget(data_tiling=True)
    tiles = CpuLowering(
        name="t", distribution=[64, 2, 16, 0], vector_common_parallel=[8, 2, 16, 0], vector_reduction=[0, 0, 0, 1]
    )
    panels = ContractionMatch(
        lhs_type="f32", rhs_type="f32", output_type="f32", maps=PANEL_MAPS, batch=[], m=[64], n=[4, 16], k=[32]
    )
    StrategySet(name="s", targets=[target], rules=[Rule(target="cpu", match=panels, strategy=tiles)])
    two_m = ContractionMatch(
        lhs_type="f32",
        rhs_type="f32",
        output_type="f32",
        maps=("(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)"),
        batch=[],
        m=[4, 64],
        n=[32],
        k=[16],
    )
    flat = CpuLowering(
        name="t", distribution=[1, 64, 16, 0], vector_common_parallel=[1, 8, 16, 0], vector_reduction=[0, 0, 0, 1]
    )
    with pytest.raises(
        StrategyError, match="data_tiling: expected False when a codegen-time cpu_lowering configures a matmul"
    ):
        StrategySet(name="s", targets=[target], rules=[Rule(target="cpu", match=two_m, strategy=flat)])


def test_a_panel_candidate_renders_the_unpack_lowering_alone() -> None:
    view = _view(384, 128, 384)
    space = panel_space(view, matcher_for(view), "avx512", CpuTarget(data_tiling=True), "op0")
    rendered = render(space.candidate(space.seeds[0]), "cpu")
    preprocessing, tuning = rendered.script("preprocessing"), rendered.script("tuning_spec")
    assert preprocessing is not None and tuning is not None
    assert "matmul_packed_sizes = [0, 16, 0]" in preprocessing.text
    assert (
        preprocessing.text.count("transform.structured.lower_unpack") == 1
        and "transform.structured.lower_pack " not in preprocessing.text
    )
    assert "op0_tiles" in tuning.text


WEIGHTED = """\
func.func @mm(%a: tensor<96x64xf32>) -> tensor<96x48xf32> {{
  %b = arith.constant dense<{weights}> : tensor<64x48xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x48xf32>) -> tensor<96x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<96x64xf32>, tensor<64x48xf32>) outs(%f : tensor<96x48xf32>) -> tensor<96x48xf32>
  return %r : tensor<96x48xf32>
}}
"""


def _seed_candidate(path: Path, function: str, kind: str = "contraction") -> StrategySet:
    view = next(OpView.of(op) for op in linalg_ops(path.read_text()) if op.function == function and op.kind == kind)
    space = panel_space(view, matcher_for(view), "avx512", CpuTarget(data_tiling=True), "op0")
    return space.candidate(space.seeds[0])


@pytest.mark.compile
def test_panels_beside_data_tiling_run_one_dispatch_with_default_numbers(tmp_path: Path) -> None:
    """On a program with a batch-1 batch matmul (runtime RHS) and a plain matmul: the
    panel candidate of the first makes it a panel op with the pinned tiles -- one dispatch
    for its RHS panel pack and one for the op, no LHS pack, no unpack -- while data tiling
    takes the plain matmul (mmt4d); the outputs equal IREE default's."""
    strategies = _seed_candidate(UNIT_BATCH, "bmm")
    report = compile(UNIT_BATCH, strategies, "cpu", strict=True)
    applied = {o.strategy: o.dispatches for o in report.rules}
    assert all(applied.values()) and set(applied) == {"op0", "op0_tiles"}
    bmm = [d for d in report.dispatches if d.name.startswith("bmm_")]
    [panel] = applied["op0_tiles"]
    assert "matmul_like_128x24x16x256" in panel
    assert sorted(d.compute_ops for d in bmm) == [("linalg.generic",), ("linalg.pack",)], [
        (d.name, d.compute_ops) for d in bmm
    ]
    assert any(d.name.startswith("mm_") and "linalg.mmt4d" in d.compute_ops for d in report.dispatches)  # data tiling's
    assert tdsl.run(UNIT_BATCH, strategies).ok


@pytest.mark.compile
def test_constant_weights_are_packed_at_compile_time(tmp_path: Path) -> None:
    """With the RHS a constant, its panel pack runs at compile time: a call runs the panel
    op alone, one dispatch; the numbers equal IREE default's."""
    weights = np.random.default_rng(0).uniform(-1, 1, (64, 48)).astype(np.float32)
    path = tmp_path / "weighted.mlir"
    path.write_text(
        WEIGHTED.format(
            weights="[" + ", ".join("[" + ", ".join(f"{x:.6e}" for x in row) + "]" for row in weights) + "]"
        )
    )
    strategies = _seed_candidate(path, "mm")
    report = compile(path, strategies, "cpu", strict=True)
    assert [d.compute_ops for d in report.dispatches] == [("linalg.generic",)]
    assert "matmul_like_96x3x16x64" in report.dispatches[0].name
    a = np.random.default_rng(1).uniform(-1, 1, (96, 64)).astype(np.float32)
    run = tdsl.run(path, strategies, inputs=[a])
    assert run.ok and {c.reference for c in run.functions[0].comparisons} >= {"iree-default"}


PADDED = """\
func.func @mm(%a: tensor<40x24xf32>, %b: tensor<24x100xf32>) -> tensor<40x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x100xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<40x100xf32>) -> tensor<40x100xf32>
  %r = linalg.matmul ins(%a, %b : tensor<40x24xf32>, tensor<24x100xf32>) outs(%f : tensor<40x100xf32>) -> tensor<40x100xf32>
  return %r : tensor<40x100xf32>
}
"""


@pytest.mark.compile
def test_padded_panels_keep_the_unpack_and_the_numbers(tmp_path: Path) -> None:
    """N = 100 on AVX-512: 7 panels of 16 (112 columns, the last padded). Every seed pins
    the 40 x 7 x 16 x 24 panel op, the result's unpack drops the padding in a dispatch of
    its own, and the outputs equal IREE default's."""
    path = tmp_path / "padded.mlir"
    path.write_text(PADDED)
    view = next(OpView.of(op) for op in linalg_ops(PADDED) if op.kind == "contraction")
    space = panel_space(view, matcher_for(view), "avx512", CpuTarget(data_tiling=True), "op0")
    assert space.seeds
    for seed in space.seeds:
        strategies = space.candidate(seed)
        assert not strategies.rules[0].strategy.lower_unpack
        report = compile(path, strategies, "cpu", strict=True)
        [panel] = {o.strategy: o.dispatches for o in report.rules}["op0_tiles"]
        assert "matmul_like_40x7x16x24" in panel
        assert any("linalg.unpack" in d.compute_ops for d in report.dispatches)
        assert tdsl.run(path, strategies).ok
