"""The strategy sets a CPU tuning builds: named ``tuned``, op rules put before their base's
where the set still validates, the winners' rules grouped by the target they were measured
on, and what a build reports its rules did not match."""

from __future__ import annotations

from typing import Callable, Sequence

from ..errors import StrategyError
from ..sets.space import Candidate
from ..sets.strategy_set import Rule, StrategySet
from ..targets import Target
from .measure import Variant, fastest
from .session import DATA_TILING, IREE_DEFAULT


def better_iree(final: Sequence[Variant], reference: Variant) -> Variant | None:
    """The faster of IREE default and data tiling among ``final`` (timed in the same rounds
    as ``reference``); None if neither was timed."""
    return fastest([v for v in final if v.label in (IREE_DEFAULT, DATA_TILING) and v.ok and v.median], reference)


LARGE_VECTOR_REFUSAL = "large vector sizes"
"""What IREE 3.13's vector-size check says where it refuses a configuration of its own (its
data tiling on AVX2 fuses a masked attention's mask into an 8x8-packed elementwise op with a
16 KB vector: the gpt2_block example; see :attr:`tdsl.CpuTarget.allow_large_vectors`)."""


def with_large_vectors(refused: Variant) -> Variant:
    """The program-level point ``refused`` (whose build IREE's vector-size check failed) with
    the check off, as its own point: the flag changes nothing else, and IREE's path as
    shipped keeps its label and its build error."""
    assert refused.strategies is not None
    name = "program:data_tiling=True" if refused.label == DATA_TILING else refused.label
    targets = tuple(
        t.model_copy(update={"allow_large_vectors": True}) if "allow_large_vectors" in type(t).model_fields else t
        for t in refused.strategies.targets
    )
    strategies = StrategySet(name=refused.strategies.name, targets=targets, rules=refused.strategies.rules)
    return Variant(
        f"{name},allow_large_vectors=True", strategies, values={**refused.values, "allow_large_vectors": True}
    )


GRAPH_KNOBS = ("fold_batch_matmuls", "channels_last_convs", "convs_as_matmuls")
"""Target knobs that change which ops the graph level has (a folded batch matmul is a 2-D
matmul; a channels-first convolution is a channels-last one between transposes; a 2-D convolution
is an im2col copy and a matmul): a winner's
rules reach their op only on targets with its values of these."""


def reaching(winners: Sequence[Variant], targets: Sequence[Target]) -> list[tuple[Rule, ...]]:
    """The rules of each of ``winners`` (a group each) measured on a target whose
    :data:`GRAPH_KNOBS` are those of ``targets``; the others would match nothing there."""

    def knobs(found: Sequence[Target]) -> tuple[object, ...]:
        return tuple(getattr(found[0], k, None) for k in GRAPH_KNOBS) if found else ()

    return [tuple(w.rules) for w in winners if w.strategies is None or knobs(w.strategies.targets) == knobs(targets)]


def before_base(
    targets: Sequence[Target], base_set: StrategySet
) -> Callable[[Candidate], tuple[StrategySet, tuple[Rule, ...]]]:
    """A search's ``make`` for a space of op rules on ``base_set``: a candidate's rules, then
    the base's rules that validate with them, on ``targets``; and the rules it adds."""
    return lambda c: (with_rules(tuned_set(targets, c.strategies.rules), base_set.rules), c.strategies.rules)


def combined(
    label: str, targets: Sequence[Target], groups: Sequence[tuple[Rule, ...]], base_set: StrategySet
) -> Variant:
    """The model pass's ``label`` variant: ``groups`` (each all or none) then the base's
    rules on ``targets``; its own rules are the groups' rules the set kept."""
    strategies = with_rules(with_rules(tuned_set(targets), list(groups)), base_set.rules)
    return Variant(label, strategies, rules=tuple(r for g in groups for r in g if r in strategies.rules))


def tuned_set(targets: Sequence[Target], rules: Sequence[Rule] = ()) -> StrategySet:
    """The set ``tdsl tune`` emits and measures: named ``tuned``."""
    return StrategySet(name="tuned", targets=tuple(targets), rules=tuple(rules))


def with_rules(strategies: StrategySet, rules: Sequence[Rule | tuple[Rule, ...]]) -> StrategySet:
    """``strategies`` (named ``tuned``) with ``rules`` added after its own, each (a tuple:
    all of its rules, or none) only where the set still validates with it on
    ``strategies``' targets (e.g. a packing rule needs ukernels off, and the tiles of the
    packed op mean nothing without it)."""
    kept = list(strategies.rules)
    for group in rules:
        added = list(group) if isinstance(group, tuple) else [group]
        try:
            tuned_set(strategies.targets, [*kept, *added])
        except StrategyError:
            continue
        kept.extend(added)
    return tuned_set(strategies.targets, kept)


def target_groups(base_set: StrategySet, winners: Sequence[Variant]) -> list[tuple[str, tuple[Target, ...]]]:
    """The targets to time the op winners' rules on in the model pass, labelled: the base's
    (``tuned``), then each other target a winner was measured on (``tuned:`` and the fields
    it changes, e.g. ``tuned:ukernels=none``)."""
    groups: list[tuple[str, tuple[Target, ...]]] = [("tuned", tuple(base_set.targets))]
    base = base_set.targets[0].model_dump(mode="json") if base_set.targets else {}
    changes: list[dict[str, object]] = []
    for winner in winners:
        targets = tuple(winner.strategies.targets) if winner.strategies else ()
        if targets and all(targets != known for _, known in groups):
            changed = {k: v for k, v in targets[0].model_dump(mode="json").items() if base.get(k) != v}
            groups.append(("tuned:" + ",".join(f"{k}={v}" for k, v in changed.items()), targets))
            changes.append(changed)
    # Winners on different targets (a packed op turns ukernels off, an op IREE rebuilds is
    # tuned with fold_batch_matmuls on) are also timed together, on the target with all of
    # those changes, where no two of them set one field differently.
    union: dict[str, object] = {}
    for changed in changes:
        if any(k in union and union[k] != v for k, v in changed.items()):
            return groups
        union |= changed
    if len(changes) > 1:
        first = base_set.targets[0]
        targets = (first.model_validate(first.model_dump(mode="json") | union), *base_set.targets[1:])
        if all(targets != known for _, known in groups):
            groups.append(("tuned:" + ",".join(f"{k}={v}" for k, v in union.items()), targets))
    return groups
