"""``tdsl import`` of imperative specs (issue 38): an entry point that selects ops with
``transform.structured.match`` and runs a chain of ops on each matched handle.

* MLIR's own packing specs (examples/specs/llvm_*.mlir) import fully typed (an
  ``OpNameMatch`` and a ``DataLayout`` per match), and the compile tests check that the
  import rewrites a payload's graph exactly as the original does (the IR after IREE's
  preprocessing phase, op by op), and that the original rewrites it at all;
* a chain with an op tdsl has no typed step for is refused in one line (op, line), or with
  ``allow_raw`` kept as a raw action of that chain alone, on the typed matcher;
* ops on the payload root itself, or matches with other filters, are refused in one line;
* a codegen library another tool wrote (a lowering sequence selected by translation_info's
  codegen_spec) imports as a ``Codegen`` only when tdsl renders every op of it: any other
  op is refused naming it and its line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import render
from tdsl.cli import main
from tdsl.importer import SpecImportError, read_file, read_spec
from tdsl.model.all_of import AllOf
from tdsl.model.codegen import Codegen
from tdsl.model.layout import DataLayout, Pack, PackTranspose
from tdsl.model.lowering import CpuLowering
from tdsl.model.matchers import FunctionMatch, OpNameMatch
from tdsl.model.raw import RawPreprocessingAction

ROOT = Path(__file__).resolve().parent.parent.parent
SPECS = ROOT / "examples" / "specs"
PAYLOADS = ROOT / "tests" / "payloads" / "import"

IMPERATIVE = {
    "llvm_pack_greedily_matmul.mlir": ("linalg.matmul", "mm_1023x127x255_f32.mlir"),
    "llvm_pack_greedily_generic.mlir": ("linalg.generic", "generic_mk_nk_nm_f32.mlir"),
    "llvm_pack_greedily_padded.mlir": ("linalg.generic", "generic_mk_nk_nm_f32.mlir"),
    "llvm_pack_reduction.mlir": ("linalg.generic", "reduction_3x7_f16.mlir"),
    "llvm_pack_transpose_lhs.mlir": ("linalg.generic", "col_reduction_7x3_f16.mlir"),
    "llvm_pack_transpose_result.mlir": ("linalg.matmul", "mm_64x48x32_f32.mlir"),
}


@pytest.mark.parametrize("spec", sorted(IMPERATIVE))
def test_imperative_specs_import_fully_typed(spec: str) -> None:
    imported = read_file(SPECS / spec)
    assert imported.raw == [] and imported.injection == "preprocessing"
    (rule,) = imported.strategy_set.rules
    assert rule.match == OpNameMatch(names=(IMPERATIVE[spec][0],))
    assert isinstance(rule.strategy, DataLayout) and rule.strategy.pack is not None


def test_the_chain_steps_are_read_into_the_layout() -> None:
    result = read_file(SPECS / "llvm_pack_transpose_result.mlir").strategy_set.rules[0].strategy
    assert isinstance(result, DataLayout)
    assert result == DataLayout(
        name="matmul_pack",
        pack=Pack(packed_sizes=[2, 3, 4]),
        pack_transposes=[PackTranspose(operand="result", outer_perm=[1, 0], inner_perm=[1, 0])],
    )
    lhs = read_file(SPECS / "llvm_pack_transpose_lhs.mlir").strategy_set.rules[0].strategy
    assert isinstance(lhs, DataLayout) and lhs.pack_transposes[0].operand == "lhs"


RAW_CHAIN = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.op<"linalg.matmul">
    %tiled, %loops:2 = transform.structured.tile_using_for %mm tile_sizes [2, 2]
      : (!transform.op<"linalg.matmul">) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %g = transform.structured.match ops{["linalg.generic"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.structured.pack %g packed_sizes = [0, 4] : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.yield
  }
}
"""


def test_a_chain_without_a_typed_kind_is_refused_or_kept_raw_alone() -> None:
    with pytest.raises(SpecImportError) as err:
        read_spec(RAW_CHAIN, "chain.mlir")
    assert str(err.value) == (
        "chain.mlir:4: transform.structured.tile_using_for: an op of a graph-level layout action tdsl's DataLayout "
        "does not have (rerun with --allow-raw to keep the ops on the handle of line 3 as raw MLIR)"
    )
    imported = read_spec(RAW_CHAIN, "chain.mlir", allow_raw=True)
    raw, typed = imported.strategy_set.rules
    assert raw.match == OpNameMatch(names=("linalg.matmul",)) and isinstance(raw.strategy, RawPreprocessingAction)
    assert "tile_using_for" in raw.strategy.sequence and "structured.match" not in raw.strategy.sequence
    assert typed.match == OpNameMatch(names=("linalg.generic",)) and isinstance(typed.strategy, DataLayout)
    assert imported.raw == ["matmul_tile_using_for"]
    assert any(
        "(transform.structured.tile_using_for) are kept as a raw action (matmul_tile_using_for)" in n.text
        for n in imported.notes
    )
    script = render(imported.strategy_set, "cpu").script("preprocessing")
    assert script is not None and "tile_using_for" in script.text


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "transform.apply_dce to %module : !transform.any_op",
            "s.mlir:3: transform.apply_dce: an op of the entry point @__transform_main that acts on the payload root "
            "itself (tdsl's rules act on the ops a transform.structured.match selects)",
        ),
        (
            "%m = transform.structured.match interface{LinalgOp} in %module : (!transform.any_op) -> !transform.any_op\n"
            "    transform.structured.generalize %m : (!transform.any_op) -> !transform.any_op",
            "s.mlir:3: transform.structured.match: a match by op names only (ops{[...]}); tdsl has no typed matcher "
            "for its interface (interface{LinalgOp})",
        ),
        (
            '%m = transform.structured.match ops{["linalg.generic"]} attributes {tag = "a"} in %module'
            " : (!transform.any_op) -> !transform.any_op\n"
            "    transform.structured.generalize %m : (!transform.any_op) -> !transform.any_op",
            "s.mlir:3: transform.structured.match: a match by op names only (ops{[...]}); tdsl has no typed matcher "
            'for its op_attrs (attributes {tag = "a"})',
        ),
        (
            '%m = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op',
            "s.mlir:3: transform.structured.match: ops on the handle it matches (the match is unused)",
        ),
    ],
)
def test_entry_ops_tdsl_cannot_make_rules_of_are_refused(body: str, message: str) -> None:
    text = (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {\n"
        '    %x = transform.structured.match ops{["linalg.fill"]} in %module : (!transform.any_op) -> !transform.any_op\n'
        "    transform.structured.generalize %x : (!transform.any_op) -> !transform.any_op\n"
        f"    {body}\n"
        "    transform.yield\n  }\n}\n"
    )
    # the refused op is on line 5; the message's line is rewritten to it
    with pytest.raises(SpecImportError) as err:
        read_spec(text, "s.mlir", allow_raw=True)
    assert str(err.value) == message.replace("s.mlir:3:", "s.mlir:5:")


def test_the_command_line_refuses_in_one_line_with_exit_code_2(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "chain.mlir"
    spec.write_text(RAW_CHAIN)
    assert main(["import", str(spec)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"tdsl: error: {spec}:4: transform.structured.tile_using_for: ")


@pytest.mark.compile
@pytest.mark.parametrize("spec", sorted(IMPERATIVE))
def test_imperative_specs_rewrite_payloads_like_the_originals(spec: str) -> None:
    from tdsl.importer.check import compare, rewritten

    imported = read_file(SPECS / spec)
    payload = PAYLOADS / IMPERATIVE[spec][1]
    comparison = compare(imported, payload)
    assert comparison.same, "\n".join(comparison.differences())
    # The spec rewrote the graph: without it the preprocessed IR is another.
    assert rewritten(payload, imported.strategy_set.target("cpu").compile_flags()) != comparison.original


def _in_functions(container: str) -> str:
    return f"""module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%module: !transform.any_op {{transform.readonly}}) {{
    %f = transform.structured.match {container} in %module : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.match ops{{["linalg.matmul"]}} in %f : (!transform.any_op) -> !transform.any_op
    transform.structured.pack_greedily %mm matmul_packed_sizes = [8, 16, 32] matmul_inner_dims_order = [1, 2, 0]
      : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.yield
  }}
}}
"""


EVERY_FUNCTION = _in_functions('ops{["util.func"]}')
ONE_FUNCTION = _in_functions('ops{["util.func"]} attributes {sym_name = "matmul_mk_kn_mn"}')


def test_matches_in_the_payload_functions_are_rules_scoped_like_them() -> None:
    every = read_spec(EVERY_FUNCTION, "every.mlir").strategy_set.rules
    assert [r.match for r in every] == [OpNameMatch(names=("linalg.matmul",))]
    (one,) = read_spec(ONE_FUNCTION, "one.mlir").strategy_set.rules
    assert one.match == AllOf(
        matchers=(FunctionMatch(function="matmul_mk_kn_mn"), OpNameMatch(names=("linalg.matmul",)))
    )
    # IREE preprocesses util.func ops: a match of func.func finds nothing there, and the
    # match in it is an op of that chain, not a rule of its own
    with pytest.raises(SpecImportError) as err:
        read_spec(_in_functions('ops{["func.func"]}'), "func.mlir")
    assert str(err.value).startswith("func.mlir:4: transform.structured.match: ")


@pytest.mark.compile
@pytest.mark.parametrize("text", [EVERY_FUNCTION, ONE_FUNCTION], ids=["every function", "one function"])
def test_matches_in_functions_rewrite_like_the_originals(text: str) -> None:
    from tdsl.importer.check import compare

    comparison = compare(read_spec(text, "functions.mlir"), PAYLOADS / "mm_1023x127x255_f32.mlir")
    assert comparison.same, "\n".join(comparison.differences())
    assert any(c.op == "linalg.pack" for c in comparison.original)


# --------------------------------------------------------------------------------------
# Codegen libraries: a lowering sequence selected by translation_info's codegen_spec


GOLDENS = ROOT / "tests" / "goldens" / "render"


def _foreign_library() -> str:
    """tdsl's codegen library render of examples/matmul_codegen, renamed as another tool
    would name it (no tdsl_ module or symbols)."""
    text = (GOLDENS / "example_matmul_codegen.cpu.codegen_library.mlir").read_text()
    return text.replace("@tdsl_matmul_codegen", "@lib").replace("tdsl_r0_", "")


def test_a_codegen_library_imports_as_codegen() -> None:
    (rule,) = read_spec(_foreign_library(), "lib.mlir").strategy_set.rules
    assert isinstance(rule.strategy, Codegen) and rule.strategy.vectorize


def test_a_lowering_sequence_with_an_op_codegen_does_not_render_is_refused() -> None:
    text = _foreign_library().replace(
        "    transform.apply_cse to %func_v",
        "    transform.apply_licm to %func_v : !transform.any_op\n    transform.apply_cse to %func_v",
    )
    line = text.splitlines().index("    transform.apply_licm to %func_v : !transform.any_op") + 1
    with pytest.raises(SpecImportError) as err:
        read_spec(text, "lib.mlir")
    assert str(err.value).startswith(
        f"lib.mlir:{line}: transform.apply_licm: an op of the lowering sequence @mm_cpu_td_codegen that tdsl's "
        "Codegen does not render"
    )


def test_every_op_of_tdsls_lowering_sequences_is_one_the_reader_knows() -> None:
    from tdsl.importer.actions import _unrendered
    from tdsl.importer.ir import read_module

    sequences = [
        s
        for path in sorted(GOLDENS.glob("*.codegen_library.mlir"))
        for s in read_module(path.read_text()).sequences
        if s.name.endswith("_codegen")
    ]
    assert len(sequences) >= 5
    assert [(s.name, _unrendered(s.op.body.ops)) for s in sequences] == [(s.name, None) for s in sequences]


IMPERATIVE_CONFIG = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__kernel_config(%root: !transform.any_op {transform.consumed}) {
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [32, 16, 0], vector_common_parallel = [8, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>> -> !transform.any_param
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.annotate %mm "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.yield
  }
}
"""


def test_an_imperative_config_reads_the_parameter_it_annotates_with() -> None:
    imported = read_spec(IMPERATIVE_CONFIG, "config.mlir")
    (rule,) = imported.strategy_set.rules
    assert rule.match == OpNameMatch(names=("linalg.matmul",))
    assert isinstance(rule.strategy, CpuLowering) and rule.strategy.name == "matmul_annotate"
    assert rule.strategy.distribution == (32, 16, 0) and imported.raw == []


@pytest.mark.compile
def test_an_imperative_config_configures_like_the_original() -> None:
    from tdsl.importer.check import compare

    comparison = compare(read_spec(IMPERATIVE_CONFIG, "config.mlir"), PAYLOADS / "mm_64x48x32_f32.mlir")
    assert comparison.same, "\n".join(comparison.differences())
    assert any("distribution = [32, 16, 0]" in v for c in comparison.original for _, v in c.attributes)


FOREACH_FUNCTION = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_matmul(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @pack(%op: !transform.any_op {transform.consumed}) {
    %packed = transform.structured.pack_greedily %op matmul_packed_sizes = [8, 16, 32] matmul_inner_dims_order = [1, 2, 0] : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.yield
  }
  transform.named_sequence @__transform_main(%module: !transform.any_op) {
    %funcs = transform.structured.match ops{["util.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {
      ^bb1(%func: !transform.any_op):
        transform.foreach_match in %func @match_matmul -> @pack : (!transform.any_op) -> (!transform.any_op)
    }
    transform.yield
  }
}
"""


def test_a_foreach_match_in_each_function_runs_over_the_root_with_a_note() -> None:
    """IREE's samples run foreach_match inside transform.foreach over every util.func."""
    imported = read_spec(FOREACH_FUNCTION, "foreach.mlir")
    (rule,) = imported.strategy_set.rules
    assert rule.match == OpNameMatch(names=("linalg.matmul",)) and isinstance(rule.strategy, DataLayout)
    assert (12, "transform.foreach over every payload function: the rules run over the payload root") in [
        (n.line, n.text) for n in imported.notes
    ]


@pytest.mark.compile
def test_a_foreach_match_in_each_function_rewrites_like_the_original() -> None:
    from tdsl.importer.check import compare

    comparison = compare(read_spec(FOREACH_FUNCTION, "foreach.mlir"), PAYLOADS / "mm_1023x127x255_f32.mlir")
    assert comparison.same and any(c.op == "linalg.pack" for c in comparison.original)
