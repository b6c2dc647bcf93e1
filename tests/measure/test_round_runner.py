"""The interleaved round's schedule (tdsl.measure.round_runner.interleave) on a simulated clock:
bursts sized from typical calls, timeouts, failing calls."""

from __future__ import annotations

from typing import Callable

import pytest
from tdsl.measure import round_runner
from tdsl.measure.round_runner import BURST_S, MIN_CYCLES, burst, interleave


class Clock:
    """A simulated clock: calls advance it by the time they are said to take."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _slot(clock: Clock, seconds: float, stretched_at: float | None = None, stretch: float = 0.0) -> Callable[[], None]:
    """A caller taking ``seconds`` per call, except for its first call that starts at or after
    ``stretched_at``, which takes ``stretch`` seconds (the scheduler took the core away)."""
    pending = [stretched_at is not None]

    def call() -> None:
        if pending[0] and clock.now >= (stretched_at or 0.0):
            pending[0] = False
            clock.now += stretch
        else:
            clock.now += seconds

    return call


def test_burst_sizes_come_from_the_median_of_recent_calls() -> None:
    assert burst([1e-6] * 9 + [0.5]) == (int(BURST_S / 1e-6), True)
    assert burst([0.1]) == (1, False)  # long calls: one per burst, no untimed refill
    assert burst([0.5] + [1e-3] * round_runner.RECENT) == (int(BURST_S / 1e-3), True)


def test_a_stretched_last_warm_up_call_does_not_make_the_round_cycle_until_others_time_out() -> None:
    """The warm-up's last call of slot 0 takes 30 ms instead of 3 us. Sized from that one
    call (one call per burst), slot 0 would need 3,000 cycles for its 10 ms of calls while
    slot 1 spent 20 ms per cycle and ran past its 30 s timeout."""
    clock = Clock()
    warmup_s = 0.05
    stretched = _slot(clock, 3e-6, stretched_at=warmup_s - 2.5e-6, stretch=0.03)
    plain = _slot(clock, 3e-6)
    errors = ["", ""]
    calls, cycles = interleave(
        {0: stretched, 1: plain}, [30.0, 30.0], min_time_s=0.01, warmup_s=warmup_s, seed=0, errors=errors, clock=clock
    )
    assert errors == ["", ""]
    assert cycles == MIN_CYCLES
    assert all(sum(c) >= 0.01 and max(c) == pytest.approx(3e-6) for c in calls)


def test_a_call_stretched_in_a_burst_resizes_only_until_calls_are_typical_again() -> None:
    clock = Clock()
    stretched = _slot(clock, 1e-4, stretched_at=0.2, stretch=0.5)
    plain = _slot(clock, 1e-4)
    errors = ["", ""]
    calls, cycles = interleave(
        {0: stretched, 1: plain}, [30.0, 30.0], min_time_s=0.1, warmup_s=0.01, seed=1, errors=errors, clock=clock
    )
    assert errors == ["", ""] and max(max(c) for c in calls) < 1e-3 + 0.5
    assert cycles < 10  # about min_time_s / BURST_S cycles, not one per call


def test_a_slot_past_its_timeout_stops_with_its_error_and_the_others_finish() -> None:
    clock = Clock()
    slow = _slot(clock, 0.4)
    fast = _slot(clock, 1e-3)
    errors = ["", ""]
    calls, _ = interleave(
        {0: slow, 1: fast}, [1.0, 30.0], min_time_s=2.0, warmup_s=0.0, seed=0, errors=errors, clock=clock
    )
    assert errors[0].startswith("timed out after 1.2 s of calls (limit 1 s)") and errors[1] == ""
    assert sum(calls[1]) >= 2.0


def test_a_slot_whose_call_raises_stops_with_a_one_line_error() -> None:
    clock = Clock()

    def broken() -> None:
        raise RuntimeError("device lost\nmore detail")

    fine = _slot(clock, 1e-3)
    errors = ["", "", "loading failed: RuntimeError: bad module"]
    calls, _ = interleave(
        {0: broken, 1: fine}, [30.0, 30.0, 30.0], min_time_s=0.05, warmup_s=0.01, seed=0, errors=errors, clock=clock
    )
    assert errors == ["call failed: RuntimeError: device lost", "", "loading failed: RuntimeError: bad module"]
    assert calls[0] == [] and calls[2] == [] and sum(calls[1]) >= 0.05
