"""``tdsl import`` of a codegen library written for Vulkan/SPIR-V (IREE's
samples/transform_dialect/transform_library.mlir, examples/specs/iree_transform_library_codegen.mlir):

* the action that sets a SPIR-V pipeline (no llvm-cpu or rocm counterpart) is left out
  with its pairs and a warning naming it and its line; a spec whose only rules are SPIR-V's
  is refused in one line;
* the library's entry point (``@transform_main``, run as ``lib.mlir@transform_main``) is
  read as a codegen library because the spec names ``hal.executable`` ops (a note says so);
* the older ``transform.match.structured.dim %op[-1] {reduction}`` is upgraded with a note;
* the rest (a generalize before configuration) is refused in one line, or kept raw with
  ``allow_raw`` (its ``transform.print`` dropped with a note), and configures a matmul
  payload as the original does on llvm-cpu (compile test).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from tdsl.importer import SpecImportError, read_file, read_spec
from tdsl.importer.command import import_command
from tdsl.model.matchers import OpNameMatch
from tdsl.model.raw import RawCodegenAction

ROOT = Path(__file__).resolve().parent.parent.parent
LIBRARY = ROOT / "examples" / "specs" / "iree_transform_library_codegen.mlir"
PAYLOAD = ROOT / "tests" / "payloads" / "import" / "mm_64x48x32_f32.mlir"


def test_the_spirv_action_is_left_out_with_a_warning_and_the_rest_kept_raw() -> None:
    imported = read_file(LIBRARY, allow_raw=True)
    assert imported.injection == "codegen_library" and imported.target == "cpu" and imported.entry == "transform_main"
    (rule,) = imported.strategy_set.rules
    assert rule.match == OpNameMatch(names=("linalg.matmul",))
    assert isinstance(rule.strategy, RawCodegenAction)
    assert "transform.structured.generalize" in rule.strategy.sequence
    assert "transform.print" not in rule.strategy.sequence
    notes = "\n".join(imported.report())
    assert (
        f"{LIBRARY}:19: warning: @use_subgroup_reduce sets translation_info<SPIRVBaseVectorize>, a SPIR-V pipeline "
        "with no llvm-cpu or rocm counterpart: it and its pairs (@match_reduce -> @use_subgroup_reduce) are not imported"
    ) in notes
    assert f"{LIBRARY}:9: transform.print (debug output of the transform interpreter) is not kept" in notes
    assert (
        f"{LIBRARY}:43: transform.match.structured.dim: {{reduction}} (the loop kind as an attribute) upgraded to reduction"
        in notes
    )
    assert "imported as a codegen_library" in notes
    # the line numbers of the upgraded spec are the original's
    assert len(imported.upgraded.splitlines()) == len(LIBRARY.read_text().splitlines())
    assert "translation_info<SPIRV" not in imported.upgraded and "@use_subgroup_reduce" not in imported.upgraded


def test_quiet_keeps_the_warning(tmp_path: Path) -> None:
    err = io.StringIO()
    import_command(LIBRARY, tmp_path / "lib.py", None, True, stderr=err, quiet=True)
    lines = err.getvalue().splitlines()
    assert len(lines) == 2 and ":19: warning: @use_subgroup_reduce sets " in lines[0]
    assert lines[1].startswith("imported 1 rule(s) of ")


def test_without_allow_raw_the_generalize_is_refused_in_one_line() -> None:
    with pytest.raises(SpecImportError) as err:
        read_file(LIBRARY)
    assert str(err.value).startswith(f"{LIBRARY}:8: transform.structured.generalize: ")
    assert "\n" not in str(err.value)


ONLY_SPIRV = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @spirv(%op: !transform.any_op {transform.readonly}) {
    %variant = transform.get_parent_op %op <{op_name = "hal.executable.variant"}> : (!transform.any_op) -> !transform.any_op
    %exports = transform.structured.match ops{["hal.executable.export"]} in %variant : (!transform.any_op) -> !transform.any_op
    %info = transform.param.constant #iree_codegen.translation_info<SPIRVBaseDistribute> -> !transform.any_param
    transform.annotate %exports "translation_info" = %info : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @match(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op) {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @__kernel_config(%variant: !transform.any_op {transform.consumed}) {
    transform.foreach_match in %variant @match -> @spirv : (!transform.any_op) -> (!transform.any_op)
    transform.yield
  }
}
"""


def test_a_spec_whose_only_rules_are_spirv_is_refused_in_one_line() -> None:
    with pytest.raises(SpecImportError) as err:
        read_spec(ONLY_SPIRV, "spirv.mlir", allow_raw=True)
    assert str(err.value).startswith(
        "spirv.mlir:5: IREE 3.13 cannot parse this spec: expected 'pipeline' (translation_info<SPIRVBaseDistribute>: "
        "a pipeline of an older IREE with no llvm-cpu or rocm counterpart; "
    )


@pytest.mark.compile
def test_the_library_configures_a_matmul_like_the_original() -> None:
    from tdsl.importer.check import compare

    imported = read_file(LIBRARY, allow_raw=True)
    comparison = compare(imported, PAYLOAD)
    assert comparison.same, comparison.differences()
    # the original ran (@transform_main generalized the matmul before IREE configured it)
    assert [c.op for c in comparison.original] == ["func.func", "linalg.generic"]
