"""The classes the strategy and compile fuzz found, each a field error before rendering:
an empty or comment-only raw ``sequence``, an ``llvm_func_attrs`` key that is no LLVM
attribute name (its path printed as the key), a convolution tile on a reduction loop in a
parallel level (where the matcher fixes the loop order), and ``specialize`` on a packed
contraction whose operands' layout the matcher does not fix."""

from __future__ import annotations

from typing import Any

import pytest
from tdsl import StrategyError, StrategySet

F32 = {"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32"}
CONV = {"kind": "convolution", **F32, "batch": [2], "output_image": [32, 32], "output_channel": [64]}
CONV |= {"filter": [3, 3], "input_channel": [32]}
CONV_MAPS = [
    "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>",
    "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>",
    "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>",
]
MATMUL = {"kind": "contraction", **F32, "batch": [], "m": 256, "n": 384, "k": 512}


def _set(target: str, match: dict[str, Any], strategy: dict[str, Any]) -> dict[str, Any]:
    targets = [{"kind": "llvm-cpu", "name": "cpu", "ukernels": "none"}, {"kind": "rocm", "name": "gfx942"}]
    return {"name": "s", "targets": targets, "rules": [{"target": target, "match": match, "strategy": strategy}]}


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(StrategyError) as caught:
        StrategySet.model_validate(data)
    text = str(caught.value)
    assert "\n" not in text, text
    return text


@pytest.mark.parametrize("kind", ["raw_tuning_action", "raw_preprocessing_action", "raw_codegen_action"])
@pytest.mark.parametrize("sequence", ["", "  \n", "// only a comment\n"])
def test_an_empty_raw_sequence_is_a_field_error(kind: str, sequence: str) -> None:
    data = _set(
        "cpu", {"kind": "op_name", "names": ["linalg.matmul"]}, {"kind": kind, "name": "r", "sequence": sequence}
    )
    assert _error(data) == (
        "invalid strategy: r.sequence: expected one transform.named_sequence (an action), "
        "received no op (empty or only comments)"
    )


def test_a_raw_matcher_that_is_empty_or_a_declaration_is_a_field_error() -> None:
    strategy = {"kind": "cpu_lowering", "name": "c", "distribution": [8, 8, 0]}
    empty = _set("cpu", {"kind": "raw", "sequence": "// nothing"}, strategy)
    assert "s.rules[0].match.sequence: expected one transform.named_sequence (a matcher)" in _error(empty)
    declared = "transform.named_sequence private @m(%a: !transform.any_op {transform.readonly}) -> !transform.any_op"
    assert "received a declaration" in _error(_set("cpu", {"kind": "raw", "sequence": declared}, strategy))


@pytest.mark.parametrize(
    ("key", "path"), [("a b", "['a b']"), ("", "['']"), ('x"y', "['x\"y']"), ("a\nb", "['a\\nb']")]
)
def test_an_llvm_func_attrs_key_is_printed_as_the_key(key: str, path: str) -> None:
    strategy = {"kind": "gpu_lowering", "name": "g", "workgroup_size": [256, 1, 1], "workgroup": [64, 64, 0]}
    strategy |= {"reduction": [0, 0, 16], "thread": [4, 4, 0], "llvm_func_attrs": {key: "1"}}
    text = _error(_set("gfx942", {"kind": "op_name", "names": ["linalg.matmul"]}, strategy))
    assert text.startswith(f"invalid strategy: g.llvm_func_attrs{path}: expected an LLVM function attribute name"), text


def test_an_llvm_func_attrs_value_names_its_key() -> None:
    strategy = {"kind": "gpu_lowering", "name": "g", "workgroup_size": [256, 1, 1], "workgroup": [64, 64, 0]}
    strategy |= {"reduction": [0, 0, 16], "thread": [4, 4, 0], "llvm_func_attrs": {"amdgpu-waves-per-eu": "0"}}
    text = _error(_set("gfx942", {"kind": "op_name", "names": ["linalg.matmul"]}, strategy))
    assert text.startswith("invalid strategy: g.llvm_func_attrs['amdgpu-waves-per-eu']: expected 'N' or 'MIN,MAX'")


NAMED_CONV = {"kind": "all_of", "matchers": [CONV, {"kind": "op_name", "names": ["linalg.conv_2d_nhwc_hwcf"]}]}


@pytest.mark.parametrize(
    ("kind", "match"),
    [
        ("cpu_lowering", CONV | {"maps": CONV_MAPS}),
        ("graph_cpu_lowering", CONV | {"maps": CONV_MAPS}),
        ("graph_cpu_lowering", NAMED_CONV),  # a codegen-time rule cannot name linalg.conv_*
    ],
    ids=["maps-codegen", "maps-graph", "named-graph"],
)
def test_a_distribution_tile_on_a_convolution_reduction_loop_is_a_field_error(kind: str, match: dict[str, Any]) -> None:
    data = _set("cpu", match, {"kind": kind, "name": "c0", "distribution": [1, 8, 32, 64, 0, 0, 8]})
    assert _error(data).startswith(
        "invalid strategy: c0.distribution[6]: expected 0: loop 6 of the matched convolution is a reduction loop"
    )
    data["rules"][0]["strategy"]["distribution"] = [1, 8, 32, 64, 0, 0, 0]
    data["rules"][0]["strategy"]["vector_reduction"] = [0, 0, 0, 0, 1, 1, 8]
    StrategySet.model_validate(data)


def test_a_convolution_matcher_without_its_loop_order_leaves_the_check_to_iree() -> None:
    """A generic convolution may order its loops otherwise: the tile is accepted here and
    IREE's error is mapped back to the field (tests/compiler/test_dispatch_errors.py)."""
    StrategySet.model_validate(
        _set("cpu", CONV, {"kind": "cpu_lowering", "name": "c0", "distribution": [1, 8, 32, 64, 0, 0, 8]})
    )


@pytest.mark.parametrize("generalize", [False, True])
def test_specialize_of_a_packed_op_of_unknown_loops_is_a_field_error(generalize: bool) -> None:
    """IREE makes linalg.mmt4d of the packed op whatever its operands' layout; a matcher
    that fixes no loops (an open batch) leaves pack_transposes unchecked: refused."""
    strategy: dict[str, Any] = {"kind": "data_layout", "name": "d0", "specialize": True}
    strategy["pack"] = {"kind": "pack", "packed_sizes": [8, 16, 4]}
    if generalize:
        strategy |= {"generalize": True, "interchange": [1, 0, 2]}
    match = {k: v for k, v in MATMUL.items() if k != "batch"}
    text = _error(_set("cpu", match, strategy))
    assert text.startswith("invalid strategy: d0.specialize: expected a matcher that fixes the loops"), text


def test_specialize_without_operand_layout_checks_the_transposes_against_matmuls_layout() -> None:
    strategy = {"kind": "data_layout", "name": "d0", "specialize": True}
    strategy |= {"pack": {"kind": "pack", "packed_sizes": [8, 16, 4]}}
    text = _error(_set("cpu", MATMUL, strategy))
    assert "with linalg.matmul's layout (the matcher has no operand_layout) these pack the rhs" in text, text
    strategy["pack_transposes"] = [{"operand": "rhs", "outer_perm": [1, 0]}]
    StrategySet.model_validate(_set("cpu", MATMUL, strategy))


def test_specialize_with_the_layout_known_still_checks_the_transposes() -> None:
    strategy = {"kind": "data_layout", "name": "d0", "specialize": True}
    strategy |= {"pack": {"kind": "pack", "packed_sizes": [8, 16, 4]}}
    match = MATMUL | {"operand_layout": "mk_kn"}
    assert "d0.pack_transposes: expected the transposes that give linalg.mmt4d's layout" in _error(
        _set("cpu", match, strategy)
    )
    strategy["pack_transposes"] = [{"operand": "rhs", "outer_perm": [1, 0]}]
    StrategySet.model_validate(_set("cpu", match, strategy))
    # a pack of two loops leaves a linalg.generic: nothing to specialize to mmt4d, nothing to check
    strategy = {
        "kind": "data_layout",
        "name": "d0",
        "specialize": True,
        "pack": {"kind": "pack", "packed_sizes": [8, 0, 4]},
    }
    StrategySet.model_validate(_set("cpu", MATMUL, strategy))
