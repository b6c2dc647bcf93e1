"""The one jinja2 environment over the packaged templates (``tdsl.templates``).

StrictUndefined, ``trim_blocks``, ``lstrip_blocks``, ``keep_trailing_newline``, no
autoescaping. Filters: ``ints`` (``[1, 2]``), ``strings`` (``["a", "b"]``), ``quote``
(``"a"``), ``names`` / ``types`` (the names or types of a sequence of
:class:`~tdsl.render.plan.Handle`, comma separated). Globals: ``loc(*parts)``
(``loc("mm.tiling[0]")``), ``macro(template, name)`` (a macro of another template: the
table lookup by which a plan's macro name picks what renders a step) and the marker
names of :mod:`tdsl.render.markers`. Reads template files; emits nothing itself.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Callable, Iterable, cast

import jinja2

from ..model.base import path_text
from .markers import LAYOUT_MARKER, LAYOUT_RULE_MARKER, MARKER, ROOT_MARKER, RULE_MARKER
from .plan import Handle


def _ints(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _strings(values: Iterable[str]) -> str:
    return "[" + ", ".join(_quote(v) for v in values) + "]"


def _names(handles: Iterable[Handle]) -> str:
    return ", ".join(h.name for h in handles)


def _types(handles: Iterable[Handle]) -> str:
    return ", ".join(h.type for h in handles)


def _loc(*parts: str | int) -> str:
    return f'loc("{path_text(parts)}")'


Macro = Callable[..., str]
"""A template macro: called with its arguments, returns the rendered text."""


@lru_cache(maxsize=None)
def macro(template: str, name: str) -> Macro:
    """The macro ``name`` of ``template`` (a path under ``tdsl.templates``)."""
    module = environment().get_template(template).module
    found = getattr(module, name, None)
    if found is None:
        raise jinja2.TemplateError(f"template {template} defines no macro {name!r}")
    return cast(Macro, found)


@lru_cache(maxsize=None)
def has_macro(template: str, name: str) -> bool:
    """Whether ``template`` defines the macro ``name``."""
    return hasattr(environment().get_template(template).module, name)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one jinja2 environment (StrictUndefined) over the packaged templates."""
    directory = resources.files("tdsl.templates")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["ints"] = _ints
    env.filters["quote"] = _quote
    env.filters["strings"] = _strings
    env.filters["names"] = _names
    env.filters["types"] = _types
    env.globals["loc"] = _loc
    env.globals["macro"] = macro
    env.globals["MARKER"] = MARKER
    env.globals["LAYOUT_MARKER"] = LAYOUT_MARKER
    env.globals["RULE_MARKER"] = RULE_MARKER
    env.globals["LAYOUT_RULE_MARKER"] = LAYOUT_RULE_MARKER
    env.globals["ROOT_MARKER"] = ROOT_MARKER
    return env
