"""Dynamic dimensions in typed matchers (issue 38): ``-1`` or ``"?"`` wherever IREE's
``transform.iree.match.dims_equal`` takes -1, validated, rendered as ``-1``, left out of
the sizes target checks compute with, and given by ``tdsl ops``' matcher for a dynamic op."""

from __future__ import annotations

import pytest
from tdsl import AttentionMatch, ContractionMatch, ConvolutionMatch, CpuLowering, Rule, StrategySet, render
from tdsl.bindings import TensorType
from tdsl.compiler.ops import OpView, matcher_for
from tdsl.errors import StrategyError
from tdsl.model.subsume import contraction_covers
from tdsl.targets import named


def test_question_mark_and_minus_one_are_a_dynamic_dimension() -> None:
    spelled = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", m=["?", 1024], n="?", k=1280)
    assert spelled.m == ((-1, 1024),) and spelled.n == ((-1,),)
    assert spelled == ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", m=[-1, 1024], n=-1, k=1280)
    one_of = ConvolutionMatch(lhs_type="f16", rhs_type="f16", output_type="f32", batch={"one_of": [["?"], [2]]})
    assert one_of.batch == ((-1,), (2,))
    maps = [
        "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)",
        "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)",
        "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5)",
        "(d0, d1, d2, d3, d4, d5) -> ()",
        "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)",
    ]
    attention = AttentionMatch(
        query_type="f16", key_type="f16", value_type="f16", output_type="f16", maps=maps, batch=[-1, 10]
    )
    assert attention.batch == ((-1, 10),)


def test_other_negative_sizes_are_refused_naming_the_dynamic_spelling() -> None:
    with pytest.raises(StrategyError) as err:
        ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", m=[-2])
    assert "expected a size, or -1 (or '?') for a dynamic dimension, received -2" in str(err.value)


def test_dynamic_dimensions_render_as_minus_one() -> None:
    rule = Rule(
        target="cpu",
        match=ContractionMatch(
            lhs_type="f32", rhs_type="f32", output_type="f32", operand_layout="mk_kn", batch=[], m="?", n=1024, k=1280
        ),
        strategy=CpuLowering(
            name="dyn", distribution=[32, 64, 0], vector_common_parallel=[8, 32, 0], vector_reduction=[0, 0, 1]
        ),
    )
    s = StrategySet(name="dyn", targets=[named("cpu")], rules=[rule])
    script = render(s, "cpu").script("tuning_spec")
    assert script is not None
    assert "transform.iree.match.dims_equal %l0_m, [-1] : !transform.param<i64>" in script.text


def test_checks_do_not_compute_with_a_dynamic_size() -> None:
    typed = {"lhs_type": "f16", "rhs_type": "f16", "output_type": "f32", "operand_layout": "mk_kn", "batch": []}
    dynamic = ContractionMatch(**typed, m=-1, n=1024, k=1280)
    assert dynamic.problem_sizes() is None
    assert dynamic.problem_dims(("m", "n", "k")) == [None, 1024, 1280]
    bounded = ContractionMatch(**typed, size_max=4096)
    assert not contraction_covers(bounded, dynamic)  # a dynamic M may be any size
    static = ContractionMatch(**typed, m=512, n=1024, k=1280)
    assert contraction_covers(bounded, static)


def test_the_ops_listing_matches_a_dynamic_op_with_minus_one() -> None:
    view = OpView(
        "linalg.matmul",
        "contraction",
        (TensorType((-1, 1280), "f32"), TensorType((1280, 1024), "f32"), TensorType((-1, 1024), "f32")),
        (-1, 1024, 1280),
        {"m": (0,), "n": (1,), "k": (2,)},
        maps=("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"),
    )
    found = matcher_for(view)
    assert isinstance(found, ContractionMatch)
    assert (found.m, found.n, found.k, found.operand_layout) == (((-1,),), ((1024,),), ((1280,),), "mk_kn")
