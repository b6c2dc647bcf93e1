"""The gfx942 chooser without compiling: convolutions without a batch loop, strided and
dilated, in any layout; contractions with multi-loop groups in any loop order; the cost
model's choice on small problems (M = 128) against the earlier fallback and IREE's default;
and, over generated shapes, every chooser output passes tdsl's own gfx942 validation with
LDS, registers and threads within the budget."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tdsl import AmdGpuTarget, ContractionMatch, GpuLowering, Rule, StrategySet, TdslError
from tdsl.errors import StrategyError
from tdsl.strategies.gpu import Contraction, Convolution, Convolution2d, Gemm, Tiling, choose, estimate
from tdsl.strategies.gpu.chooser import MAX_VGPRS, best_tiling, conv_rule_for, rule_for
from tdsl.targets import GFX942
from tdsl.targets.amdgpu_resources import LdsProblem

PROPERTY = settings(
    max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _validated(rule: Rule) -> GpuLowering:
    """The rule in a gfx942 set (which runs the target checks); its configuration."""
    StrategySet(name="chosen", targets=[AmdGpuTarget()], rules=[rule])
    assert isinstance(rule.strategy, GpuLowering)
    return rule.strategy


def _within_budget(problem: Contraction | Convolution, lowering: GpuLowering) -> None:
    gemm = problem.gemm()
    tiling = best_tiling(gemm)
    assert tiling is not None and list(tiling.workgroup) == list(lowering.workgroup)
    guess = estimate(gemm, tiling)
    assert guess.lds_bytes <= GFX942.lds_bytes_per_workgroup and guess.vgprs <= MAX_VGPRS
    assert lowering.thread_count() == guess.subgroups * 64 <= GFX942.max_workgroup_size
    assert lowering.prefetch_num_stages == (2 if guess.k_iterations >= 3 else 0)


# --- convolutions --------------------------------------------------------------------------------


def test_batchless_strided_nchw_convolution_is_an_implicit_gemm_over_its_own_loops() -> None:
    """ResNet's stride-2 3x3 convolution as codegen sees it: loops (f, oh, ow, c, kh, kw)."""
    conv = Convolution(
        (), (16, 16), (64,), (3, 3), (32,), "f32", "f32", "f32", "foocww", strides=(2, 2), dilations=(1, 1)
    )
    assert conv.gemm() == Gemm(
        ("m", "n", "n", "k"), (64, 16, 16, 288), "f32", "f32", "f32"
    )  # NCHW: the filter is the lhs
    lowering = _validated(conv_rule_for(conv, "c"))
    assert lowering.use_igemm_convolution and lowering.mma_kind == "MFMA_F32_16x16x4_F32"
    assert len(lowering.workgroup) == 4 and lowering.workgroup[3] == 0 and lowering.padding is None
    assert conv.match().strides == ((2, 2),) and conv.match().batch == ((),)
    _within_budget(conv, lowering)


def test_dilated_nhwc_convolution_and_the_2d_shorthand_agree() -> None:
    plain = Convolution2d(2, 32, 32, 128, 3, 3, 64, "f16", "f16", "f32")
    general = plain.general()
    assert general.gemm() == Gemm(("b", "m", "m", "n", "k"), (2, 32, 32, 128, 576), "f16", "f16", "f32")
    assert choose(plain, "a") == choose(general, "a")
    dilated = Convolution((), (28, 28), (96,), (3, 3), (48,), "f16", "f16", "f32", "oofwwc", dilations=(2, 2))
    lowering = _validated(conv_rule_for(dilated, "d"))
    assert lowering.mma_kind is not None and len(lowering.workgroup) == 4 and lowering.use_igemm_convolution
    _within_budget(dilated, lowering)


def test_input_channels_that_no_intrinsic_divides_pad_the_im2col_k() -> None:
    """ResNet's first convolution: K = 3 x 3 x 3 = 27, no multiple of the intrinsic's 4."""
    conv = Convolution(
        (), (32, 32), (32,), (3, 3), (3,), "f32", "f32", "f32", "foocww", strides=(2, 2), dilations=(1, 1)
    )
    lowering = _validated(conv_rule_for(conv, "first"))
    assert lowering.padding is not None and lowering.padding[-1] % 4 == 0 and lowering.padding[-1] >= 4
    assert all(p > 0 for p in lowering.padding)


def test_what_the_implicit_gemm_cannot_express_is_named() -> None:
    depthwise = Convolution((1,), (56, 56), (), (3, 3), (), "f32", "f32", "f32", "boowwd", depth=(64,))
    with pytest.raises(TdslError, match=r"Convolution.output_channel: expected at least one loop .* received \[\]"):
        choose(depthwise, "dw")
    with pytest.raises(
        TdslError,
        match=r"Convolution.loop_order: expected 2 'o' loop\(s\) for output_image \[8, 8\], received 'foccww'",
    ):
        Convolution((), (8, 8), (4,), (3, 3), (4,), "f32", "f32", "f32", "foccww").gemm()
    mixed = Convolution((), (8, 8), (32,), (3, 3), (32,), "f16", "f16", "f16", "foocww")
    with pytest.raises(TdslError, match=r"no MFMA intrinsic of gfx942 takes f16 x f16 -> f16"):
        choose(mixed, "m")


# --- contractions ----------------------------------------------------------------------------


def test_a_strided_1x1_convolution_is_a_contraction_with_two_m_loops() -> None:
    """ResNet's stride-2 1x1 convolution after IREE: loops (n, m, m, k) = (64, 16, 16, 32)."""
    problem = Contraction((), (16, 16), 64, 32, "f32", "f32", "f32", loop_order="nmmk")
    assert problem.gemm() == Gemm(("n", "m", "m", "k"), (64, 16, 16, 32), "f32", "f32", "f32")
    rule = rule_for(problem, "mm")
    assert (
        isinstance(rule.match, ContractionMatch)
        and rule.match.loop_order == "nmmk"
        and rule.match.loop_roles() == tuple("nmmk")
    )
    lowering = _validated(rule)
    assert lowering.workgroup[3] == 0 and lowering.reduction is not None and lowering.reduction[3] > 0
    assert lowering.workgroup[2] % 16 == 0  # the innermost m loop holds whole intrinsics
    _within_budget(problem, lowering)


def test_loop_orders_spell_each_loop_or_each_group() -> None:
    assert Contraction((2,), (4, 8), 32, 64, "f16", "f16", "f32").roles() == tuple("bmmnk")
    assert Contraction((2,), 16, 32, (4, 64), "f16", "f16", "f32", loop_order="mbknk").roles() == tuple("mbknk")
    assert Contraction((), 16, 32, 64, "f16", "f16", "f32", loop_order="nmk").match().loop_order == "nmk"
    assert Contraction((), 16, 32, 64, "f16", "f16", "f32").match().loop_order is None
    assert Contraction((), (4, 8), 32, 64, "f16", "f16", "f32", loop_order="mnkm").roles() == tuple("mnkm")
    with pytest.raises(
        TdslError, match=r"expected 2 'm' loop\(s\) \(the m group has sizes \[4, 8\]\), received 'mnkk'"
    ):
        Contraction((), (4, 8), 32, 64, "f16", "f16", "f32", loop_order="mnkk").roles()
    with pytest.raises(TdslError, match=r"the chooser needs at least one m loop"):
        choose(Contraction((), (), 32, 64, "f16", "f16", "f32"), "mv")


def test_contraction_matchers_take_a_loop_order_with_multi_loop_groups() -> None:
    match = ContractionMatch(
        lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=[16, 16], n=[64], k=[32], loop_order="nmmk"
    )
    assert match.loop_roles() == ("n", "m", "m", "k")
    with pytest.raises(
        StrategyError, match=r"m: expected 1 dimension\(s\), one per 'm' of loop_order 'nmk', received \[\[16, 16\]\]"
    ):
        ContractionMatch(
            lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=[16, 16], n=[64], k=[32], loop_order="nmk"
        )
    with pytest.raises(StrategyError, match=r"loop_order: expected the roles of the op's loops in order"):
        ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", m=[16], n=[64], k=[32], loop_order="mmn")


def test_lds_counts_intrinsics_only_on_the_innermost_k_loop() -> None:
    two_k = LdsProblem(("m", "n", "k", "k"), (32, 32, 0, 0), (0, 0, 1, 4), (0, 1), 4, 4, 4, 65536)
    one_k = LdsProblem(("m", "n", "k"), (32, 32, 0), (0, 0, 4), (0, 1), 4, 4, 4, 65536)
    assert two_k.estimate() == one_k.estimate()


# --- the cost model ----------------------------------------------------------------------------


@pytest.mark.parametrize("types, iree_reduction", [(("f32", "f32", "f32"), 16), (("f16", "f16", "f32"), 8)])
def test_m128_gets_more_mfma_work_per_k_iteration_than_the_old_fallback(
    types: tuple[str, str, str], iree_reduction: int
) -> None:
    """128x768x768: the earlier chooser fell back to a 32x32 workgroup with a reduction of 4
    intrinsics (48 K iterations of 4 MFMAs for f32); IREE's default takes 64x128 (12
    workgroups). The cost model keeps enough workgroups and deepens the reduction."""
    problem = Contraction((), 128, 768, 768, *types)
    gemm = problem.gemm()
    chosen = best_tiling(gemm)
    assert chosen is not None
    intrinsic = chosen.intrinsic
    old = Tiling(intrinsic, (32, 32, 0), (1, 1, 0), (0, 0, 4))
    iree = Tiling(intrinsic, (64, 128, 0), (2, 4, 0), (0, 0, iree_reduction))
    ours, before, default = (estimate(gemm, t) for t in (chosen, old, iree))
    assert ours.mfma_per_iteration >= 4 * before.mfma_per_iteration and ours.k_iterations < before.k_iterations
    assert ours.cycles < before.cycles and ours.cycles < default.cycles
    assert ours.workgroups >= default.workgroups and ours.waves_per_simd >= default.waves_per_simd
    assert ours.lds_bytes <= default.lds_bytes


def test_big_problems_get_big_tiles_and_iree_defaults_are_estimated_too() -> None:
    gemm = Contraction((), 4096, 4096, 4096, "f16", "f16", "f32").gemm()
    chosen = best_tiling(gemm)
    assert chosen is not None and chosen.workgroup[0] * chosen.workgroup[1] >= 64 * 128
    intrinsic = GFX942.intrinsic("MFMA_F32_16x16x16_F16")
    assert intrinsic is not None
    iree = Tiling(intrinsic, (128, 128, 0), (4, 4, 0), (0, 0, 4))
    assert estimate(gemm, chosen).cycles <= estimate(gemm, iree).cycles
    assert "workgroups" in estimate(gemm, chosen).line()


# --- properties over shapes ---------------------------------------------------------------------

SIZES = st.sampled_from([1, 3, 7, 10, 16, 24, 32, 48, 64, 96, 100, 128, 196, 256, 384, 768, 1000, 1024])
TYPES = st.sampled_from([("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f32", "f32", "f32"), ("i8", "i8", "i32")])


@st.composite
def contractions(draw: st.DrawFn) -> Contraction:
    groups = {
        role: tuple(draw(st.lists(SIZES, min_size=lo, max_size=hi)))
        for role, lo, hi in (("b", 0, 2), ("m", 1, 2), ("n", 1, 2), ("k", 1, 2))
    }
    letters = [role for role, sizes in groups.items() for _ in sizes]
    order = "".join(draw(st.permutations(letters)))
    return Contraction(groups["b"], groups["m"], groups["n"], groups["k"], *draw(TYPES), loop_order=order)


@st.composite
def convolutions(draw: st.DrawFn) -> Convolution:
    spatial = draw(st.integers(1, 3))
    groups = {
        "b": tuple(draw(st.lists(st.sampled_from([1, 2, 4]), max_size=1))),
        "o": tuple(draw(st.lists(SIZES, min_size=spatial, max_size=spatial))),
        "f": (draw(SIZES),),
        "w": tuple(draw(st.lists(st.sampled_from([1, 3, 5, 7]), min_size=spatial, max_size=spatial))),
        "c": (draw(SIZES),),
    }
    parallel = "".join(draw(st.permutations([letter for letter in "bof" for _ in groups[letter]])))
    reduction = "".join(draw(st.permutations([letter for letter in "wc" for _ in groups[letter]])))
    strides = tuple(draw(st.lists(st.integers(1, 3), min_size=spatial, max_size=spatial)))
    dilations = tuple(draw(st.lists(st.integers(1, 3), min_size=spatial, max_size=spatial)))
    a, b, c = draw(st.sampled_from([("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f32", "f32", "f32")]))
    return Convolution(
        groups["b"],
        groups["o"],
        groups["f"],
        groups["w"],
        groups["c"],
        a,
        b,
        c,
        parallel + reduction,
        strides=strides,
        dilations=dilations,
    )


@PROPERTY
@given(contractions())
@pytest.mark.e2e
def test_every_contraction_choice_passes_gfx942_validation(problem: Contraction) -> None:
    lowering = _validated(rule_for(problem, "p"))
    assert lowering.mma_kind is not None  # every drawn element type has an intrinsic
    _within_budget(problem, lowering)
    gemm = problem.gemm()
    for i, role in enumerate(gemm.roles):
        if role == "k":
            assert lowering.workgroup[i] == 0
        elif lowering.padding is None:
            assert gemm.sizes[i] % lowering.workgroup[i] == 0


@PROPERTY
@given(convolutions())
@pytest.mark.e2e
def test_every_convolution_choice_passes_gfx942_validation(problem: Convolution) -> None:
    lowering = _validated(conv_rule_for(problem, "p"))
    gemm = problem.gemm()
    assert (
        lowering.use_igemm_convolution
        and len(lowering.workgroup) == len(gemm.roles) == sum(1 for x in problem.loop_order if x in "bof") + 1
    )
    _within_budget(problem, lowering)
    if lowering.padding is not None:
        assert len(lowering.padding) == len(lowering.workgroup) and min(lowering.padding) > 0
