"""Measuring builds on this CPU: execution, numerics, timing and the bench.

* :mod:`~tdsl.measure.execute`: a module's functions called through ``iree.runtime``;
  results compared under each element type's tolerance; numpy references.
* :mod:`~tdsl.measure.numerics`: the verdicts of a numeric check (one quantization step
  for quantized results) and its report.
* :mod:`~tdsl.measure.run`: ``run()``: compile with a strategy and without, run, compare.
* :mod:`~tdsl.measure.timing`: one ``iree-benchmark-module`` process, or a round of
  modules side by side in one process of :mod:`~tdsl.measure.round_runner` (a script run
  by path that imports only numpy and ``iree.runtime``).
* :mod:`~tdsl.measure.bench`: ``bench()``.
* :mod:`~tdsl.measure.dispatch_profile`: per-dispatch times of a compiled module.
* :mod:`~tdsl.measure.machine`: versions and machine facts of ``--json`` reports.
"""
