"""Property tests over generated strategy sets, and the enumerations against the compiler.

* Every generated set (plain data, valid or mutated; :mod:`strategy_gen`) either validates
  and then renders and verifies for every target with rules, or raises a
  :class:`tdsl.StrategyError` whose problems are one line each and name a field path that
  exists in the input. Never any other exception; a bounded time per example.
  ``benchmarks/fuzz_strategies.py`` runs the same check for 10,000 examples.
* Every ``Literal`` of the model that the compiler parses lists values the pinned
  ``iree-base-compiler`` accepts (each parses in a tiny script) and the parser refuses a
  value outside it; where the compiler lists its values, the ``Literal`` is exactly that list.
"""

from __future__ import annotations

import re
import typing

import pytest
import strategy_gen as gen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tdsl import GFX942, bindings
from tdsl.errors import ParseFailure
from tdsl.model.codegen import CleanupPatterns, ContractionLowering, Mapping, TransposeLowering
from tdsl.model.element_types import ElementType
from tdsl.model.lowering import CpuPipeline, GpuPipeline

FUZZ = settings(
    max_examples=500,  # per run of the suite; benchmarks/fuzz_strategies.py draws 10,000
    deadline=5000,  # ms per example: validation plus rendering and verifying each target
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _assert_ok(data: gen.Data) -> None:
    outcome = gen.check(data)
    assert outcome.kind in ("verified", "rejected"), f"{outcome.kind}: {outcome.detail}\n{data!r}"


@FUZZ
@given(gen.any_sets())
@pytest.mark.e2e
def test_generated_sets_validate_and_verify_or_fail_with_one_line_errors(data: gen.Data) -> None:
    _assert_ok(data)


@settings(FUZZ, max_examples=500)
@given(gen.valid_sets())
@pytest.mark.e2e
def test_valid_sets_render_and_verify(data: gen.Data) -> None:
    _assert_ok(data)


@settings(FUZZ, max_examples=200)
@given(st.sampled_from(["cpu", "gfx942"]).flatmap(lambda t: gen.ops().flatmap(lambda op: gen.targeted_sets(op, t))))
def test_sets_targeted_at_one_op_render_and_verify(data: gen.Data) -> None:
    _assert_ok(data)


# --------------------------------------------------------------------------------------
# Enumerations against the pinned compiler.


def _values(literal: object) -> list[str]:
    return [str(v) for v in typing.get_args(literal)]


def _parse_error(text: str) -> str | None:
    try:
        bindings.parse(text)
    except ParseFailure as failure:
        return str(failure)
    return None


def _patterns_script(body: str) -> str:
    return (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @m(%f: !transform.any_op {transform.readonly}) {\n"
        f"    transform.apply_patterns to %f {{\n      {body}\n    }} : !transform.any_op\n"
        "    transform.yield\n  }\n}\n"
    )


def _attribute_script(attr: str) -> str:
    return f"module {{ func.func @f() attributes {{ x = {attr} }} {{ return }} }}"


def _listed(message: str) -> set[str]:
    """The values a parser error lists: ``[a, b]`` (enum keywords) or ``one of: a, b;``."""
    bracketed = re.search(r"enum values for attribute '\w+' \[([^\]]*)\]", message)
    if bracketed:
        return {v.strip() for v in bracketed.group(1).split(",")}
    listed = re.search(r"to be one of: ([^;]*);", message)
    assert listed, message
    return {v.strip() for v in listed.group(1).split(",")}


LOWERINGS = [
    (ContractionLowering, "transform.apply_patterns.vector.lower_contraction lowering_strategy = {}"),
    (TransposeLowering, "transform.apply_patterns.vector.lower_transpose lowering_strategy = {}"),
]


@pytest.mark.parametrize(("literal", "op"), LOWERINGS, ids=["contraction", "transpose"])
def test_vector_lowering_strategies_are_exactly_the_compilers(literal: object, op: str) -> None:
    for value in _values(literal):
        assert _parse_error(_patterns_script(op.format(value))) is None, value
    message = _parse_error(_patterns_script(op.format("not_a_strategy")))
    assert message is not None
    assert _listed(message) == set(_values(literal))


def test_cpu_pipelines_are_exactly_the_compilers() -> None:
    def script(p: str) -> str:
        return _attribute_script(f"#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<{p}>>")

    for value in _values(CpuPipeline):
        assert _parse_error(script(value)) is None, value
    message = _parse_error(script("NotAPipeline"))
    assert message is not None
    assert _listed(message) == set(_values(CpuPipeline))


def test_gpu_pipelines_are_ones_the_compiler_has() -> None:
    """A subset on purpose: GpuLowering's fields (subgroup, thread, subgroup_basis) are the
    TileAndFuse and VectorDistribute configurations; the other IREE pipelines (Default,
    Distribute, Vectorize, ...) read none of them."""

    def script(p: str) -> str:
        return _attribute_script(f"#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<{p}>>")

    for value in _values(GpuPipeline):
        assert _parse_error(script(value)) is None, value
    message = _parse_error(script("NotAPipeline"))
    assert message is not None
    assert set(_values(GpuPipeline)) <= _listed(message)


def test_mma_intrinsics_of_the_facts_are_the_compilers() -> None:
    def script(name: str) -> str:
        return _attribute_script(f"#iree_gpu.mma_layout<{name}>")

    for intrinsic in GFX942.mma_intrinsics:
        assert _parse_error(script(intrinsic.name)) is None, intrinsic.name
    message = _parse_error(script("MFMA_F32_1x1x1_F32"))
    assert message is not None
    assert {i.name for i in GFX942.mma_intrinsics} <= _listed(message)


def test_mappings_parse() -> None:
    attrs = [f"#gpu.{kind}<{dim}>" for kind, dim in (m.split("_") for m in _values(Mapping))]
    assert _parse_error(_attribute_script("[" + ", ".join(attrs) + "]")) is None
    assert _parse_error(_attribute_script("[#gpu.block<w>]")) is not None
    assert _parse_error(_attribute_script("[#gpu.bogus<x>]")) is not None


def test_cleanup_patterns_parse() -> None:
    spelled = {
        "tiling_canonicalization": "linalg.tiling_canonicalization",
        "for_loop_canonicalization": "scf.for_loop_canonicalization",
    }
    for value in _values(CleanupPatterns):
        assert _parse_error(_patterns_script(f"transform.apply_patterns.{spelled.get(value, value)}")) is None, value
    assert _parse_error(_patterns_script("transform.apply_patterns.not_a_pattern_set")) is not None


def test_element_types_parse() -> None:
    for value in _values(ElementType):
        assert _parse_error(f"module {{ func.func @f(%a: {value}) {{ return }} }}") is None, value
    assert _parse_error("module { func.func @f(%a: f31) { return } }") is not None
