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

import functools
import json
import random
import statistics
import sys
import time
from typing import Any, Callable, TypedDict

# iree.runtime ships no type information: its configs, contexts, modules and functions stay untyped here.


class SlotSpec(TypedDict):
    """One slot of a round: the module it loads and its timeout in seconds."""

    module: str
    timeout_s: float


class RoundSpec(TypedDict):
    """The round a runner times (the spec on stdin; the module docstring)."""

    function: str
    inputs: list[str]
    parameters: list[list[str]]
    threads: int
    min_time_s: float
    warmup_s: float
    seed: int
    slots: list[SlotSpec]


class SlotOutcome(TypedDict):
    """One slot's result: the median seconds per call, or a one-line error."""

    seconds: float | None
    error: str
    calls: int


class RoundOutcome(TypedDict):
    """What a runner prints: per slot its outcome, and the cycles it ran."""

    slots: list[SlotOutcome]
    cycles: int


MIN_CYCLES = 2
"""Cycles every round runs at least (a module slower than the whole round still gets a
median of two calls)."""
BURST_S = 0.02
"""Seconds of timed calls a module gets in a row per cycle, after one untimed call: its
weights and code back in the caches the other modules used, as they are when a program
runs call after call (calls that each follow another module's would time a cold cache)."""
RECENT = 64
"""Calls a slot's burst size is taken from (:func:`burst`): its latest."""
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
    context = rt.VmContext(
        config.vm_instance, modules=[*modules, rt.create_hal_module(config.vm_instance, config.device), program]
    )
    return context, program


def run(spec: RoundSpec) -> RoundOutcome:
    """Times the round ``spec`` describes (see the module docstring)."""
    import iree.runtime as rt
    import numpy as np

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
    # Every slot loads its own instance (its weights, its buffers), also where two slots
    # hold one module: where in memory a module's data lands moves its time by a few
    # percent, and the reference's two slots measure the noise only if they see that too.
    callers: dict[int, Callable[[], object]] = {}
    for i, slot in enumerate(slots):
        try:
            context, program = _load(config, slot["module"], spec["parameters"])
            function = program.lookup_function(spec["function"])
            if function is None:
                raise LookupError(f"no function {spec['function']!r}")
            callers[i] = functools.partial(_invoke, context, function, args, rt.VmVariantList)
        except Exception as err:  # a module the runtime rejects: this slot's error
            errors[i] = f"loading failed: {type(err).__name__}: {err}".splitlines()[0]
    calls, cycles = interleave(
        callers,
        [float(slot["timeout_s"]) for slot in slots],
        float(spec["min_time_s"]),
        float(spec["warmup_s"]),
        int(spec["seed"]),
        errors,
    )
    out: list[SlotOutcome] = []
    for i in range(len(slots)):
        if errors[i] or not calls[i]:
            out.append({"seconds": None, "error": errors[i] or "not called", "calls": len(calls[i])})
        else:
            out.append({"seconds": statistics.median(calls[i]), "error": "", "calls": len(calls[i])})
    return {"slots": out, "cycles": cycles}


def _invoke(context: Any, function: Any, args: Any, results: Any) -> None:
    context.invoke(function, args, results(RESULTS))


def burst(seconds: list[float]) -> tuple[int, bool]:
    """Calls per burst and whether a burst starts with an untimed call, from a slot's
    recent call times (the last :data:`RECENT` of them). Their median, not the last one:
    a call the scheduler stretched (another process, the host) would otherwise set a burst
    of one call, and a round would then cycle thousands of times before that slot had its
    time, its other slots running into their timeouts. No untimed call for calls of
    :data:`BURST_S` or more, which bring their own data back in their first milliseconds."""
    typical = statistics.median(seconds[-RECENT:])
    return max(1, int(BURST_S / max(typical, 1e-9))), typical < BURST_S


def interleave(
    callers: dict[int, Callable[[], object]],
    timeouts_s: list[float],
    min_time_s: float,
    warmup_s: float,
    seed: int,
    errors: list[str],
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[list[float]], int]:
    """Calls each slot's caller (slot index -> one call) alone for ``warmup_s`` (at least
    one call), then in bursts in a fresh seeded order per cycle, until every slot has
    ``min_time_s`` of timed calls (at least :data:`MIN_CYCLES` cycles). A slot past its
    timeout in seconds of calls, or whose call raises, stops with its one-line error in
    ``errors``. Returns every slot's timed calls (seconds) and the cycles run."""
    calls: list[list[float]] = [[] for _ in timeouts_s]
    sizes: dict[int, tuple[int, bool]] = {}
    live = dict(callers)
    for i, call in list(live.items()):
        end = clock() + warmup_s
        warm: list[float] = []
        try:
            while True:
                t0 = clock()
                call()
                warm.append(clock() - t0)
                if clock() >= end:
                    break
            sizes[i] = burst(warm)
        except Exception as err:
            del live[i]
            errors[i] = f"call failed: {type(err).__name__}: {err}".splitlines()[0]
    spent = [0.0 for _ in timeouts_s]
    timed = [0.0 for _ in timeouts_s]
    order = list(live)
    rng = random.Random(seed)
    cycles = 0
    while order and (cycles < MIN_CYCLES or min(timed[i] for i in order) < min_time_s):
        rng.shuffle(order)
        for i in list(order):
            count, refill = sizes[i]
            try:
                for n in range(0 if refill else 1, count + 1):
                    t0 = clock()
                    live[i]()
                    seconds = clock() - t0
                    spent[i] += seconds
                    if n:  # the first call of a burst refills the caches the others used
                        calls[i].append(seconds)
                        timed[i] += seconds
                    if spent[i] > timeouts_s[i]:
                        raise TimeoutError(f"timed out after {spent[i]:.3g} s of calls (limit {timeouts_s[i]:g} s)")
                sizes[i] = burst(calls[i])
            except TimeoutError as err:
                errors[i] = str(err)
                order.remove(i)
            except Exception as err:
                errors[i] = f"call failed: {type(err).__name__}: {err}".splitlines()[0]
                order.remove(i)
        cycles += 1
    return calls, cycles


def main() -> None:
    print(json.dumps(run(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
