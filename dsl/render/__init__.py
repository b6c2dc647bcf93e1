"""Rendering: planning rules into typed template inputs (:mod:`.plan` and the per-kind
planners), laying them out with the templates (:mod:`.environment`), verifying the
scripts with the MLIR bindings (:mod:`.verify`); :class:`Rendered` holds the result.

Modules: ``markers`` (attribute names put on rewritten ops), ``plan`` (the plan types),
``transform_ops`` (one declaration per transform op a strategy field renders to, which
``tdsl import`` reads back too), ``matcher_plan`` / ``layout_plan`` / ``lowering_plan`` /
``codegen_plan`` (per-kind planners), ``script_plan`` (rules and ``foreach_match`` runs of one script),
``environment`` (the jinja environment), ``scripts`` (``Script``, ``Rendered``),
``verify``, ``render`` (``render()``, ``injections()``).
"""

from __future__ import annotations

from .markers import LAYOUT_MARKER, LAYOUT_RULE_MARKER, MARKER, ROOT_MARKER, RULE_MARKER
from .render import CODEGEN_LIBRARY, PREPROCESSING, TUNING_SPEC, injections, render
from .scripts import SERIAL_LOADING, Rendered, Script
from .verify import verify

__all__ = [
    "CODEGEN_LIBRARY",
    "LAYOUT_MARKER",
    "LAYOUT_RULE_MARKER",
    "MARKER",
    "PREPROCESSING",
    "ROOT_MARKER",
    "RULE_MARKER",
    "SERIAL_LOADING",
    "TUNING_SPEC",
    "Rendered",
    "Script",
    "injections",
    "render",
    "verify",
]
