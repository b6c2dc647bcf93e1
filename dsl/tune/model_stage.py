"""The model pass of a CPU tuning: the base plus every op's winning rule (also on each
winner's own target where it differs from the base's), timed against IREE default, data
tiling and the base. The faster of the base and the base with the rules is emitted only if
it beats the better IREE path, and its rules the base, by more than the noise (where it is
faster in the median but in too few rounds, as many rounds again decide); otherwise the
better IREE path (data tiling, where it beats IREE default the same way)."""

from __future__ import annotations

from ..sets.strategy_set import Rule, StrategySet
from ..targets import CpuTarget
from .candidates import better_iree, combined, reaching, target_groups, tuned_set
from .measure import Variant, fastest, inconclusive, noise, wins
from .op_jobs import OpJob
from .session import DATA_TILING, IREE_DEFAULT, TuneFailed, TuneSession, unapplied

Groups = list[tuple[Rule, ...]]
"""The winners' rules, a group each: all of a group or none (a packing and its tiles)."""


class ModelStage:
    """The model pass (module docstring)."""

    def __init__(self, session: TuneSession) -> None:
        self.session = session

    def run(
        self, program_variants: list[Variant], base: Variant, jobs: list[OpJob]
    ) -> tuple[list[Variant], Variant, float]:
        """Times the base plus every winning rule against IREE default, data tiling and the
        base; returns the variants, the one to emit and the noise."""
        base_set = base.strategies or tuned_set([CpuTarget()])
        final, together, groups = self._candidates(program_variants, base, base_set, jobs)
        self.session.build(final)
        tried, groups = self._without_unapplied(final, together, groups, base_set)
        self._one_at_a_time(final, tried, groups, base_set)
        return self._verdict(final, base)

    def _candidates(
        self, program_variants: list[Variant], base: Variant, base_set: StrategySet, jobs: list[OpJob]
    ) -> tuple[list[Variant], list[Variant], Groups]:
        """The variants of the pass, those that combine winners, and the winners' groups."""
        # Op jobs' rules go on the base (and on each winner's own target where it differs:
        # a packed op turns ukernels off); a user's whole space (no
        # dispatch) is its own set.
        won = [job.winner for job in jobs if job.winner and job.dispatch is not None]
        baselines = [v for v in program_variants if v.label in (IREE_DEFAULT, DATA_TILING)]
        final = [Variant(v.label, v.strategies, values=v.values) for v in baselines]
        if base.label not in (IREE_DEFAULT, DATA_TILING):
            final.append(Variant(base.label, base.strategies, values=base.values))
        # The near winners (OpJob.near_winner): their gains add up in the model pass, which
        # times them with the winners (label "+near") and keeps them only if that set beats
        # the others there.
        near = [v for v in (job.near_winner for job in jobs if job.dispatch is not None) if v is not None]
        groups = [
            tuple(winner.rules) for winner in won
        ]  # a winner's rules work together (a packing and its tiles): all or none
        combined_sets = [
            combined(label, targets, reaching(won, targets), base_set)
            for label, targets in (target_groups(base_set, won) if won else [])
        ]
        if near:
            for label, targets in target_groups(base_set, [*won, *near]):
                v = combined(f"{label}+near", targets, reaching([*won, *near], targets), base_set)
                if any(r in v.rules for n in near for r in n.rules):
                    combined_sets.append(v)
        groups += [tuple(n.rules) for n in near]
        final.extend(v for v in combined_sets if v.rules)
        for job in jobs:
            if job.dispatch is None and job.winner is not None and job.winner.strategies is not None:
                final.append(
                    Variant(
                        f"tuned:{job.name}",
                        tuned_set(job.winner.strategies.targets, job.winner.strategies.rules),
                        values=job.winner.values,
                    )
                )
        return final, combined_sets, groups

    def _without_unapplied(
        self, final: list[Variant], combined_sets: list[Variant], groups: Groups, base_set: StrategySet
    ) -> tuple[list[Variant], Groups]:
        """Builds again, less what did not apply, each set whose winners did not all apply
        (adding them to ``final``); returns every combined set tried and the groups."""
        # Winners measured one at a time may not all apply together (one's graph rewrite may
        # take another's op away). Such a set keeps its build error, under a label that counts
        # its winners, and is timed no further; the set of the winners that did apply takes its
        # label, until every rule of the set applies. A winner whose first rule (its layout or
        # pin) applied but whose later rules found nothing (the tiles of an LHS pack that IREE
        # fused after another winner's unpack) is timed both ways: less those rules (under the
        # label) and left out ("<label> less <its first rule>").
        failed = [v for v in combined_sets if unapplied(v)]
        tried = list(combined_sets)
        while failed:
            again: list[Variant] = []
            for v in failed:
                lost, label = unapplied(v), v.label
                mine = [g for g in groups if all(r in v.rules for r in g)]
                whole = [g for g in mine if not any(r in lost for r in g)]
                cut = [(g, tuple(r for r in g if r not in lost)) for g in mine if g[0] not in lost and g not in whole]
                groups = [*groups, *(part for _, part in cut)]
                v.label = f"{label} ({len(mine)} winners)"
                targets = v.strategies.targets if v.strategies else ()
                retries = [combined(label, targets, [*whole, *(part for _, part in cut)], base_set)]
                if cut:
                    less = ", ".join(g[0].strategy.name for g, _ in cut)
                    retries.append(combined(f"{label} less {less}", targets, whole, base_set))
                again.extend(retry for retry in retries if retry.rules)
            self.session.build(again)
            final.extend(again)
            tried.extend(again)
            failed = [v for v in again if unapplied(v)]
        return tried, groups

    def _one_at_a_time(self, final: list[Variant], tried: list[Variant], groups: Groups, base_set: StrategySet) -> None:
        """For each set of ``tried`` that did not compile, the set of its winners added one at
        a time where it still compiles (added to ``final``)."""
        # Winners that each compile alone may not compile together (one's rule reaching a
        # dispatch another's layout made). Such a set also keeps its build error under a
        # label that counts its winners; under its label, its winners are added one at a
        # time, in order of their ops' share of the work, each kept where the set still
        # compiles with every rule applied.
        for v in [v for v in tried if v.vmfb is None and v.build_error and not unapplied(v)]:
            mine = [g for g in groups if all(r in v.rules for r in g)]
            # a cut winner's part is dropped where the set holds its whole too
            mine = [g for g in mine if not any(h is not g and len(h) > len(g) and all(r in h for r in g) for h in mine)]
            if len(mine) < 2:
                continue
            label, targets = v.label, (v.strategies.targets if v.strategies else ())
            v.label = f"{label} ({len(mine)} winners)"
            together: list[tuple[Rule, ...]] = []
            good: Variant | None = None
            for group in mine:
                trial = combined(label, targets, [*together, group], base_set)
                if not all(r in trial.rules for r in group):
                    continue  # the set does not validate with it
                self.session.build([trial])
                if trial.vmfb is not None:
                    together.append(group)
                    good = trial
            if good is not None:
                final.append(good)

    def _verdict(self, final: list[Variant], base: Variant) -> tuple[list[Variant], Variant, float]:
        """Times ``final`` and picks the set to emit (module docstring)."""
        reference = next(v for v in final if v.vmfb is not None)
        self.session.measure(final, reference, self.session.options.rounds, self.session.options.seed + 3, "model")
        best_iree, best, margin = self._model_verdict(final, reference)
        if best is not None and inconclusive(best, best_iree, margin):
            # Faster in the median but not in enough rounds (a noisy spell): as many rounds
            # again, judged on all of them.
            self.session.measure(
                final, reference, self.session.options.rounds, self.session.options.seed + 5, "model:more"
            )
            best_iree, best, margin = self._model_verdict(final, reference)
        chosen = best if best is not None and wins(best, best_iree, margin) else best_iree
        # The op rules are emitted only where they beat their base, as timed here, by more
        # than the noise: a set of rules within the noise of the base alone is the base.
        plain = next((v for v in final if v.label == base.label and v.ok and v.median), None)
        if chosen.rules and plain is not None and not wins(chosen, plain, margin):
            chosen = (
                plain
                if plain.label not in (IREE_DEFAULT, DATA_TILING) and wins(plain, best_iree, margin)
                else best_iree
            )
        # Data tiling within the noise of IREE default (a program it changes nothing
        # measurable in: no contraction, or too little of one) is IREE's own default path.
        default = next((v for v in final if v.label == IREE_DEFAULT and v.ok and v.median), None)
        if chosen.label == DATA_TILING and default is not None and not wins(chosen, default, margin):
            chosen = default
        return final, chosen, margin

    @staticmethod
    def _model_verdict(final: list[Variant], reference: Variant) -> tuple[Variant, Variant | None, float]:
        """The better IREE path, the fastest challenger and the noise of a model pass."""
        best_iree = better_iree(final, reference)
        if best_iree is None:
            raise TuneFailed("the model pass could time neither IREE default nor data tiling")
        challengers = [v for v in final if v.label not in (IREE_DEFAULT, DATA_TILING) and v.ok]
        best = fastest(challengers, reference)
        return best_iree, best, noise(reference)
