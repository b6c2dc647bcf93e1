"""Program knobs: what a target changes against IREE's defaults, who chose it, how to turn it off."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tdsl.errors import StrategyError
from tdsl.strategies.cpu import auto
from tdsl.targets import AmdGpuTarget, CpuTarget
from tdsl.targets.knobs import knobs_line, program_knobs, without_ready_knobs


def test_a_default_target_has_no_knobs() -> None:
    assert program_knobs(CpuTarget()) == ()
    assert program_knobs(AmdGpuTarget()) == ()
    assert knobs_line(()) == "IREE's defaults"


def test_user_knobs_name_their_flag_and_how_to_turn_them_off() -> None:
    [tiling, large] = program_knobs(CpuTarget(data_tiling=True, allow_large_vectors=True))
    assert (tiling.field, tiling.flags, tiling.optional) == ("data_tiling", ("--iree-opt-data-tiling",), False)
    assert tiling.phrase() == "data tiling on"
    assert tiling.origin == "target 'cpu'"
    assert tiling.turn_off() == "data_tiling=False or --iree-flag=--iree-opt-data-tiling=false"
    assert large.turn_off() == ("allow_large_vectors=False or --iree-flag=--iree-llvmcpu-fail-on-large-vector=true")
    [ukernels] = program_knobs(CpuTarget(ukernels="none"))
    assert ukernels.phrase() == "ukernels none"
    assert ukernels.turn_off() == "ukernels='default'"  # a valued flag has no override to print


def test_peeling_is_a_knob_with_its_flag_off_in_the_baseline() -> None:
    """peel_vector_loops adds IREE's peeling flag; the baseline (IREE default) drops it."""
    target = CpuTarget(peel_vector_loops=True)
    [peel] = program_knobs(target)
    assert (peel.field, peel.flags) == ("peel_vector_loops", ("--iree-llvmcpu-vector-pproc-strategy=peel",))
    assert peel.phrase() == "peel vector loops on"
    assert peel.turn_off() == "peel_vector_loops=False"  # a valued flag has no override to print
    assert "--iree-llvmcpu-vector-pproc-strategy=peel" not in target.baseline().compile_flags()
    with pytest.raises(StrategyError, match="peel_vector_loops"):
        CpuTarget(peel_vector_loops="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("isa", ["avx512", "avx2", "neon", "generic"])
def test_auto_peels_only_where_it_measured_a_win(isa: str) -> None:
    """auto() peels on AVX2 only (measured there), as an optional knob, in both of its bases."""
    from tdsl.strategies.cpu.measured import CHOICES

    for packed in (False, True):
        [target] = auto(isa=isa, pack_matmuls=packed).targets  # type: ignore[arg-type]
        assert isinstance(target, CpuTarget)
        assert target.peel_vector_loops == CHOICES[isa].peel_vector_loops == (isa == "avx2")  # type: ignore[index]
        assert ("peel_vector_loops" in target.ready_knobs) == (isa == "avx2")
        assert not without_ready_knobs(target).peel_vector_loops


@pytest.mark.parametrize("isa", ["avx512", "avx2", "neon", "generic"])
def test_auto_marks_the_knobs_it_chose_as_optional(isa: str) -> None:
    [target] = auto(isa=isa).targets  # type: ignore[arg-type]
    knobs = program_knobs(target)
    assert knobs, "auto() builds with data tiling on every ISA"
    chosen = {k.field for k in knobs if k.optional}
    assert "data_tiling" in chosen
    assert all(k.origin.startswith("auto(), ") for k in knobs if k.optional)
    plain = without_ready_knobs(target)
    assert all(getattr(plain, f) == getattr(CpuTarget(), f) for f in chosen)
    assert plain.ready_knobs == () and plain.ready_origin == ""


def test_knobs_a_caller_asked_for_are_not_optional() -> None:
    [target] = auto(isa="avx512", im2col_convs=True).targets
    by_field = {k.field: k for k in program_knobs(target)}
    assert not by_field["im2col_convs"].optional
    assert by_field["data_tiling"].optional
    [packed] = auto(isa="avx2", pack_matmuls=True).targets
    assert "ukernels" not in packed.ready_knobs  # the packing rules need it


def test_ready_knobs_must_name_fields_and_an_origin() -> None:
    with pytest.raises(StrategyError, match=r"ready_knobs\[0\]: expected a field of this target"):
        CpuTarget(ready_knobs=("name",), ready_origin="x")
    with pytest.raises(StrategyError, match="ready_origin: expected a name"):
        CpuTarget(data_tiling=True, ready_knobs=("data_tiling",))


@given(
    data_tiling=st.booleans(),
    im2col=st.booleans(),
    large=st.booleans(),
    peel=st.booleans(),
    ukernels=st.sampled_from(["default", "none", "mmt4d", "all"]),
    optional=st.sets(
        st.sampled_from(["data_tiling", "im2col_convs", "allow_large_vectors", "peel_vector_loops", "ukernels"])
    ),
)
def test_knobs_are_exactly_the_fields_off_iree_defaults(
    data_tiling: bool, im2col: bool, large: bool, peel: bool, ukernels: str, optional: set[str]
) -> None:
    target = CpuTarget(
        data_tiling=data_tiling,
        im2col_convs=im2col,
        allow_large_vectors=large,
        peel_vector_loops=peel,
        ukernels=ukernels,  # type: ignore[arg-type]
        ready_knobs=tuple(sorted(optional)),
        ready_origin="auto(), AVX2" if optional else "",
    )
    knobs = program_knobs(target)
    expected = {
        f
        for f, on in [
            ("data_tiling", data_tiling),
            ("im2col_convs", im2col),
            ("allow_large_vectors", large),
            ("peel_vector_loops", peel),
        ]
        if on
    }
    expected |= {"ukernels"} if ukernels != "default" else set()
    assert {k.field for k in knobs} == expected
    for knob in knobs:
        assert knob.flags and all(flag in target.compile_flags() for flag in knob.flags)
        assert knob.optional == (knob.field in optional)
    plain = without_ready_knobs(target)
    assert {k.field for k in program_knobs(plain)} == expected - optional
    assert all(not k.optional for k in program_knobs(plain))


def test_the_knob_hint_stays_out_of_errors_that_name_a_field() -> None:
    from tdsl.compiler.diagnostics import CompilerDiagnostic
    from tdsl.compiler.iree_compile import CompileFailed, CompileResult
    from tdsl.compiler.knob_fallback import with_knob_hint

    def failure(field: str | None) -> CompileFailed:
        diagnostic = CompilerDiagnostic("error", "boom", strategy_field=field)
        result = CompileResult(("iree-compile",), 1, "error: boom", (diagnostic,), 0.1, None)
        return CompileFailed("iree-compile failed (exit 1): boom; full output in /tmp/x/iree-compile.log", result)

    mine = CpuTarget(data_tiling=True)
    hinted = str(with_knob_hint(failure(None), mine))
    assert hinted == (
        "iree-compile failed (exit 1): boom [program knobs in force: data tiling on (turn off: data_tiling=False or "
        "--iree-flag=--iree-opt-data-tiling=false)]; full output in /tmp/x/iree-compile.log"
    )
    named = failure("mine.rules[0]")
    assert with_knob_hint(named, mine) is named
    plain = failure(None)
    assert with_knob_hint(plain, CpuTarget()) is plain
