"""Rendering: planning rules into template inputs, laying them out with the templates,
verifying the scripts with the MLIR bindings; :class:`Rendered` holds the result."""

from __future__ import annotations

from .render import SERIAL_LOADING, Rendered, Script, render, verify

__all__ = ["SERIAL_LOADING", "Rendered", "Script", "render", "verify"]
