"""Composition: empty sets (IREE's default), combine() with explicit precedence, shadowed
rules reported at render time (tdsl.model.subsume), and short reprs of the gfx942 facts."""

from __future__ import annotations

import inspect
import pydoc
from pathlib import Path

import pytest
import tdsl.strategies.gpu as gpu
from tdsl import (
    AllOf,
    AmdGpuTarget,
    ConsumerMatch,
    ContractionMatch,
    ConvolutionMatch,
    CpuLowering,
    CpuTarget,
    DataLayout,
    FunctionMatch,
    OpNameMatch,
    PackGreedily,
    ProducerMatch,
    Rule,
    StrategyError,
    StrategySet,
    compile,
    render,
)
from tdsl.model.matchers import PackMatch
from tdsl.model.subsume import covers, leaf_covers, specificity
from tdsl.sets.strategy_set import combine
from tdsl.strategies.cpu import auto, head_split_fusion
from tdsl.strategies.cpu.fusion import head_transpose_fusion
from tdsl.strategies.gpu import library
from tdsl.targets import GFX942, MmaIntrinsic

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
F32 = {"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32"}


def _lowering(name: str) -> CpuLowering:
    return CpuLowering(
        name=name, distribution=[64, 64, 0], vector_common_parallel=[8, 8, 0], vector_reduction=[0, 0, 1]
    )


def _rule(name: str, match: object, target: str = "cpu") -> Rule:
    return Rule.model_validate({"target": target, "match": match, "strategy": _lowering(name)})


# --- empty sets --------------------------------------------------------------------------


def test_an_empty_set_renders_no_scripts_and_only_the_target_flags(tmp_path: Path) -> None:
    empty = StrategySet(name="empty", rules=[])
    for target in ("cpu", "gfx942"):
        rendered = render(empty, target)
        assert rendered.scripts == () and rendered.shadowed == ()
        assert rendered.flags(tmp_path) == list(empty.target(target).compile_flags())
    written = render(empty, "cpu").write(tmp_path)
    assert [p.name for p in written] == ["flags.txt"]


@pytest.mark.compile
def test_an_empty_set_compiles_with_iree_defaults_dispatches() -> None:
    report = compile(EXAMPLES / "mlp" / "payload.mlir", StrategySet(name="empty", rules=[]), "cpu")
    default = compile(EXAMPLES / "mlp" / "payload.mlir", None, "cpu")
    assert report.rules == () and report.warnings() == []
    assert [d.name for d in report.dispatches] == [d.name for d in default.dispatches]
    assert all(not d.applied_strategies and not d.layout_strategies for d in report.dispatches)
    assert "no rules for this target: IREE's default pipeline" in report.text()


# --- reprs -------------------------------------------------------------------------------


def test_gfx942_facts_have_short_reprs() -> None:
    assert repr(GFX942) == "AmdGpuArch('gfx942')"
    assert repr(MmaIntrinsic.from_name("MFMA_F32_16x16x16_F16")) == "MmaIntrinsic('MFMA_F32_16x16x16_F16')"
    assert repr(GFX942.model_copy(update={"compute_units": 228})) == "AmdGpuArch('gfx942', compute_units=228)"
    odd = MmaIntrinsic(name="odd", m=1, n=2, k=3, a_type="f16", b_type="f16", c_type="f32")
    assert "a_type='f16'" in repr(odd)  # not one from_name builds: every field
    assert "mma_intrinsics=<16 intrinsics>" in repr(GFX942.model_copy(update={"arch": "gfx_other"}))


@pytest.mark.parametrize(
    "function",
    [
        gpu.choose_contraction,
        gpu.choose_convolution,
        gpu.choose_intrinsic,
        gpu.rule_for,
        gpu.conv_rule_for,
        gpu.rules_for,
        library.standard_set,
        library.convolution_set,
    ],
    ids=lambda f: f.__name__,
)
def test_gpu_strategy_signatures_are_readable(function: object) -> None:
    assert len(str(inspect.signature(function))) < 200  # type: ignore[arg-type]
    assert len(pydoc.render_doc(function)) < 2000


def test_the_chooser_problem_types_are_exported_and_documented() -> None:
    assert gpu.Contraction is gpu.problems.Contraction and gpu.Convolution2d is gpu.problems.Convolution2d
    assert {"Contraction", "Convolution2d"} <= set(gpu.__all__)
    assert "Contraction(" in (gpu.__doc__ or "") and "Convolution2d(" in (gpu.__doc__ or "")
    problem = gpu.Contraction((), 4096, 4096, 4096, "f16", "f16", "f32")
    assert repr(problem) == "Contraction((), 4096, 4096, 4096, 'f16', 'f16', 'f32')"
    assert eval(repr(problem), {"Contraction": gpu.Contraction}) == problem  # noqa: S307 - our own repr
    conv = gpu.Convolution2d(2, 56, 56, 64, 3, 3, 64, "f16", "f16", "f32", "nchw")
    assert eval(repr(conv), {"Convolution2d": gpu.Convolution2d}) == conv  # noqa: S307
    assert library.standard_set().rules == library.standard_set(library.REFERENCE_PROBLEMS).rules


# --- subsumption -------------------------------------------------------------------------


def test_contraction_cover_reads_every_constraint() -> None:
    general = ContractionMatch(**F32)
    exact = ContractionMatch(**F32, batch=[], m=128, n=128, k=512, operand_layout="mk_kn")
    assert covers(general, exact) and not covers(exact, general)
    assert not covers(ContractionMatch(lhs_type="f16", rhs_type="f16", output_type="f32"), exact)
    assert covers(ContractionMatch(**F32, m={"one_of": [64, 128]}), exact)
    assert not covers(
        ContractionMatch(**F32, m={"one_of": [64, 128]}), ContractionMatch(**F32, m={"one_of": [128, 256]})
    )
    bounded = ContractionMatch(**F32, batch=[], operand_layout="mk_kn", k_min=128)
    assert covers(bounded, exact)  # K = 512 >= 128
    assert not covers(bounded, ContractionMatch(**F32, batch=[], operand_layout="mk_kn", k=64))
    assert not covers(bounded, ContractionMatch(**F32, batch=[], operand_layout="mk_kn"))  # K unknown
    small = ContractionMatch(**F32, batch=[], operand_layout="mk_kn", size_max=256)
    assert not covers(small, exact) and covers(
        small, ContractionMatch(**F32, batch=[], operand_layout="mk_kn", m=64, n=64, k=64)
    )
    assert not covers(ContractionMatch(**F32, operand_layout="mk_nk", batch=[]), exact)


def test_other_leaf_kinds_and_all_of() -> None:
    mm = OpNameMatch(names="linalg.matmul")
    assert covers(OpNameMatch(names=["linalg.matmul", "linalg.batch_matmul"]), mm)
    assert not covers(mm, OpNameMatch(names=["linalg.matmul", "linalg.batch_matmul"]))
    assert not leaf_covers(mm, ContractionMatch(**F32))  # different kinds: never certain
    assert covers(
        ConsumerMatch(names=["tensor.expand_shape", "linalg.generic"]), ConsumerMatch(names="tensor.expand_shape")
    )
    conv = {"batch": [2], "output_image": [32, 32], "output_channel": [64], "filter": [3, 3], "input_channel": [32]}
    assert covers(ConvolutionMatch(**F32), ConvolutionMatch(**F32, **conv))
    assert not covers(ConvolutionMatch(**F32, **conv), ConvolutionMatch(**F32))
    pack = PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[6, 1])
    assert covers(pack, pack) and not covers(
        pack, PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[16, 1])
    )
    loaded = ProducerMatch(names="iree_tensor_ext.dispatch.tensor.load")
    assert covers(ProducerMatch(names=["iree_tensor_ext.dispatch.tensor.load", "linalg.generic"]), loaded)
    assert not covers(loaded, ProducerMatch(names="linalg.generic")) and not covers(
        loaded, ProducerMatch(operand=1, names="iree_tensor_ext.dispatch.tensor.load")
    )
    assert covers(pack, AllOf(matchers=[pack, loaded])) and not covers(AllOf(matchers=[pack, loaded]), pack)
    both = AllOf(matchers=[ContractionMatch(**F32, m=128), ConsumerMatch(names="tensor.expand_shape")])
    assert covers(ContractionMatch(**F32), both) and not covers(both, ContractionMatch(**F32))
    scoped = AllOf(matchers=[FunctionMatch(function="f"), mm])
    assert covers(mm, scoped) and not covers(scoped, mm)
    assert covers(scoped, AllOf(matchers=[FunctionMatch(function="f"), mm]))
    assert not covers(scoped, AllOf(matchers=[FunctionMatch(function="g"), mm]))
    exact = ContractionMatch(**F32, batch=[], m=128, n=128, k=128)
    assert specificity(exact) > specificity(both) > specificity(ContractionMatch(**F32, m=128)) > specificity(mm)


# --- shadowed rules ----------------------------------------------------------------------


def test_render_reports_rules_an_earlier_rule_shadows() -> None:
    strategies = StrategySet(
        name="s",
        rules=[
            _rule("all_f32", ContractionMatch(**F32)),
            _rule("mm", {"kind": "op_name", "names": "linalg.matmul"}),
            _rule("exact", ContractionMatch(**F32, batch=[], m=128, n=128, k=128)),
            _rule("two", {"kind": "op_name", "names": ["linalg.matmul", "linalg.batch_matmul"]}),
            _rule("mm_again", {"kind": "op_name", "names": "linalg.matmul"}),
            _rule("scoped", AllOf(matchers=[FunctionMatch(function="f"), OpNameMatch(names="linalg.matmul")])),
        ],
    )
    assert render(strategies, "cpu").shadowed == (
        "rules[2] (exact) is shadowed by rules[0] (all_f32)",
        "rules[4] (mm_again) is shadowed by rules[1] (mm)",
    )  # rules[5] is in its own foreach_match run (scoped to @f): it matches anew


def test_rules_of_other_injection_points_do_not_shadow() -> None:
    layout = Rule(
        target="cpu",
        match=OpNameMatch(names="linalg.matmul"),
        strategy=DataLayout(name="pack", pack=PackGreedily(matmul_packed_sizes=[8, 16, 1])),
    )
    strategies = StrategySet(name="s", rules=[layout, _rule("tiles", {"kind": "op_name", "names": "linalg.matmul"})])
    assert render(strategies, "cpu").shadowed == ()


@pytest.mark.compile
def test_compile_warns_about_shadowed_rules() -> None:
    strategies = StrategySet(
        name="s",
        targets=[CpuTarget()],
        rules=[
            _rule("all_f32", ContractionMatch(**F32)),
            _rule("exact", ContractionMatch(**F32, batch=[], m=128, n=128, k=512)),
        ],
    )
    report = compile(EXAMPLES / "mlp" / "payload.mlir", strategies, "cpu")
    assert report.shadowed == ("rules[1] (exact) is shadowed by rules[0] (all_f32)",)
    assert report.warnings()[0] == "s.rules[1] (exact) is shadowed by rules[0] (all_f32): it never fires on cpu"
    assert report.to_json()["shadowed"] == list(report.shadowed)


# --- combine -----------------------------------------------------------------------------


def _heads() -> list[Rule]:
    return head_split_fusion("q_proj", "avx2", m=128, heads=[12, 64], k=768, consumer_interchange=[1, 0, 2])


def test_combine_joins_sets_and_rule_lists_in_order() -> None:
    cpu_auto = auto(isa="avx2", pack_matmuls=True)
    joined = combine(_heads(), cpu_auto, name="bert")
    assert joined.rules == (*_heads(), *cpu_auto.rules)
    assert joined.targets == cpu_auto.targets  # auto's cpu target (ukernels off), not the default
    assert StrategySet.combine(_heads(), cpu_auto, name="bert") == joined
    assert [t.name for t in combine(_heads(), name="only_rules").targets] == ["cpu", "gfx942"]
    gpu_rules = library.standard_set()
    both = combine(cpu_auto, gpu_rules, name="both")
    assert [t.name for t in both.targets] == ["cpu", "gfx942"] and len(both.rules) == len(cpu_auto.rules) + len(
        gpu_rules.rules
    )


def test_combine_refuses_different_targets_of_one_name_and_non_rules() -> None:
    with pytest.raises(
        StrategyError, match=r"x\.parts\[1\]\.targets\[0\]: expected a target equal to the target 'cpu' of parts\[0\]"
    ):
        combine(
            StrategySet(name="a", targets=[CpuTarget()], rules=[]),
            StrategySet(name="b", targets=[CpuTarget(ukernels="none")], rules=[]),
            name="x",
        )
    with pytest.raises(StrategyError, match=r"x\.parts\[0\]\[1\]: expected a Rule"):
        combine([_heads()[0], "rule"], name="x")  # type: ignore[list-item]
    with pytest.raises(StrategyError, match=r"x\.precedence: expected 'first' or 'specific'"):
        combine(_heads(), name="x", precedence="last")  # type: ignore[arg-type]
    with pytest.raises(StrategyError, match=r"rules\[2\]\.strategy\.name: expected a name not used"):
        combine(_heads(), [_rule("q_proj_tiles", {"kind": "op_name", "names": "linalg.matmul"})], name="x")


def test_specific_precedence_puts_more_specific_rules_of_later_parts_first() -> None:
    general = _rule("mm", {"kind": "op_name", "names": "linalg.matmul"})
    exact = _rule("exact", ContractionMatch(**F32, batch=[], m=128, n=128, k=128))
    covered = _rule("two", {"kind": "op_name", "names": ["linalg.matmul", "linalg.batch_matmul"]})
    assert [r.strategy.name for r in combine(general, exact, name="s").rules] == ["mm", "exact"]
    assert [r.strategy.name for r in combine(general, exact, name="s", precedence="specific").rules] == ["exact", "mm"]
    assert [r.strategy.name for r in combine(covered, general, name="s", precedence="specific").rules] == ["mm", "two"]
    # A part keeps its own order (auto() orders its rules on purpose).
    assert [r.strategy.name for r in combine([general, exact], name="s", precedence="specific").rules] == [
        "mm",
        "exact",
    ]
    cpu_auto = auto(isa="avx2", pack_matmuls=True)
    merged = combine(cpu_auto, _heads(), name="bert", precedence="specific")
    assert [r.strategy.name for r in merged.rules[:2]] == ["q_proj_fuse", "q_proj_tiles"]
    assert [r for r in merged.rules if r not in _heads()] == list(cpu_auto.rules)
    assert render(merged, "cpu").shadowed == ()


@pytest.mark.compile
@pytest.mark.parametrize("precedence", ["first", "specific"])
def test_head_split_fusion_composes_with_auto(precedence: str) -> None:
    """examples/bert_heads' result (one dispatch for matmul + head split + bias) with auto()'s
    rules for everything else."""
    parts = (
        (_heads(), auto(isa="avx2", pack_matmuls=True))
        if precedence == "first"
        else (auto(isa="avx2", pack_matmuls=True), _heads())
    )
    strategies = combine(*parts, name="bert_auto", precedence=precedence)  # type: ignore[arg-type]
    report = compile(EXAMPLES / "bert_heads" / "payload.mlir", strategies, "cpu")
    (dispatch,) = report.dispatches
    assert dispatch.layout_strategies + dispatch.applied_strategies == ("q_proj_fuse", "q_proj_tiles")


@pytest.mark.compile
def test_head_transpose_fusion_composes_with_auto_packing() -> None:
    """The exported head-split rules select transposes, auto()'s packing rules 2-D matmuls:
    no rule shadows another. The walk meets a contraction before its transpose, so where
    packing takes the 2-D projection (@proj_2d) the head-split rule finds no chain there and
    leaves it; the batch-1 projections (which packing leaves alone) are fused."""
    heads = head_transpose_fusion(layouts=["hsd", "hds"], data_tiling=False)
    strategies = combine(heads, auto(isa="avx2", pack_matmuls=True), name="heads_auto")
    assert render(strategies, "cpu").shadowed == ()
    report = compile(ROOT / "tests" / "payloads" / "cpu" / "exported_heads.mlir", strategies, "cpu")
    applied = {rule.strategy: rule.functions for rule in report.rules if rule.applied}
    assert applied["heads_hsd4"] == ("attention",) and applied["heads_hds4"] == ("attention",)
    assert "heads_hsd3" not in applied and any(name.startswith("avx2_") for name in applied)


def test_gfx942_target_sets_combine_with_equal_targets() -> None:
    a = StrategySet(name="a", targets=[AmdGpuTarget()], rules=[])
    assert combine(a, library.convolution_set(), name="g").targets == (AmdGpuTarget(),)
