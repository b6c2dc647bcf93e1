"""Round trips: model -> JSON/YAML -> model -> render is byte-identical, rendering is
deterministic, and render -> parse -> print is a fixed point."""

from __future__ import annotations

import pytest
from cases import all_sets
from tdsl import CallReplacement, StrategySet, bindings, dump, load, render

SETS = all_sets()


def _targets(s: StrategySet) -> list[str]:
    return [t.name for t in s.targets if s.rules_for(t.name)]


def _texts(s: StrategySet) -> dict[str, list[str]]:
    return {t: [x.text for x in render(s, t).scripts] for t in _targets(s)}


@pytest.mark.parametrize("name", sorted(SETS))
def test_json_round_trip_renders_identically(name: str) -> None:
    s = SETS[name]
    again = StrategySet.model_validate_json(s.model_dump_json())
    assert again == s
    assert _texts(again) == _texts(s)


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_file_round_trip_renders_identically(tmp_path, name: str, fmt: str) -> None:
    s = SETS[name]
    path = tmp_path / f"set.{fmt}"
    path.write_text(dump(s, fmt))
    again = load(path)
    assert again == s
    assert _texts(again) == _texts(s)


@pytest.mark.parametrize("name", sorted(SETS))
def test_rendering_is_deterministic(name: str) -> None:
    s = SETS[name]
    rebuilt = StrategySet.model_validate(s.model_dump())
    assert _texts(s) == _texts(rebuilt) == _texts(s)


@pytest.mark.parametrize("name", sorted(SETS))
def test_render_parse_print_is_a_fixed_point(name: str) -> None:
    for texts in _texts(SETS[name]).values():
        for text in texts:
            printed = bindings.print_module(bindings.parse(text))
            assert bindings.print_module(bindings.parse(printed)) == printed
            with_locations = bindings.print_module(bindings.parse(text), debug_info=True)
            assert bindings.print_module(bindings.parse(with_locations), debug_info=True) == with_locations


def test_every_op_carries_a_strategy_location() -> None:
    for s in SETS.values():
        payload = {n for r in s.rules if isinstance(r.strategy, CallReplacement) for n in r.strategy.symbol_names()}
        for texts in _texts(s).values():
            for text in texts:
                for op in bindings.walk(text):
                    if op.location == "loc(unknown)" and payload:
                        # the bodies that named linalg ops (of a call replacement's pattern and
                        # payload functions) build themselves, never printed
                        continue
                    assert op.location.startswith('loc("') and ":" not in op.location, (
                        f"{op.name} has no strategy location: {op.location}"
                    )
