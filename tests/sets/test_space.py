"""Knobs in strategy fields and the search spaces they make (tdsl.model.knobs, tdsl.sets.space)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdsl import (
    AmdGpuTarget,
    ContractionMatch,
    CpuTarget,
    GpuLowering,
    GraphCpuLowering,
    Rule,
    StrategyError,
    StrategySet,
    dump,
    render,
)
from tdsl import (
    load as tdsl_load,
)
from tdsl.model.knobs import Choice, IntRange, KnobError, KnobTuple, PowersOfTwo
from tdsl.sets.space import Constraint, Space

F32 = dict(lhs_type="f32", rhs_type="f32", output_type="f32")


def cpu_space(constraints=()) -> Space:
    lowering = GraphCpuLowering(
        name="mm",
        distribution=[PowersOfTwo("wg_m", 8, 64), Choice("wg_n", [64, 128]), 0],
        vector_common_parallel=[Choice("vec_m", [4, 8]), 16, 0],
        vector_reduction=[0, 0, IntRange("k", 8, 32, step=8)],
    )
    rule = Rule(target="cpu", match=ContractionMatch(**F32, m=[256], n=[128], k=[64]), strategy=lowering)
    template = StrategySet(name="mm_space", targets=[CpuTarget(data_tiling=True)], rules=[rule])
    return Space(template, constraints)


def test_knob_values() -> None:
    assert PowersOfTwo("p", 4, 32).values() == (4, 8, 16, 32)
    assert IntRange("r", 3, 20, step=1, multiple_of=4).values() == (4, 8, 12, 16, 20)
    assert IntRange("r", 0, 10, step=5).values() == (0, 5, 10)
    assert KnobTuple("t", [Choice("a", [1, 2]), Choice("b", [3])]).values() == ([1, 3], [2, 3])
    for bad in (
        lambda: PowersOfTwo("p", 3, 8),
        lambda: IntRange("r", 5, 1),
        lambda: Choice("c", []),
        lambda: Choice("not a name", [1]),
    ):
        with pytest.raises(KnobError):
            bad()


def test_space_size_enumerates_and_validates_every_candidate() -> None:
    space = cpu_space()
    assert [k.name for k in space.knobs] == ["wg_m", "wg_n", "vec_m", "k"]
    assert space.size == 4 * 2 * 4 * 2
    candidates = list(space.candidates())
    assert len(candidates) + space.pruned.total == space.size
    seen = set()
    for c in candidates:
        rule = c.strategies.rules[0]
        assert rule.strategy.distribution[:2] == (c.values["wg_m"], c.values["wg_n"])
        assert rule.strategy.vector_reduction[2] == c.values["k"]
        assert c.strategies.knobs() == {}
        seen.add(dump(c.strategies))
    assert len(seen) == len(candidates)  # every candidate is a different set
    # deterministic order
    assert [c.values for c in cpu_space().candidates()] == [c.values for c in candidates]


def test_constraints_prune_and_are_counted() -> None:
    space = cpu_space(
        [Constraint("vector_divides_workgroup", lambda v: v["wg_m"] % v["vec_m"] == 0 and v["wg_m"] >= 2 * v["vec_m"])]
    )
    kept = list(space.candidates())
    assert all(c.values["wg_m"] >= 2 * c.values["vec_m"] for c in kept)
    assert space.pruned.by_constraint["vector_divides_workgroup"] == sum(
        1 for v in space.assignments() if not (v["wg_m"] % v["vec_m"] == 0 and v["wg_m"] >= 2 * v["vec_m"])
    )
    assert space.pruned.lines()[0].endswith("pruned by constraint vector_divides_workgroup")


def test_seeded_sampling_is_reproducible() -> None:
    space = cpu_space()
    a, b = space.sample(5, seed=3), space.sample(5, seed=3)
    assert a == b and len({i for i, _ in a}) == 5
    assert space.sample(5, seed=4) != a
    assert len(space.sample(10_000, seed=0)) == space.size


def test_a_set_with_knobs_does_not_render_or_dump() -> None:
    template = cpu_space().template
    for action in (lambda: render(template, "cpu"), lambda: dump(template)):
        with pytest.raises(StrategyError, match="knob 'wg_m'"):
            action()


def test_structural_validation_refuses_a_knob_no_value_of_which_fits() -> None:
    with pytest.raises(StrategyError, match="distribution"):
        GraphCpuLowering(name="mm", distribution=[Choice("bad", ["x", "y"]), 64, 0])
    # one value fits: accepted, the others are pruned per candidate
    lowering = GraphCpuLowering(name="mm", distribution=[Choice("some", [-1, 16]), 64, 0])
    assert lowering.distribution[0] == 16


def test_two_knobs_of_one_name_must_agree() -> None:
    with pytest.raises(StrategyError, match="one knob per name"):
        GraphCpuLowering(name="mm", distribution=[Choice("t", [8, 16]), Choice("t", [32]), 0])
    shared = GraphCpuLowering(name="mm", distribution=[Choice("t", [8, 16]), Choice("t", [8, 16]), 0])
    assert (
        Space(
            StrategySet(
                name="s",
                targets=[CpuTarget()],
                rules=[Rule(target="cpu", match=ContractionMatch(**F32), strategy=shared)],
            )
        ).size
        == 2
    )


def test_gfx942_target_checks_prune_candidates() -> None:
    """Every candidate passes the gfx942 checks (LDS, MMA, subgroup) before compiling: tiles
    that overflow LDS are pruned with the field named."""
    lowering = GpuLowering(
        name="mm",
        pipeline="TileAndFuse",
        workgroup_size=[512, 1, 1],
        subgroup_size=64,
        workgroup=[PowersOfTwo("wg_m", 64, 1024), 128, 0],
        reduction=[0, 0, Choice("red", [2, 64])],
        subgroup=[2, 2, 0],
        mma_kind="MFMA_F32_16x16x4_F32",
        promote_operands=[0, 1],
    )
    rule = Rule(
        target="gfx942", match=ContractionMatch(**F32, batch=[], m=[4096], n=[4096], k=[4096]), strategy=lowering
    )
    space = Space(StrategySet(name="gpu", targets=[AmdGpuTarget()], rules=[rule]))
    kept = list(space.candidates())
    assert kept and space.pruned.by_validation
    assert set(space.pruned.by_validation) == {"workgroup_size", "reduction"}
    assert "LDS" in space.pruned.examples["reduction"]
    assert len(kept) + space.pruned.total == space.size


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(st.sampled_from([1, 2, 4, 8, 16, 32, 64]), min_size=1, max_size=4, unique=True),
    st.integers(0, 3),
    st.integers(1, 8),
    st.integers(0, 2**16),
)
def test_generated_spaces_count_and_sample(options: list[int], lo_exp: int, span: int, seed: int) -> None:
    """Generated spaces: size is the product of knob sizes, every assignment is either a
    validated candidate or counted as pruned, samples are distinct and seeded."""
    lowering = GraphCpuLowering(
        name="g",
        distribution=[Choice("a", options), PowersOfTwo("b", 2**lo_exp, 2 ** (lo_exp + 2)), 0],
        vector_common_parallel=[IntRange("c", 0, span), 1, 0],
    )
    space = Space(
        StrategySet(
            name="s",
            targets=[CpuTarget()],
            rules=[Rule(target="cpu", match=ContractionMatch(**F32), strategy=lowering)],
        )
    )
    assert space.size == math.prod(len(k) for k in space.knobs) == len(options) * 3 * (span + 1)
    kept = list(space.candidates())
    assert len(kept) + space.pruned.total == space.size
    drawn = space.sample(5, seed)
    assert drawn == space.sample(5, seed) and len({i for i, _ in drawn}) == min(5, space.size)


SPACE_YAML = """
name: mine
targets:
- {kind: llvm-cpu, name: cpu, data_tiling: true}
rules:
- target: cpu
  match: {kind: contraction, lhs_type: f32, rhs_type: f32, output_type: f32}
  strategy:
    kind: graph_cpu_lowering
    name: mine
    distribution: [{knob: powers_of_two, name: wg_m, lo: 16, hi: 64}, 64, 0]
    vector_common_parallel: [{knob: choice, name: vec_m, values: [4, 8]}, 16, 0]
    vector_reduction: [0, 0, {knob: int_range, name: k, lo: 4, hi: 8, step: 4}]
"""


def test_knobs_in_yaml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A YAML set with knob mappings is a space (tdsl tune --space takes it); rendering it is
    refused with the field; a malformed knob is one line naming its path."""
    from tdsl.errors import StrategyFileError
    from tdsl.sets.space import load_space

    path = tmp_path / "space.yaml"
    path.write_text(SPACE_YAML)
    space = load_space(str(path))
    assert [k.name for k in space.knobs] == ["wg_m", "vec_m", "k"] and space.size == 12
    assert len(list(space.candidates())) == 12
    with pytest.raises(StrategyError, match=r"distribution\[0\].*knob 'wg_m'"):
        render(tdsl_load(path), "cpu")
    path.write_text(SPACE_YAML.replace("knob: choice", "knob: choise"))
    with pytest.raises(StrategyError) as err:
        load_space(str(path))
    assert (
        len(str(err.value).splitlines()) == 1
        and "vector_common_parallel[0].knob" in str(err.value)
        and "choise" in str(err.value)
    )
    path.write_text(
        SPACE_YAML.replace("{knob: powers_of_two, name: wg_m, lo: 16, hi: 64}", "32")
        .replace("{knob: choice, name: vec_m, values: [4, 8]}", "8")
        .replace("{knob: int_range, name: k, lo: 4, hi: 8, step: 4}", "4")
    )
    with pytest.raises(StrategyFileError, match="at least one knob"):
        load_space(str(path))
