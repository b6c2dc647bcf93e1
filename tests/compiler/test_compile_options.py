"""CompileOptions (tdsl.compiler.options): one frozen value for every iree-compile run,
checked once when made; the public functions keep their keyword arguments."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
import tdsl
from tdsl.compiler.options import DEFAULT_MEMORY_GB, DEFAULT_OPTIONS, DEFAULT_TIMEOUT_S, CompileOptions
from tdsl.errors import ArgumentError


def test_defaults_and_frozen() -> None:
    assert DEFAULT_OPTIONS == CompileOptions(
        timeout_s=DEFAULT_TIMEOUT_S, memory_gb=DEFAULT_MEMORY_GB, extra_flags=(), serial_loading=True
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_OPTIONS.timeout_s = 1.0  # type: ignore[misc]


def test_flags_are_kept_as_a_tuple() -> None:
    options = CompileOptions(extra_flags=["--iree-opt-level=O2"])  # type: ignore[arg-type]
    assert options.extra_flags == ("--iree-opt-level=O2",)
    assert hash(options) == hash(CompileOptions(extra_flags=("--iree-opt-level=O2",)))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"timeout_s": 0}, "timeout_s: expected a positive number of seconds, received 0"),
        ({"timeout_s": float("inf")}, "timeout_s: expected a positive number of seconds, received inf"),
        ({"memory_gb": -1.0}, "memory_gb: expected a positive number of GiB, received -1.0"),
        ({"memory_gb": "16"}, "memory_gb: expected a positive number of GiB, received '16'"),
        (
            {"extra_flags": "--iree-opt-level=O2"},
            "extra_flags: expected a sequence of iree-compile flags, received the string '--iree-opt-level=O2'",
        ),
        (
            {"extra_flags": ("O2",)},
            "extra_flags: expected iree-compile options such as --iree-opt-level=O3, received 'O2'",
        ),
        ({"serial_loading": "no"}, "serial_loading: expected True or False, received 'no'"),
    ],
)
def test_bad_values_are_refused_when_made(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ArgumentError) as err:
        CompileOptions(**changes)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_public_functions_keep_their_keywords() -> None:
    for function in (tdsl.compile, tdsl.run, tdsl.bench):
        parameters = inspect.signature(function).parameters
        assert {"timeout_s", "memory_gb", "extra_flags", "serial_loading"} <= set(parameters), function.__name__
        assert "options" not in parameters
        assert (
            parameters["timeout_s"].default == DEFAULT_TIMEOUT_S
            and parameters["memory_gb"].default == DEFAULT_MEMORY_GB
        )


def test_a_bad_value_through_the_public_api_fails_before_any_work(tmp_path) -> None:
    with pytest.raises(ArgumentError, match="timeout_s"):
        tdsl.compile(tmp_path / "missing.mlir", None, "cpu", timeout_s=-1)
