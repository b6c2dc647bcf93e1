"""The program-level flags an f64 program calls for, and a user's flag winning."""

from __future__ import annotations

from pathlib import Path

from tdsl.programs.precision import DEMOTE_F64, KEEP_F64, program_flags

F64 = """func.func @f(%a: tensor<4xf64>) -> tensor<4xf64> {
  return %a : tensor<4xf64>
}
"""
F32_WITH_BLOB = """func.func @f() -> tensor<2xf32> {
  %c = arith.constant dense<0xaf64b0f64000000ff> : tensor<2xf32>
  return %c : tensor<2xf32>
}
"""
F64_INSIDE = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %d = arith.extf %a : tensor<4xf32> to tensor<4xf64>
  %r = arith.truncf %d : tensor<4xf64> to tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_an_f64_signature_keeps_f64(tmp_path: Path) -> None:
    payload = tmp_path / "f64.mlir"
    payload.write_text(F64)
    assert program_flags(payload) == (KEEP_F64,)
    assert program_flags(payload, ["--iree-opt-level=O3"]) == (KEEP_F64,)


def test_the_users_flag_wins(tmp_path: Path) -> None:
    payload = tmp_path / "f64.mlir"
    payload.write_text(F64)
    assert program_flags(payload, [f"{DEMOTE_F64}=true"]) == ()
    assert program_flags(payload, [DEMOTE_F64]) == ()


def test_no_flag_without_f64_in_the_signatures(tmp_path: Path) -> None:
    """f32 signatures (a weight blob whose hex spells f64, f64 only inside), an unreadable
    payload: nothing added."""
    for name, text in (("blob", F32_WITH_BLOB), ("inside", F64_INSIDE)):
        payload = tmp_path / f"{name}.mlir"
        payload.write_text(text)
        assert program_flags(payload) == ()
    assert program_flags(tmp_path / "missing.mlir") == ()


def test_an_edited_payload_is_read_again(tmp_path: Path) -> None:
    payload = tmp_path / "p.mlir"
    payload.write_text(F64_INSIDE)
    assert program_flags(payload) == ()
    payload.write_text(F64 + "\n")  # another size: another cache key
    assert program_flags(payload) == (KEEP_F64,)
