"""``CallReplacement`` (issue 38): a preprocessing rule that replaces a matched DAG with a
call to a payload function the set carries, and ``tdsl import`` of IREE's mlp_plugin spec
(examples/specs/iree_mlp_spec_matmul_preprocessing.mlir), which does that with
``import_symbol`` + ``cast_and_call``.

* the spec imports fully typed: a ``DagMatch`` and a ``CallReplacement`` carrying its
  ``stream.executable`` and ``util.func``; the entry's ``apply_dce`` / ``inline`` are the
  kind's own cleanup (noted), any other entry op is still refused;
* the compile tests check that the import rewrites a dynamic and a static fill+matmul
  and the f32 MatMul of an imported ONNX model exactly as the original (the IR after IREE's preprocessing phase, op by op; the plugin
  itself is not needed) and that the original rewrites them at all;
* an action outside the form, or a spec read as another injection, is refused in one line
  (op, line), and the kind refuses a function it does not carry or of the wrong arity.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import CallReplacement, render
from tdsl.cli import main
from tdsl.errors import StrategyError
from tdsl.importer import SpecImportError, read_file, read_spec
from tdsl.model.matchers import DagMatch

ROOT = Path(__file__).resolve().parent.parent.parent
SPEC = ROOT / "examples" / "specs" / "iree_mlp_spec_matmul_preprocessing.mlir"
PAYLOADS = ROOT / "tests" / "payloads" / "import"


def test_the_mlp_plugin_spec_imports_as_a_call_replacement() -> None:
    imported = read_file(SPEC)
    assert not imported.raw
    (rule,) = imported.strategy_set.rules
    assert isinstance(rule.match, DagMatch)
    strategy = rule.strategy
    assert isinstance(strategy, CallReplacement)
    assert strategy.function == "call_mlp" and strategy.symbol_names() == ["executable", "call_mlp"]
    assert strategy.pattern == rule.match.pattern
    notes = "\n".join(imported.report())
    assert ":106: transform.apply_dce: the cleanup CallReplacement runs after its rules" in notes
    script = render(imported.strategy_set, "cpu").script("preprocessing")
    assert script is not None
    assert "stream.executable private @executable" in script.text
    assert 'transform.apply_registered_pass "inline"' in script.text


def _spec(after_call: str = "", entry_tail: str = "") -> str:
    text = SPEC.read_text()
    text = text.replace(
        "    } : (!transform.any_op, !transform.any_value, !transform.any_value, !transform.any_op) -> !transform.any_op\n",
        "    } : (!transform.any_op, !transform.any_value, !transform.any_value, !transform.any_op) -> !transform.any_op\n"
        + after_call,
        1,
    )
    return text.replace("    transform.yield\n  }\n}", entry_tail + "    transform.yield\n  }\n}")


def test_an_action_outside_the_form_is_refused_in_one_line() -> None:
    extra = '    transform.annotate %root "mark" : !transform.any_op\n'
    with pytest.raises(SpecImportError) as err:
        read_spec(_spec(after_call=extra), "mlp.mlir")
    assert str(err.value).startswith("mlp.mlir:84: transform.annotate: no op after the cast_and_call")
    with pytest.raises(SpecImportError, match=r"^mlp.mlir:\d+: transform.util.import_symbol: a preprocessing spec"):
        read_spec(SPEC.read_text(), "mlp.mlir", kind="tuning_spec")


def test_other_entry_ops_after_the_runs_are_still_refused() -> None:
    extra = '    transform.apply_registered_pass "canonicalize" to %module : (!transform.any_op) -> !transform.any_op\n'
    with pytest.raises(SpecImportError, match=r"^mlp.mlir:\d+: transform.apply_registered_pass: an op in the entry"):
        read_spec(_spec(entry_tail=extra), "mlp.mlir")


def test_the_command_line_imports_it(tmp_path: Path, capsys) -> None:
    out = tmp_path / "mlp.py"
    assert main(["import", str(SPEC), "-o", str(out), "-q"]) == 0
    assert "CallReplacement(" in out.read_text()


def test_the_kind_refuses_a_function_it_does_not_carry_or_of_another_arity() -> None:
    strategy = read_file(SPEC).strategy_set.rules[0].strategy
    assert isinstance(strategy, CallReplacement)
    with pytest.raises(StrategyError, match="function: expected the name of a util.func among symbols"):
        CallReplacement(name="c", pattern=strategy.pattern, function="executable", symbols=strategy.symbols)
    two = strategy.pattern.replace(", %arg3: tensor<?x?xf32>", "").replace("outs(%arg3", "outs(%arg2")
    with pytest.raises(StrategyError, match="function: expected a util.func taking the pattern's 2 block arguments"):
        CallReplacement(name="c", pattern=two, function="call_mlp", symbols=strategy.symbols)


@pytest.mark.compile
@pytest.mark.parametrize("payload", ["mlp_fill_matmul_Dx_f32.mlir", "mlp_fill_matmul_64x48x32_f32.mlir"])
def test_the_import_rewrites_fill_matmuls_like_the_original(payload: str) -> None:
    from tdsl.importer.check import compare, rewritten

    imported = read_file(SPEC)
    comparison = compare(imported, PAYLOADS / payload)
    assert comparison.same, "\n".join(comparison.differences())
    assert any("flow.dispatch" in c.op for c in comparison.original)
    assert rewritten(PAYLOADS / payload, imported.strategy_set.target("cpu").compile_flags()) != comparison.original


@pytest.mark.compile
def test_the_import_rewrites_an_onnx_matmul_like_the_original(tmp_path: Path) -> None:
    """What a frontend gives: the f32 MatMul of an exported ONNX model (iree-import-onnx)."""
    from tdsl.importer.check import compare, rewritten
    from tdsl.programs.onnx_import import import_onnx

    payload = tmp_path / "dynamic_linear.mlir"
    import_onnx(ROOT / "tests" / "payloads" / "onnx" / "dynamic_linear.onnx", payload, timeout_s=120)
    imported = read_file(SPEC)
    comparison = compare(imported, payload)
    assert comparison.same, "\n".join(comparison.differences())
    assert rewritten(payload, imported.strategy_set.target("cpu").compile_flags()) != comparison.original


def test_a_set_refuses_two_rules_defining_one_payload_symbol() -> None:
    from tdsl import StrategySet

    rule = read_file(SPEC).strategy_set.rules[0]
    with pytest.raises(StrategyError, match=r"rules\[1\]\.strategy\.symbols: expected payload symbols no other rule"):
        StrategySet(name="twice", rules=[rule, rule])
