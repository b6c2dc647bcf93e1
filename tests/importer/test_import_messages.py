"""What ``tdsl import`` says (issue 38): an empty spec, a module that is no transform spec,
the older top-level ``transform.sequence``, an output that cannot be written (named as
given), ``-q``, the target guessed from ROCm words in the spec, and the warning for an
``iree.match.attention`` matcher, which IREE 3.13 never matches when it configures ops
(checked with the compiler: the original spec configures the payload as IREE's default)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from tdsl.cli import main
from tdsl.errors import OutputError
from tdsl.importer import SpecImportError, import_command, read_spec
from tdsl.importer.spec import _infer_target
from tdsl.model.layout import DataLayout, PackGreedily

ROOT = Path(__file__).resolve().parent.parent.parent
SPECS = ROOT / "examples" / "specs"
PAYLOADS = ROOT / "tests" / "payloads" / "import"
SPEC = SPECS / "llvm_pack_greedily_matmul.mlir"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "s.mlir: a transform-dialect spec, received an empty spec (no operation)"),
        ("// a comment\n", "s.mlir: a transform-dialect spec, received an empty spec (no operation)"),
        ("module {\n}\n", "s.mlir: a transform-dialect spec, received an empty spec (no operation)"),
        (
            "func.func @f() {\n  return\n}\n",
            "s.mlir:1: func.func: a transform-dialect spec (transform.named_sequence ops), received not a transform spec: "
            "it holds func.func",
        ),
        (
            "transform.sequence failures(propagate) {\n^bb1(%arg1: !transform.any_op):\n}\n",
            "s.mlir:1: transform.sequence: the older top-level entry point: write it as transform.named_sequence "
            "@__transform_main(%root: !transform.any_op) in a module with the transform.with_named_sequence attribute",
        ),
    ],
)
def test_files_that_are_no_spec_are_named_so(text: str, message: str) -> None:
    with pytest.raises(SpecImportError) as err:
        read_spec(text, "s.mlir")
    assert str(err.value) == message


def test_an_empty_file_exits_2_in_one_line(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty.mlir"
    empty.write_text("")
    assert main(["import", str(empty)]) == 2
    assert (
        capsys.readouterr().err
        == f"tdsl: error: {empty}: a transform-dialect spec, received an empty spec (no operation)\n"
    )


def test_quiet_prints_only_the_summary(tmp_path: Path) -> None:
    loud, quiet = io.StringIO(), io.StringIO()
    import_command(SPEC, tmp_path / "a.py", None, False, stderr=loud)
    import_command(SPEC, tmp_path / "b.py", None, False, stderr=quiet, quiet=True)
    assert len(loud.getvalue().splitlines()) == 2 and "no config names a backend" in loud.getvalue()
    assert quiet.getvalue().splitlines() == [loud.getvalue().splitlines()[1].replace("a.py", "b.py")]
    assert (tmp_path / "a.py").read_text() == (tmp_path / "b.py").read_text()


def test_an_unwritable_output_is_named_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output = tmp_path / "out.py"

    def refuse(path: Path, data: str) -> Path:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".out.py.x1.partial"))

    monkeypatch.setattr("tdsl.importer.command.atomic_write", refuse)
    with pytest.raises(OutputError) as err:
        import_command(SPEC, output, None, False, stderr=io.StringIO())
    assert str(err.value) == f"-o {str(output)!r}: the output cannot be written (permission denied)"


def test_the_target_is_guessed_from_rocm_words_with_a_note() -> None:
    layout = [DataLayout(name="d", pack=PackGreedily(matmul_packed_sizes=[8, 16, 32]))]
    notes: list = []
    mfma = "%p = transform.param.constant #iree_gpu.mma_layout<MFMA_F32_16x16x16_F16> -> !transform.any_param"
    assert _infer_target(layout, None, notes, mfma) == "gfx942"
    assert "names '#iree_gpu.' (ROCm): the rules are imported for target 'gfx942'" in notes[0].text
    notes.clear()
    assert _infer_target(layout, None, notes, "// tuned on gfx942 with MFMA\nmodule {}") == "cpu"
    assert "imported for target 'cpu'" in notes[0].text
    assert _infer_target(layout, "gfx942", [], "") == "gfx942"


ATTENTION = (
    "transform.iree.match.online_attention %arg0, query_type = f16, key_type = f16, value_type = f16, "
    "scale_type = f16, output_type = f32, max_type = f32, sum_type = f32, "
    "indexing_maps = [#map, #map1, #map2, #map3, #map4, #map5, #map5]",
    "transform.iree.match.attention %arg0, query_type = f16, key_type = f16, value_type = f16, "
    "output_type = f16, indexing_maps = [#map, #map1, #map2, #map3, #map4]",
)


def _attention_spec() -> str:
    text = (SPECS / "iree_default_tuning_spec_gfx942.mlir").read_text()
    assert ATTENTION[0] in text
    return text.replace(*ATTENTION)


def test_an_attention_matcher_is_warned_of() -> None:
    imported = read_spec(_attention_spec(), "att.mlir")
    warnings = [n for n in imported.notes if n.text.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].line == 30
    assert "transform.iree.match.attention matches nothing" in warnings[0].text


@pytest.mark.compile
def test_iree_never_applies_an_attention_matcher() -> None:
    from tdsl.importer.check import compare, configured

    imported = read_spec(_attention_spec(), "att.mlir")
    payload = PAYLOADS / "attention_2x10x4096x64_f16.mlir"
    comparison = compare(imported, payload)
    assert comparison.same
    default = configured(payload, imported.strategy_set.target("gfx942").compile_flags())
    assert default == comparison.original


# --------------------------------------------------------------------------------------
# Older syntax: the upgrades the refusal promises, each with a note


PRINTED = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.print {name = "before packing"}
    transform.print %mm {name = "the matmuls"} : !transform.any_op
    transform.structured.pack %mm packed_sizes = [2, 3, 4] : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.yield
  }
}
"""


def test_print_with_its_name_as_an_attribute_is_upgraded() -> None:
    imported = read_spec(PRINTED, "printed.mlir")
    notes = [(n.line, n.text) for n in imported.notes if n.text.startswith("transform.print")]
    assert notes == [
        (
            4,
            'transform.print: {name = "before packing"} (the name as an attribute) upgraded to name = "before packing"',
        ),
        (4, "transform.print (debug output of the transform interpreter) is not kept"),
        (5, 'transform.print: {name = "the matmuls"} (the name as an attribute) upgraded to name = "the matmuls"'),
        (5, "transform.print (debug output of the transform interpreter) is not kept"),
    ]
    assert 'transform.print %mm name = "the matmuls" : !transform.any_op' in imported.upgraded
    assert imported.raw == [] and len(imported.strategy_set.rules) == 1


def test_attention_properties_inside_a_dag_region_are_upgraded() -> None:
    maps = ",\n".join(
        f"          affine_map<(d0, d1, d2, d3, d4, d5) -> ({m})>"
        for m in ("d0, d1, d2, d4", "d0, d1, d5, d4", "d0, d1, d3, d5", "", "d0, d1, d2, d3")
    )
    t = "tensor<2x10x4096x64xf16>"
    text = f"""module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @match_attn(%arg0: !transform.any_op {{transform.readonly}}) -> !transform.any_op {{
    %ins, %outs = transform.iree.match.cast_compatible_dag_from_root %arg0 {{
    ^bb0(%q: {t}, %k: tensor<2x10x64x64xf16>, %v: tensor<2x10x64x64xf16>, %s: f16, %o: {t}):
      %0 = iree_linalg_ext.attention {{indexing_maps = [
{maps}]}}
          ins(%q, %k, %v, %s : {t}, tensor<2x10x64x64xf16>, tensor<2x10x64x64xf16>, f16) outs(%o : {t}) {{
        ^bb0(%score: f32):
          iree_linalg_ext.yield %score : f32
        }} -> {t}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    transform.yield %arg0 : !transform.any_op
  }}
  transform.named_sequence @mark(%arg0: !transform.any_op {{transform.readonly}}) {{
    transform.annotate %arg0 "seen" : !transform.any_op
    transform.yield
  }}
  transform.named_sequence @__kernel_config(%arg0: !transform.any_op {{transform.consumed}}) -> !transform.any_op attributes {{iree_codegen.tuning_spec_entrypoint}} {{
    %r = transform.foreach_match in %arg0 @match_attn -> @mark : (!transform.any_op) -> !transform.any_op
    transform.yield %r : !transform.any_op
  }}
}}
"""
    with pytest.raises(SpecImportError) as err:  # parsed after the upgrade: the action is what is refused
        read_spec(text, "dag.mlir", target="gfx942")
    assert str(err.value).startswith("dag.mlir:19: transform.annotate: the annotation 'seen'")
    imported = read_spec(text, "dag.mlir", target="gfx942", allow_raw=True)
    assert (
        5,
        "iree_linalg_ext.attention: properties written as attributes {indexing_maps = ..} upgraded to <{indexing_maps = ..}>",
    ) in [(n.line, n.text) for n in imported.notes]
    assert "iree_linalg_ext.attention <{indexing_maps" in imported.upgraded
