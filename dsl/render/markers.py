"""The attribute names the rendered scripts put on the ops they rewrite, so that a compile
can tell which rule applied where (:mod:`tdsl.compiler.dispatches` reads them back).

Emits nothing itself: the templates see these names as globals (``MARKER`` ...).
"""

from __future__ import annotations

MARKER = "tdsl.applied"
"""On an op a tuning-spec / codegen-library rule configured: the strategy name."""
LAYOUT_MARKER = "tdsl.layout"
"""On an op a preprocessing (data layout) rule rewrote: the strategy name."""
RULE_MARKER = "tdsl.rule"
"""Beside :data:`MARKER`: the index of the rule in its strategy set."""
LAYOUT_RULE_MARKER = "tdsl.layout_rule"
"""Beside :data:`LAYOUT_MARKER`: the index of the rule in its strategy set."""
ROOT_MARKER = "tdsl.root"
"""On the root op of a dispatch a Codegen strategy lowers: the strategy name."""
