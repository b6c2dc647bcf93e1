"""Driving ``iree-compile``: one run under limits, the flags, and what a build reports.

* :mod:`~tdsl.compiler.options`: :class:`~tdsl.compiler.options.CompileOptions`, the
  timeout, memory cap, extra flags and serial loading every build takes.
* :mod:`~tdsl.compiler.iree_compile`: one ``iree-compile`` under a timeout and an
  address-space cap; a failure described in one line, its evidence kept.
* :mod:`~tdsl.compiler.diagnostics`: compiler diagnostics mapped back to strategy fields.
* :mod:`~tdsl.compiler.flags`: pass-through flags (``--iree-flag``, ``--flags-file``).
* :mod:`~tdsl.compiler.compile`: ``compile()``: render, inject, compile, read back.
* :mod:`~tdsl.compiler.report`: what a compile reports (IREE default side by side).
* :mod:`~tdsl.compiler.outputs`: a compile's output paths, checked before any work, and
  the kept executable dump.
* :mod:`~tdsl.compiler.phases`: the IR after a phase.
* :mod:`~tdsl.compiler.dispatches`, :mod:`~tdsl.compiler.ops`: dispatch summaries and
  launches, the ops listing of ``tdsl ops``.
* :mod:`~tdsl.compiler.hsaco`: HSACO resources of gfx942 kernels.
* :mod:`~tdsl.compiler.progress`: progress of the ``iree-compile`` runs (and of the runs
  the layers above make).
"""
