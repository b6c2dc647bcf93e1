"""golden.filecheck: FileCheck from the filecheck package (a runtime dependency); a failure
names the check line and shows the input around where FileCheck searched from."""

from __future__ import annotations

import pytest
from tdsl.testing import Golden
from tdsl.testing.golden import filecheck_failure

TEXT = "\n".join(f"%{i} = arith.addi %a{i}, %b{i} : i32" for i in range(1, 21)) + "\n"


def test_filecheck_passes(golden: Golden) -> None:
    golden.filecheck(TEXT, "CHECK: %5 = arith.addi\nCHECK-NEXT: %6 = arith.addi\n")


def test_filecheck_flags_reach_filecheck(golden: Golden) -> None:
    golden.filecheck(TEXT, "MINE: %20 = arith.addi", "--check-prefix=MINE")


def test_filecheck_failure_points_at_the_check_and_the_input(golden: Golden) -> None:
    checks = "CHECK: %5 = arith.addi\nCHECK-NEXT: %9 = arith.addi\n"
    with pytest.raises(pytest.fail.Exception) as failed:
        golden.filecheck(TEXT, checks)
    message = str(failed.value)
    lines = message.splitlines()
    assert lines[0] == "FileCheck failed at check line 2: CHECK-NEXT: %9 = arith.addi"
    assert "error:" in lines[1] and "%9 = arith.addi" in lines[1]
    assert "input around line 6" in message
    assert "> 6 | %6 = arith.addi %a6, %b6 : i32" in message
    assert "  3 | %3 = arith.addi" in message and "  9 | %9 = arith.addi" in message
    assert "tdsl-filecheck-" not in message  # no temporary path to chase


def test_failure_text_without_a_position() -> None:
    text = filecheck_failure("something odd happened\n", "a\nb\n", "CHECK: x\n")
    assert text.startswith("FileCheck failed") and "something odd happened" in text
