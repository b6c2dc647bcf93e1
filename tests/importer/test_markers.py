"""Markers and unit attributes (issue 38): a ``transform.annotate %op "__*_applied__"``
marker next to a config is kept as the strategy's ``markers`` (rendered back, located at
``<name>.markers[i]``), and the ``attention_qk_matmul`` / ``attention_pv_matmul`` unit
attributes of a ``decomposition_config`` are typed (``DecomposedMatmul.tagged``); both
import without raw MLIR and configure payloads as the originals do."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import render
from tdsl.importer import SpecImportError, read_spec
from tdsl.model.lowering import CpuLowering, GpuLowering

ROOT = Path(__file__).resolve().parent.parent.parent
SPECS = ROOT / "examples" / "specs"
PAYLOADS = ROOT / "tests" / "payloads" / "import"

MARKED = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_mm(%arg0: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    transform.match.operation_name %arg0 ["linalg.matmul"] : !transform.any_op
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [32, 64, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>> -> !transform.any_param
    transform.yield %arg0, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @apply(%arg0: !transform.any_op {transform.readonly}, %arg1: !transform.any_param {transform.readonly}) {
    transform.annotate %arg0 "compilation_info" = %arg1 : !transform.any_op, !transform.any_param
    transform.annotate %arg0 "__custom_tuning_spec_applied__" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__kernel_config(%arg0: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %r = transform.foreach_match in %arg0 @match_mm -> @apply : (!transform.any_op) -> !transform.any_op
    transform.yield %r : !transform.any_op
  }
}
"""


def test_a_marker_is_kept_and_rendered_back() -> None:
    imported = read_spec(MARKED, "marked.mlir")
    assert imported.raw == []
    (rule,) = imported.strategy_set.rules
    assert isinstance(rule.strategy, CpuLowering) and rule.strategy.markers == ("__custom_tuning_spec_applied__",)
    script = render(imported.strategy_set, "cpu").script("tuning_spec")
    assert script is not None
    assert (
        'transform.annotate %op "__custom_tuning_spec_applied__" : !transform.any_op loc("match_mm.markers[0]")'
        in script.text
    )
    again = read_spec(script.text, "again.mlir")
    assert again.strategy_set.rules == imported.strategy_set.rules


def test_other_annotations_are_still_refused() -> None:
    text = MARKED.replace("__custom_tuning_spec_applied__", "custom_tuned")
    with pytest.raises(SpecImportError) as err:
        read_spec(text, "other.mlir")
    assert str(err.value).startswith("other.mlir:9: transform.annotate: the annotation 'custom_tuned' (")


def _tagged_spec() -> str:
    text = (SPECS / "iree_default_tuning_spec_gfx942.mlir").read_text()
    for part in ("pv", "qk"):
        text = text.replace(
            f"{part}_attrs = {{lowering_config", f"{part}_attrs = {{attention_{part}_matmul, lowering_config"
        )
    return text


def test_decomposition_unit_attributes_are_typed_and_rendered_back() -> None:
    imported = read_spec(_tagged_spec(), "tagged.mlir")
    assert imported.raw == []
    attention = imported.strategy_set.rules[0].strategy
    assert isinstance(attention, GpuLowering) and attention.decomposition_config is not None
    assert attention.decomposition_config.qk is not None and attention.decomposition_config.qk.tagged
    assert attention.decomposition_config.pv is not None and attention.decomposition_config.pv.tagged
    script = render(imported.strategy_set, "gfx942").script("tuning_spec")
    assert script is not None
    assert "qk_attrs = {attention_qk_matmul, lowering_config" in script.text
    assert read_spec(script.text, "again.mlir").strategy_set.rules == imported.strategy_set.rules


@pytest.mark.compile
def test_markers_and_tagged_decompositions_configure_like_the_originals() -> None:
    from tdsl.importer.check import compare

    marked = compare(read_spec(MARKED, "marked.mlir"), PAYLOADS / "mm_64x48x32_f32.mlir")
    assert marked.same and any(c.op == "linalg.matmul" for c in marked.original)
    tagged = compare(read_spec(_tagged_spec(), "tagged.mlir"), PAYLOADS / "attention_2x10x4096x64_f16.mlir")
    assert tagged.same, "\n".join(tagged.differences())
    assert any("attention_qk_matmul" in v for c in tagged.original for _, v in c.attributes)
