"""Comparisons of a build's results with a reference: NaN and infinities by position."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from onnx_programs import special_pairs
from tdsl.measure.execute import compare, special_mismatches
from tdsl.measure.numerics import StepComparison, compare_result
from tdsl.programs.signatures import Arg


def _masked_scores() -> np.ndarray:
    """Attention scores under a causal mask: -inf above the diagonal."""
    scores = np.arange(16, dtype=np.float32).reshape(4, 4) / 7
    scores[np.triu_indices(4, 1)] = -np.inf
    return scores


def test_the_same_infinities_agree() -> None:
    ref = _masked_scores()
    out = ref + np.float32(1e-6) * np.isfinite(ref)
    found = compare(out, ref, "f32", "onnxruntime", 0)
    assert found.ok and found.mismatched == ()
    assert 0 < found.max_abs < 2e-6 and np.isfinite(found.max_rel)


def test_nan_in_the_same_places_agrees() -> None:
    ref = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare(ref.copy(), ref, "f32", "numpy", 0).ok


def test_one_sided_infinities_are_named() -> None:
    ref = _masked_scores()
    out = ref.copy()
    out[np.triu_indices(4, 1)] = 0.0
    found = compare(out, ref, "f32", "onnxruntime", 0)
    assert not found.ok and found.max_abs == 0.0
    assert found.mismatched == ("6 positions are finite in the build and -inf in the reference",)


def test_nan_against_a_number_and_opposite_infinities_differ() -> None:
    out = np.array([np.nan, np.inf, 1.0, -np.inf], np.float32)
    ref = np.array([1.0, -np.inf, 1.0, -np.inf], np.float32)
    found = compare(out, ref, "f32", "iree-default", 0)
    assert not found.ok
    assert found.mismatched == (
        "1 position is NaN in the build and finite in the reference",
        "1 position is +inf in the build and -inf in the reference",
    )


def test_a_quantized_result_keeps_its_mismatches() -> None:
    found = compare_result(
        np.array([np.inf, 1.0]), np.array([1.0, 1.0]), Arg(0, "y", (2,), "f32", step=0.5), "onnxruntime", 0
    )
    assert isinstance(found, StepComparison) and not found.ok and found.mismatched


def test_errors_are_over_the_finite_positions() -> None:
    out = np.array([np.inf, 2.0, 5.0], np.float64)
    ref = np.array([np.inf, 1.0, 5.0], np.float64)
    found = compare(out, ref, "f64", "numpy", 0)
    assert found.max_abs == 1.0 and found.max_rel == 1.0 / 5.0


@settings(max_examples=300, deadline=None)
@given(special_pairs())
def test_agreement_is_by_position(pair: tuple[np.ndarray, np.ndarray]) -> None:
    """Same kind (finite, NaN, +inf, -inf) at every position: only the finite errors count;
    any position of different kinds is counted in exactly one line."""
    out, ref = pair
    found = compare(out, ref, "f32", "reference", 0)
    kinds = [np.isnan(x) * 1 + (x == np.inf) * 2 + (x == -np.inf) * 3 for x in (out, ref)]
    differing = int((kinds[0] != kinds[1]).sum())
    assert sum(int(line.split()[0]) for line in found.mismatched) == differing
    assert found.ok == (differing == 0)  # finite values differ by at most 1e-6 relative to 4
    both = np.isfinite(out) & np.isfinite(ref)
    want = float(np.abs(out[both].astype(np.float64) - ref[both]).max()) if both.any() else 0.0
    assert found.max_abs == want and np.isfinite(found.max_abs)
    assert special_mismatches(out.astype(np.float64), ref.astype(np.float64)) == found.mismatched
