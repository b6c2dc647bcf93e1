"""The runner process of one interleaved round: every module of the round loaded side by
side in one process, then called in turn, a short burst of calls each per cycle (the first
untimed) in a fresh seeded order, until each has had the round's time of timed calls.

Run as a script (``python round_runner.py < SPEC.json``, the spec on stdin; it imports only
the standard library, numpy and ``iree.runtime``, so it starts fast). SPEC holds ``function``,
``inputs`` (``.npy`` paths), ``parameters`` (``[scope, .irpa path]``), ``threads``,
``min_time_s``, ``warmup_s``, ``seed`` and ``slots`` (``{"module": path, "timeout_s": s}``;
one module may fill several slots, each loading it anew: the reference fills the first
and the last). Prints one
JSON object: per slot, ``seconds`` (the median of its calls) or ``error`` (one line), and
``calls``.

Why: on a shared or virtual machine the speed of one core drifts by tens of percent over
seconds (another tenant, the host's clock), more than the differences a tuning looks
for. Separate processes timed one after another see different spells; calls interleaved
tens of milliseconds apart see the same ones, so their ratio holds still.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from typing import Any

MIN_CYCLES = 2
"""Cycles every round runs at least (a module slower than the whole round still gets a
median of two calls)."""
BURST_S = 0.02
"""Seconds of timed calls a module gets in a row per cycle, after one untimed call: its
weights and code back in the caches the other modules used, as they are when a program
runs call after call (calls that each follow another module's would time a cold cache)."""
RESULTS = 4
"""Initial capacity of a call's result list (it grows as the function needs)."""


def _load(config: Any, module_path: str, parameters: list[list[str]]) -> tuple[Any, Any]:
    import iree.runtime as rt

    modules = []
    for scope, path in parameters:
        index = rt.ParameterIndex()
        index.load(path)
        modules.append(rt.create_io_parameters_module(config.vm_instance, index.create_provider(scope=scope)))
    program = rt.VmModule.mmap(config.vm_instance, module_path)
    context = rt.VmContext(config.vm_instance, modules=[*modules, rt.create_hal_module(config.vm_instance, config.device), program])
    return context, program


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Times the round ``spec`` describes (see the module docstring)."""
    import numpy as np
    import iree.runtime as rt

    threads = int(spec["threads"])
    if threads > 1:
        rt.flags.parse_flags(f"--task_topology_group_count={threads}")
    config = rt.Config("local-sync" if threads == 1 else "local-task")
    args = rt.VmVariantList(len(spec["inputs"]))
    keep = []
    for path in spec["inputs"]:
        array = rt.asdevicearray(config.device, np.load(path))
        keep.append(array)
        args.push_ref(array._buffer_view)
    slots = spec["slots"]
    errors: list[str] = ["" for _ in slots]
    calls: list[list[float]] = [[] for _ in slots]
    # Every slot loads its own instance (its weights, its buffers), also where two slots
    # hold one module: where in memory a module's data lands moves its time by a few
    # percent, and the reference's two slots measure the noise only if they see that too.
    loaded: dict[int, tuple[Any, Any]] = {}
    for i, slot in enumerate(slots):
        try:
            context, program = _load(config, slot["module"], spec["parameters"])
            function = program.lookup_function(spec["function"])
            if function is None:
                raise LookupError(f"no function {spec['function']!r}")
            loaded[i] = (context, function)
        except Exception as err:  # a module the runtime rejects: this slot's error
            errors[i] = f"loading failed: {type(err).__name__}: {err}".splitlines()[0]
    # Warm-up: each slot alone until warmup_s has passed (at least one call); its last
    # call sets how many calls make one burst.
    # refill: whether a slot's burst starts with an untimed call; not for a call of BURST_S
    # or more, which brings its own data back into the caches in its first milliseconds.
    burst: dict[int, int] = {}
    refill: dict[int, bool] = {}
    for i, (context, function) in list(loaded.items()):
        end = time.perf_counter() + float(spec["warmup_s"])
        try:
            while True:
                t0 = time.perf_counter()
                context.invoke(function, args, rt.VmVariantList(RESULTS))
                last = time.perf_counter() - t0
                if time.perf_counter() >= end:
                    break
            burst[i] = max(1, int(BURST_S / max(last, 1e-9)))
            refill[i] = last < BURST_S
        except Exception as err:
            del loaded[i]
            errors[i] = f"call failed: {type(err).__name__}: {err}".splitlines()[0]
    spent = [0.0 for _ in slots]
    timed = [0.0 for _ in slots]
    order = list(loaded)
    rng = random.Random(int(spec["seed"]))
    cycles = 0
    while order and (cycles < MIN_CYCLES or min(timed[i] for i in order) < float(spec["min_time_s"])):
        rng.shuffle(order)
        for i in list(order):
            context, function = loaded[i]
            try:
                for n in range(0 if refill[i] else 1, burst[i] + 1):
                    t0 = time.perf_counter()
                    context.invoke(function, args, rt.VmVariantList(RESULTS))
                    seconds = time.perf_counter() - t0
                    spent[i] += seconds
                    if n:  # the first call of a burst refills the caches the others used
                        calls[i].append(seconds)
                        timed[i] += seconds
                    if spent[i] > float(slots[i]["timeout_s"]):
                        raise TimeoutError(f"timed out after {spent[i]:.3g} s of calls (limit {slots[i]['timeout_s']:g} s)")
            except TimeoutError as err:
                errors[i] = str(err)
                order.remove(i)
            except Exception as err:
                errors[i] = f"call failed: {type(err).__name__}: {err}".splitlines()[0]
                order.remove(i)
        cycles += 1
    out: list[dict[str, Any]] = []
    for i in range(len(slots)):
        if errors[i] or not calls[i]:
            out.append({"seconds": None, "error": errors[i] or "not called", "calls": len(calls[i])})
        else:
            out.append({"seconds": statistics.median(calls[i]), "error": "", "calls": len(calls[i])})
    return {"slots": out, "cycles": cycles}


def main() -> None:
    print(json.dumps(run(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
