"""Templates hold layout only: short lines, no switching on kinds or backends, no jinja
namespace bookkeeping; and every registered kind's template exists with its macro."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl.model.registry import LEAF_MATCHER_KINDS, STRATEGY_KINDS
from tdsl.render.environment import has_macro

TEMPLATES = Path(__file__).resolve().parent.parent.parent / "templates"
FORBIDDEN = ("kind ==", ".kind", "backend ==", "namespace(")
MAX_LINE = 160


def _templates() -> list[Path]:
    return sorted(TEMPLATES.rglob("*.mlir.j2"))


def test_the_templates_are_found() -> None:
    names = {p.relative_to(TEMPLATES).as_posix() for p in _templates()}
    assert {"preprocessing.mlir.j2", "tuning_spec.mlir.j2", "codegen_library.mlir.j2"} <= names


@pytest.mark.parametrize("path", _templates(), ids=lambda p: p.relative_to(TEMPLATES).as_posix())
def test_template_lines_are_short(path: Path) -> None:
    long = [(i, len(line)) for i, line in enumerate(path.read_text().splitlines(), start=1) if len(line) > MAX_LINE]
    assert not long, f"{path.name}: lines over {MAX_LINE} characters (line, length): {long}"


@pytest.mark.parametrize("path", _templates(), ids=lambda p: p.relative_to(TEMPLATES).as_posix())
def test_templates_do_not_switch_on_kinds(path: Path) -> None:
    text = path.read_text()
    found = [(needle, i) for i, line in enumerate(text.splitlines(), start=1) for needle in FORBIDDEN if needle in line]
    assert not found, f"{path.name}: (text, line) {found}"


@pytest.mark.parametrize("kind", STRATEGY_KINDS, ids=lambda k: k.__name__)
def test_every_strategy_kind_has_its_template_with_an_action(kind: type) -> None:
    assert (TEMPLATES / kind.template).is_file(), kind.template
    assert has_macro(kind.template, "action"), f"{kind.template} defines no 'action' macro"


@pytest.mark.parametrize("kind", LEAF_MATCHER_KINDS, ids=lambda k: k.__name__)
def test_every_leaf_matcher_kind_has_its_template_with_a_leaf(kind: type) -> None:
    if kind.template is None:  # a scope (FunctionMatch): rendered by the foreach_match
        return
    assert (TEMPLATES / kind.template).is_file(), kind.template
    assert has_macro(kind.template, "leaf"), f"{kind.template} defines no 'leaf' macro"


RENDER = Path(__file__).resolve().parent.parent.parent / "dsl" / "render"


@pytest.mark.parametrize("path", sorted(RENDER.glob("*.py")), ids=lambda p: p.name)
def test_render_code_does_not_switch_on_kind_strings(path: Path) -> None:
    text = path.read_text()
    found = [n for n in ("kind ==", "backend ==", "operand ==", "p ==", "namespace(") if n in text]
    assert not found, f"{path.name}: {found}"
