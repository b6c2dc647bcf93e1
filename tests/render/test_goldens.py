"""Whole-file goldens of every rendered script (templates x strategy kinds x targets).

Regenerate with ``make goldens`` (``pytest --update-goldens``) and read the diff.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from cases import all_sets
from tdsl import Rendered, StrategySet, bindings, render

GOLDENS = Path(__file__).resolve().parent.parent / "goldens" / "render"


@functools.cache
def _sets() -> dict[str, StrategySet]:
    return all_sets()


@functools.cache
def _rendered(name: str, target: str) -> Rendered:
    """Each set rendered once per test process: the golden checks and the stale-file check
    read the same rendering."""
    return render(_sets()[name], target)


def _params() -> list[tuple[str, str]]:
    return [(name, target.name) for name, s in _sets().items() for target in s.targets if s.rules_for(target.name)]


@pytest.mark.parametrize(("name", "target"), _params())
def test_rendered_scripts_match_goldens(golden, name: str, target: str) -> None:
    rendered = _rendered(name, target)
    for script in rendered.scripts:
        golden.check(script.text, f"../goldens/render/{name}.{target}.{script.injection}.mlir")
    flags = "\n".join(rendered.flags("SCRIPTS")).replace(str(Path("SCRIPTS").resolve()), "SCRIPTS") + "\n"
    golden.check(flags, f"../goldens/render/{name}.{target}.flags.txt")


@pytest.mark.e2e
def test_no_stale_goldens() -> None:
    expected = set()
    for name, target in _params():
        rendered = _rendered(name, target)
        expected |= {f"{name}.{target}.{s.injection}.mlir" for s in rendered.scripts}
        expected.add(f"{name}.{target}.flags.txt")
    present = {p.name for p in GOLDENS.iterdir()}
    assert present == expected, f"stale: {sorted(present - expected)}, missing: {sorted(expected - present)}"


@pytest.mark.parametrize("path", sorted(GOLDENS.glob("*.mlir")), ids=lambda p: p.name)
def test_every_golden_parses_and_verifies(path: Path) -> None:
    module = bindings.parse(path.read_text())
    assert "transform.named_sequence" in bindings.print_module(module)
