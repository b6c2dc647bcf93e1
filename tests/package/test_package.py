"""The package as a user meets it: a guessable top-level API, --version, python -m tdsl,
one error hierarchy, output files with the umask's mode, target facts that hold."""

from __future__ import annotations

import inspect
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest
import tdsl
from tdsl import bindings, errors
from tdsl.files import atomic_write, staged
from tdsl.model.element_types import ELEMENT_BITS, element_bytes
from tdsl.targets import GFX942, MmaIntrinsic


def test_public_api_is_at_top_level_and_in_help() -> None:
    text = pydoc.render_doc(tdsl, renderer=pydoc.plaintext)
    for name in ("render", "compile", "run", "bench", "load", "dump"):
        assert callable(getattr(tdsl, name)), name
        assert name in tdsl.__all__
        assert f"{name}(" in text, f"help(tdsl) does not list {name}"
    assert inspect.signature(tdsl.compile).parameters["target"]
    assert tdsl.__version__ and tdsl.__version__[0].isdigit()
    assert (Path(tdsl.__file__).parent / "py.typed").is_file()


@pytest.mark.e2e
def test_version_and_python_dash_m() -> None:
    out = subprocess.run([sys.executable, "-m", "tdsl", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith(f"tdsl {tdsl.__version__} (iree-base-compiler 3.13.0)")
    help_text = subprocess.run(
        [sys.executable, "-m", "tdsl", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "render" in help_text and "compile" in help_text


def test_every_error_class_is_a_tdsl_error() -> None:
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, BaseException)]
    assert len(classes) >= 10
    assert all(issubclass(c, errors.TdslError) for c in classes)
    from tdsl.compiler.iree_compile import CompileFailed
    from tdsl.measure.numerics import NumericsFailed

    assert issubclass(CompileFailed, errors.TdslError) and issubclass(NumericsFailed, errors.RunFailed)
    with pytest.raises(errors.ParseFailure) as failure:
        bindings.parse("module {\n  func.func @f( {\n}\n")
    assert isinstance(failure.value, errors.TdslError) and failure.value.diagnostics[0].line == 2


def test_dynamic_shapes_are_a_payload_error() -> None:
    payload = "func.func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {\n  return %a : tensor<?x4xf32>\n}\n"
    with pytest.raises(errors.PayloadError, match=r"received tensor<\?x4xf32> \(dynamic shapes are not supported\)"):
        bindings.signatures(payload)


def test_outputs_get_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        written = atomic_write(tmp_path / "a" / "script.mlir", "x")
        assert written.stat().st_mode & 0o777 == 0o644
        os.umask(0o027)
        with staged(tmp_path / "module.vmfb") as tmp:
            tmp.write_bytes(b"vmfb")
        assert (tmp_path / "module.vmfb").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "module.vmfb"]


def test_a_failed_stage_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with staged(tmp_path / "out.vmfb") as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("compile failed")
    assert list(tmp_path.iterdir()) == []


def test_element_sizes_are_known_or_refused() -> None:
    assert MmaIntrinsic.from_name("MFMA_F64_16x16x4_F64").element_bytes == 8
    assert MmaIntrinsic.from_name("MFMA_F32_16x16x16_BF16").element_bytes == 2
    assert MmaIntrinsic.from_name("MFMA_I32_16x16x32_I8").element_bytes == 1
    assert element_bytes("i4") == 1 and element_bytes("i64") == 8
    assert set(ELEMENT_BITS) >= {"f64", "f32", "f16", "bf16", "i8"}
    with pytest.raises(errors.TdslError, match="element type: expected one of"):
        element_bytes("f128")


def test_gpu_facts_are_target_facts() -> None:
    assert GFX942.compute_units == 304
    assert GFX942.waves_per_simd(0) == GFX942.max_waves_per_simd == 8
