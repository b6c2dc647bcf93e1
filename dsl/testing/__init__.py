"""Testing support shipped with tdsl: the pytest plugin (``--update-goldens``, the ``golden``
fixture) and the :class:`Golden` helper it hands out."""

from __future__ import annotations

from .golden import UPDATE_OPTION, Golden

__all__ = ["UPDATE_OPTION", "Golden"]
