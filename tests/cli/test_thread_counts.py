"""``--threads``: ``1``, ``all`` (the CPUs this process may use) or a comma list."""

from __future__ import annotations

import argparse
import os

import pytest
from tdsl.cli.arguments import thread_counts


def test_all_is_the_cpus_this_process_may_use() -> None:
    usable = len(os.sched_getaffinity(0))
    assert thread_counts("all") == (usable,)
    assert thread_counts("1, all") == (1, usable) and thread_counts("2,4") == (2, 4)


@pytest.mark.parametrize("text", ["0", "", "1,", "al", "-2", "1.5"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="thread counts"):
        thread_counts(text)
