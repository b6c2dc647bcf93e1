"""``tdsl import`` (issue 14): specs read with the bindings back into strategy sets.

* tdsl's own renders are a fixed point: every set in tests/cases.py and every example,
  for each target, rendered -> imported -> rendered is byte-identical (all scripts of a set
  merged: rule indices span targets and injection points), and so is every golden script;
* real specs (examples/specs/, their sources noted in each file and the README) import
  with upgrades of older IREE syntax, or are refused with the op, the line and what is
  missing; ``allow_raw`` keeps what tdsl cannot express as verified raw MLIR;
* the compile tests compile payloads with the original spec and with the imported set's
  render and compare the configured dispatches (the IREE default gfx942 spec on a matmul
  and an attention op of the shapes it names, the amdsharktuner and Flux specs).
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

import pytest
from cases import all_sets
from tdsl import StrategySet, dump, load, render
from tdsl.errors import StrategyError
from tdsl.importer import (
    SpecImportError,
    import_command,
    import_specs,
    merge,
    read_file,
    read_spec,
    write_python,
    write_yaml,
)
from tdsl.model.lowering import GpuLowering
from tdsl.model.matchers import AttentionMatch, ContractionMatch, DagMatch, NoLoweringConfigMatch, OperandMatch
from tdsl.model.raw import RawMatch, RawTuningAction

ROOT = Path(__file__).resolve().parent.parent.parent
SPECS = ROOT / "examples" / "specs"
GOLDENS = ROOT / "tests" / "goldens" / "render"
PAYLOADS = ROOT / "tests" / "payloads" / "import"
SETS = all_sets()


def _scripts(s: StrategySet) -> dict[tuple[str, str], str]:
    return {
        (t.name, str(x.injection)): x.text for t in s.targets if s.rules_for(t.name) for x in render(s, t.name).scripts
    }


@pytest.mark.parametrize("name", sorted(SETS))
def test_own_renders_are_a_fixed_point(name: str) -> None:
    s = SETS[name]
    scripts = _scripts(s)
    imports = [read_spec(text, f"{name}.{t}.{inj}", target=t, targets=s.targets) for (t, inj), text in scripts.items()]
    assert all(i.own for i in imports)
    merged = merge(imports, s.targets)
    assert _scripts(merged) == scripts
    for imported, ((t, inj), text) in zip(imports, scripts.items()):
        if [r.index for r in imported.rules] == list(range(len(imported.rules))):
            again = render(imported.strategy_set, t).script(inj)
            assert again is not None and again.text == text, f"{name} {t} {inj}"


def test_every_golden_script_imports_and_rerenders_byte_identically() -> None:
    by_set: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    for path in sorted(GOLDENS.glob("*.mlir")):
        set_name, target, _injection = path.name[: -len(".mlir")].rsplit(".", 2)
        by_set[set_name].append((path, target))
    assert len(by_set) >= 15
    for set_name, files in by_set.items():
        merged = import_specs(files, targets=SETS[set_name].targets)
        for path, target in files:
            injection = path.name[: -len(".mlir")].rsplit(".", 2)[2]
            script = render(merged, target).script(injection)
            assert script is not None and script.text == path.read_text(), path.name


def test_a_single_script_of_a_multi_target_set_is_renumbered_with_a_note() -> None:
    imported = read_file(GOLDENS / "example_mlp.gfx942.tuning_spec.mlir")
    assert [r.index for r in imported.rules] == [2, 3]
    assert [r.target for r in imported.strategy_set.rules] == ["gfx942", "gfx942"]
    assert any("merge them with import_specs" in line for line in imported.report())


# --------------------------------------------------------------------------------------
# Real specs


def test_iree_default_gfx942_spec_imports_its_attention_and_matmul_rules() -> None:
    imported = read_file(SPECS / "iree_default_tuning_spec_gfx942.mlir")
    s = imported.strategy_set
    assert imported.target == "gfx942" and not imported.raw
    assert [r.strategy.name for r in s.rules] == [
        "match_attention_2x10x4096x64x64x64_f16",
        "match_mmt_2048x1280x5120_f16_f16_f32",
    ]
    attention, matmul = s.rules
    leaves = attention.match.matchers  # type: ignore[attr-defined]
    assert isinstance(leaves[0], NoLoweringConfigMatch)
    assert isinstance(leaves[1], AttentionMatch) and leaves[1].op == "online_attention"
    assert [type(m) for m in leaves[2:]] == [OperandMatch] * 3
    assert leaves[2].type == "tensor<?x?x?x?xf16>" and leaves[2].dims[0].multiple_of == 128
    strategy = attention.strategy
    assert isinstance(strategy, GpuLowering)
    assert strategy.workgroup_size == (256,)
    assert strategy.llvm_func_attrs == {"amdgpu-waves-per-eu": "2", "denormal-fp-math-f32": "preserve-sign"}
    assert strategy.decomposition_config is not None and strategy.decomposition_config.qk is not None
    assert (
        strategy.decomposition_config.qk.mma_kind is not None
        and strategy.decomposition_config.qk.mma_kind.intrinsic == "VMFMA_F32_32x32x16_F16"
    )
    contraction = matmul.match.matchers[1]  # type: ignore[attr-defined]
    assert isinstance(contraction, ContractionMatch) and contraction.maps is not None and contraction.batch is None
    assert any("__tuning_spec_applied__" in line for line in imported.report())


@pytest.mark.parametrize("fmt", ["py", "yaml"])
def test_written_module_and_yaml_load_back_equal(tmp_path: Path, fmt: str) -> None:
    imported = read_file(SPECS / "iree_turbine_boo_conv_tuning_spec.mlir")
    text = (
        write_python(imported.strategy_set, "spec", imported.report())
        if fmt == "py"
        else write_yaml(imported.strategy_set, "spec")
    )
    path = tmp_path / f"imported.{fmt}"
    path.write_text(text)
    assert load(path) == imported.strategy_set


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_set_written_as_python_loads_back_equal(tmp_path: Path, name: str) -> None:
    path = tmp_path / "strategy.py"
    path.write_text(write_python(SETS[name], "test"))
    assert load(path) == SETS[name]


def test_older_iree_syntax_is_upgraded_with_notes() -> None:
    turbine = read_file(SPECS / "iree_turbine_boo_conv_tuning_spec.mlir")
    report = "\n".join(turbine.report())
    assert (
        "iree_turbine_boo_conv_tuning_spec.mlir:24: translation_info pipeline LLVMGPUTileAndFuse (before IREE 3.x) upgraded to #iree_gpu.pipeline<TileAndFuse>"
        in report
    )
    assert (
        "prefetch_shared_memory = true (before IREE's prefetch_num_stages) upgraded to prefetch_num_stages = 2"
        in report
    )
    assert (
        "is named match_conv_2d_bfloat16_forward_2x59x91x2016_nhwc_2016x3x3x56_fhwc_nhwf_2x2s_1x1p_1x1d_36g_async"
        in report
    )
    rule = turbine.strategy_set.rules[0]
    assert isinstance(rule.match, DagMatch) and isinstance(rule.strategy, GpuLowering)
    assert (rule.strategy.subgroup_m_count, rule.strategy.subgroup_n_count, rule.strategy.use_igemm_convolution) == (
        2,
        2,
        True,
    )
    docs = read_file(SPECS / "iree_docs_tuning_example.mlir")
    strategy = docs.strategy_set.rules[0].strategy
    assert isinstance(strategy, GpuLowering) and strategy.subgroup_basis == ((2, 2, 1), (0, 1, 2))
    assert any("upgraded to subgroup_basis [[2, 2, 1], [0, 1, 2]]" in line for line in docs.report())
    assert any("root linalg.matmul is a linalg.generic" in line for line in docs.report())


OLD_SPEC = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @match(%arg0: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %arg0, lhs_type = f16, rhs_type = f16, output_type = f32 : !transform.any_op -> !transform.param<i64>
    %0 = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [64, 64, 0], reduction = [0, 0, 4], subgroup = [2, 2, 0], mma_kind = #iree_gpu.mma_layout<MFMA_F16_16x16x16_F32>, promote_operands = [0, 1]}>, translation_info = #iree_codegen.translation_info<LLVMGPUTileAndFuse workgroup_size = [256, 1, 1] subgroup_size = 64>> -> !transform.any_param
    transform.yield %arg0, %0 : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @apply(%arg0: !transform.any_op {transform.readonly}, %arg1: !transform.any_param {transform.readonly}) {
    transform.annotate %arg0 "compilation_info" = %arg1 : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @mark(%arg0: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %arg0 ["linalg.generic"] : !transform.any_op
    transform.yield %arg0 : !transform.any_op
  }
  transform.named_sequence @mark_function(%arg0: !transform.any_op {transform.readonly}) {
    %f = transform.get_parent_op %arg0 {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    transform.annotate %f "tuned" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__kernel_config(%arg0: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %r = transform.foreach_match in %arg0 @match -> @apply, @mark -> @mark_function : (!transform.any_op) -> !transform.any_op
    transform.yield %r : !transform.any_op
  }
}
"""


def test_properties_written_as_attributes_and_old_mma_names_are_upgraded() -> None:
    with pytest.raises(SpecImportError) as err:
        read_spec(OLD_SPEC, "old.mlir")
    assert str(err.value) == (
        "old.mlir:17: transform.annotate: an annotation of the function ('tuned'): tdsl's codegen action sets "
        "translation_info to a lowering sequence only (rerun with --allow-raw to keep the action @mark_function as raw MLIR)"
    )
    imported = read_spec(OLD_SPEC, "old.mlir", allow_raw=True)
    notes = "\n".join(imported.report())
    assert (
        "old.mlir:4: MMA intrinsic MFMA_F16_16x16x16_F32 (operand-first name of older IREE) upgraded to MFMA_F32_16x16x16_F16"
        in notes
    )
    assert (
        "old.mlir:4: translation_info pipeline LLVMGPUTileAndFuse (before IREE 3.x) upgraded to #iree_gpu.pipeline<TileAndFuse>"
        in notes
    )
    assert (
        'old.mlir:16: transform.get_parent_op: properties written as attributes {op_name = "func.func"} upgraded to <{op_name = "func.func"}>'
        in notes
    )
    typed, raw = imported.strategy_set.rules
    assert isinstance(typed.strategy, GpuLowering) and typed.strategy.mma_kind == "MFMA_F32_16x16x16_F16"
    assert isinstance(raw.strategy, RawTuningAction) and imported.raw == ["mark"]


RAW_SPEC = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_rank2(%arg0: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    transform.match.operation_name %arg0 ["linalg.generic"] : !transform.any_op
    %0 = transform.match.structured failures(propagate) %arg0 : (!transform.any_op) -> !transform.any_op {
    ^bb0(%arg1: !transform.any_op):
      %rank = transform.match.structured.rank %arg1 : (!transform.any_op) -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %c2 : !transform.param<i64>
      transform.match.structured.yield %arg1 : !transform.any_op
    }
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [64, 64, 0], reduction = [0, 0, 4], thread = [4, 4, 0], promote_operands = [0, 1]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 64>> -> !transform.any_param
    transform.yield %arg0, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @apply_op_config(%arg0: !transform.any_op {transform.readonly}, %arg1: !transform.any_param {transform.readonly}) {
    transform.annotate %arg0 "compilation_info" = %arg1 : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @mark(%arg0: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %arg0 ["linalg.generic"] : !transform.any_op
    transform.yield %arg0 : !transform.any_op
  }
  transform.named_sequence @mark_it(%arg0: !transform.any_op {transform.readonly}) {
    %f = transform.get_parent_op %arg0 <{op_name = "func.func"}> : (!transform.any_op) -> !transform.any_op
    transform.annotate %f "tuned" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__kernel_config(%arg0: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %r = transform.foreach_match in %arg0 @match_rank2 -> @apply_op_config, @mark -> @mark_it : (!transform.any_op) -> !transform.any_op
    transform.yield %r : !transform.any_op
  }
}
"""


def test_unsupported_matchers_and_actions_are_refused_or_kept_raw() -> None:
    with pytest.raises(SpecImportError) as err:
        read_spec(RAW_SPEC, "raw.mlir")
    assert str(err.value) == (
        "raw.mlir:4: transform.match.structured: tdsl's structured match holds only the single user of result 0 "
        "(ConsumerMatch) (rerun with --allow-raw to keep the matcher @match_rank2 as raw MLIR)"
    )
    imported = read_spec(RAW_SPEC, "raw.mlir", target="gfx942", allow_raw=True)
    first, second = imported.strategy_set.rules
    assert isinstance(first.match, RawMatch) and isinstance(first.strategy, GpuLowering)
    assert isinstance(second.match, type(second.match)) and isinstance(second.strategy, RawTuningAction)
    assert imported.raw == ["match_rank2", "mark"]
    text = render(imported.strategy_set, "gfx942").script("tuning_spec")
    assert text is not None and "transform.match.structured.rank" in text.text and '"tuned"' in text.text
    again = read_spec(text.text, "again.mlir", target="gfx942")
    assert _scripts(again.strategy_set) == _scripts(imported.strategy_set)


def test_import_command_writes_python_yaml_and_stdout(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert (
        import_command(SPECS / "iree_default_tuning_spec_gfx942.mlir", None, None, False, stdout=out, stderr=err) == 0
    )
    assert "from tdsl import" in out.getvalue()
    assert "imported 2 rule(s) of" in err.getvalue() and "for target gfx942" in err.getvalue()
    for suffix in (".py", ".yaml", ".json"):
        target = tmp_path / f"spec{suffix}"
        import_command(SPECS / "iree_flux_matmul_spec_mi300.mlir", target, None, False, stderr=io.StringIO())
        assert load(target) == read_file(SPECS / "iree_flux_matmul_spec_mi300.mlir").strategy_set
    merged = tmp_path / "mlp.yaml"
    specs = [GOLDENS / f"example_mlp.{n}.mlir" for n in ("cpu.preprocessing", "cpu.tuning_spec", "gfx942.tuning_spec")]
    import_command(specs, merged, None, False, stderr=io.StringIO())
    assert load(merged).rules == load(ROOT / "examples" / "mlp" / "strategy.py").rules


# --------------------------------------------------------------------------------------
# The new fields: validation messages


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"llvm_func_attrs": {"amdgpu-waves-per-eu": "0"}},
            "g.llvm_func_attrs['amdgpu-waves-per-eu']: expected 'N' or 'MIN,MAX' waves per execution unit",
        ),
        (
            {"llvm_func_attrs": {"denormal-fp-math-f32": "flush"}},
            "expected a denormal mode: ieee, preserve-sign, positive-zero, dynamic",
        ),
        (
            {"subgroup_m_count": 2},
            "g.subgroup_n_count: expected both subgroup_m_count and subgroup_n_count, or neither",
        ),
        ({"workgroup_size": [64, 1, 1, 1]}, "g.workgroup_size: expected 1 to 3 thread counts"),
        ({"reorder_workgroups_strategy": "Swizzle"}, "g.reorder_workgroups_strategy"),
        (
            {"decomposition_config": {"qk": {"promote_operands": [1]}}},
            "g.decomposition_config: expected the VectorDistribute pipeline",
        ),
    ],
)
def test_new_gpu_fields_are_validated(fields: dict[str, object], message: str) -> None:
    base = {
        "name": "g",
        "workgroup": [64, 64, 0],
        "reduction": [0, 0, 4],
        "thread": [4, 4, 0],
        "workgroup_size": [256, 1, 1],
    }
    with pytest.raises(StrategyError) as err:
        GpuLowering.model_validate({**base, **fields})
    assert message in str(err.value)


def test_vector_distribute_counts_without_a_basis_name_the_upgrade() -> None:
    with pytest.raises(StrategyError) as err:
        GpuLowering(
            name="g",
            pipeline="VectorDistribute",
            workgroup=[64, 64, 0],
            reduction=[0, 0, 64],
            mma_kind="MFMA_F32_16x16x16_F16",
            subgroup_m_count=2,
            subgroup_n_count=2,
            workgroup_size=[256, 1, 1],
        )
    assert "IREE 3.13 ignores subgroup_m_count and subgroup_n_count" in str(err.value)


@pytest.mark.parametrize(
    ("model", "data", "message"),
    [
        (
            AttentionMatch,
            {
                "op": "online_attention",
                "query_type": "f16",
                "key_type": "f16",
                "value_type": "f16",
                "output_type": "f32",
                "maps": ["(d0) -> (d0)"] * 7,
            },
            "scale_type: expected an element type",
        ),
        (
            AttentionMatch,
            {
                "query_type": "f16",
                "key_type": "f16",
                "value_type": "f16",
                "output_type": "f32",
                "maps": ["(d0) -> (d0)"] * 3,
            },
            "maps: expected 5 or 6 maps",
        ),
        (
            OperandMatch,
            {"type": "tensor<?x?xf16>", "dims": [{"dim": 2, "multiple_of": 16}]},
            "dims[0].dim: expected a dimension of the rank-2 type",
        ),
        (OperandMatch, {"type": "memref<4xf16>"}, "type: expected a ranked tensor type"),
        (
            ContractionMatch,
            {"lhs_type": "f16", "rhs_type": "f16", "output_type": "f32", "maps": ["(d0, d1) -> (d0"]},
            "maps[0]: expected an affine map",
        ),
        (
            DagMatch,
            {"pattern": "^bb0(%a: tensor<?xf32>):\n  %0 = linalg.unknown_op %a : tensor<?xf32>"},
            "pattern: expected a pattern that parses and verifies with IREE 3.13",
        ),
    ],
)
def test_new_matchers_are_validated(model: type, data: dict[str, object], message: str) -> None:
    with pytest.raises(StrategyError) as err:
        model.model_validate(data)
    assert message in str(err.value)


def test_new_models_round_trip_through_yaml() -> None:
    s = SETS["import_fields"]
    assert load_text(dump(s, "yaml")) == s


def load_text(text: str) -> StrategySet:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text(text)
        return load(path)


# --------------------------------------------------------------------------------------
# Compile round trips: same configured dispatches with the original spec and the import


@pytest.mark.compile
@pytest.mark.parametrize(
    ("spec", "payload"),
    [
        ("iree_default_tuning_spec_gfx942.mlir", "mmt_2048x1280x5120_f16.mlir"),
        ("iree_default_tuning_spec_gfx942.mlir", "attention_2x10x4096x64_f16.mlir"),
        ("iree_flux_matmul_spec_mi300.mlir", "mmt_4608x21504x3072_bf16.mlir"),
        ("iree_turbine_boo_conv_tuning_spec.mlir", "mmt_2x448x56_bf16.mlir"),
    ],
)
def test_imported_specs_configure_payloads_like_the_originals(spec: str, payload: str) -> None:
    from tdsl.importer.check import compare, configured

    imported = read_file(SPECS / spec)
    comparison = compare(imported, PAYLOADS / payload)
    assert comparison.same, "\n".join(comparison.differences())
    # The spec configured the op: IREE's default configures it otherwise.
    default = configured(PAYLOADS / payload, imported.strategy_set.target("gfx942").compile_flags())
    assert default != comparison.original


CLEANUP_AFTER_RUN = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_mm(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @act(%op: !transform.any_op {transform.consumed}) {
    %g = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %r = transform.foreach_match in %root @match_mm -> @act : (!transform.any_op) -> !transform.any_op
    transform.apply_dce to %r : !transform.any_op
    transform.yield
  }
}
"""


def test_an_entry_op_after_the_runs_is_refused_after_the_pairs_are_read() -> None:
    """The pairs are read first (their refusal is the one to fix first), then an op the
    entry runs after its foreach_match (module cleanup, say) is refused naming its line."""
    untyped = CLEANUP_AFTER_RUN.replace(
        "%g = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op",
        "transform.structured.vectorize %op : !transform.any_op",
    )
    with pytest.raises(SpecImportError, match="^s.mlir:7: transform.structured.vectorize: "):
        read_spec(untyped, "s.mlir")
    with pytest.raises(SpecImportError) as err:
        read_spec(CLEANUP_AFTER_RUN, "s.mlir")
    assert str(err.value) == (
        "s.mlir:12: transform.apply_dce: an op in the entry point @__transform_main after its foreach_match runs: "
        "tdsl's entry only runs foreach_match (over the root or a function)"
    )


def test_a_per_op_ukernel_choice_imports_back() -> None:
    """CpuLowering(ukernels=False)'s executable-target annotation reads back as the field; the
    re-render is byte-identical."""
    from tdsl import CpuTarget, OpNameMatch, Rule
    from tdsl.strategies.cpu.blocking import mmt4d_tiles

    lowering = mmt4d_tiles("blk", 6, 16, 1, 32, 2).model_copy(update={"ukernels": False})
    s = StrategySet(
        name="s",
        targets=[CpuTarget()],
        rules=[Rule(target="cpu", match=OpNameMatch(names="linalg.mmt4d"), strategy=lowering)],
    )
    ((key, text),) = _scripts(s).items()
    imported = read_spec(text, "s.cpu", target="cpu", targets=s.targets)
    assert imported.strategy_set.rules[0].strategy == lowering
    assert _scripts(imported.strategy_set) == {key: text}
