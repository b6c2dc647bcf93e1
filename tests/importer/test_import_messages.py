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
            "s.mlir:1: a transform-dialect spec (transform.named_sequence ops), received not a transform spec: it holds func.func",
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
