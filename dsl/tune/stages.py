"""The stages of a CPU tuning before the model pass, as objects :class:`tdsl.tune.tuner.CpuTuner`
runs in order:

* :class:`ProgramStage` -- the program-level knobs (IREE default and data tiling among them)
  and the ready library's packing of every matmul, built and timed on the whole program; the
  fastest is the *base* the op-level candidates start from;
* :class:`OpStage` -- one op at a time on top of the base: its pinned tiles, then (a 2-D or
  batch-1 matmul) its packing and its RHS panels, or (a convolution) its pinned tiles on the
  op as the base's conv path leaves it; each space searched by :func:`tdsl.tune.search.search`.

The model pass is :class:`tdsl.tune.model_stage.ModelStage`.
"""

from __future__ import annotations

from ..errors import StrategyError
from ..targets import CpuTarget
from ..targets.host import Isa
from .candidates import LARGE_VECTOR_REFUSAL, before_base, tuned_set, with_large_vectors, with_rules
from .measure import Variant, fastest
from .op_jobs import OpJob, rewritten_convolution
from .ready import cpu_spaces
from .search import search
from .session import DATA_TILING, IREE_DEFAULT, TuneFailed, TuneSession, unapplied


class ProgramStage:
    """The program-level points of a CPU tuning, built and timed on the whole program."""

    def __init__(self, session: TuneSession) -> None:
        self.session = session

    def run(
        self, target: CpuTarget, has_convolutions: bool, isa: Isa, has_contractions: bool, has_odd_loops: bool = False
    ) -> tuple[list[Variant], Variant]:
        """Builds and times the program-level points (and, where the program has
        contractions, the ready library's graph-level mmt4d packing of every matmul,
        :func:`tdsl.strategies.cpu.auto` with ``pack_matmuls=True``); returns them and the
        fastest."""
        ready = cpu_spaces()
        space = ready.program_space(target, has_convolutions, "tuned", has_odd_loops)
        variants = [Variant(IREE_DEFAULT, None)]
        defaults = target.baseline().model_dump(mode="json")  # IREE's own value of every program knob
        for c in space.candidates():
            changed = {k: v for k, v in c.values.items() if v != defaults[k]}
            if not changed:
                continue  # IREE default itself
            label = (
                DATA_TILING
                if changed == {"data_tiling": True}
                else "program:" + ",".join(f"{k}={v}" for k, v in changed.items())
            )
            variants.append(Variant(label, c.strategies, values=c.values))
        if has_contractions:
            packed = ready.packed_program(target, isa, "tuned")
            variants.append(Variant("program:pack_matmuls", packed, values={"pack_matmuls": True}))
        self.session.build(variants)
        refused = [
            with_large_vectors(v)
            for v in variants
            if v.vmfb is None and LARGE_VECTOR_REFUSAL in v.build_error and v.strategies is not None
        ]
        if refused:
            self.session.build(refused)
            variants.extend(refused)
        failed = [v for v in variants if v.vmfb is None]
        if len(failed) == len(variants):
            raise TuneFailed(f"every baseline build failed; first: {failed[0].build_error}")
        reference = next(v for v in variants if v.vmfb is not None)
        self.session.measure(variants, reference, self.session.options.rounds, self.session.options.seed, "program")
        timed = [v for v in variants if v.ok and v.median]
        best = fastest(timed, reference)
        if best is None:
            errors = [e for v in variants for e in v.sample_errors]
            raise TuneFailed(f"no baseline could be timed; first error: {errors[0] if errors else 'no samples'}")
        return variants, best


class OpStage:
    """One op's spaces searched on top of the base, ``budget`` candidates per space."""

    def __init__(self, session: TuneSession, isa: Isa, budget: int) -> None:
        self.session, self.isa, self.budget = session, isa, budget

    def run(self, job: OpJob, base: Variant) -> None:
        """Tunes one op on top of ``base``: its pinned-tile space, each candidate's rule
        before the base's rules, then, for a 2-D or batch-1 matmul, its packing space (each candidate
        on its own target: ukernels off) before the base's rules that
        validate there, and its RHS-panel space (on the base's target, before its rules; see
        the module docstring). The best winner is the op's."""
        ready = cpu_spaces()
        if (
            job.dispatch is not None
            and job.dispatch.graph_op is not None
            and job.dispatch.graph_op.kind == "convolution"
        ):
            self.convolution(job, base)
            return
        base_set = base.strategies or tuned_set([CpuTarget()])
        target = CpuTarget.expect(base_set.targets[0], "the CPU tuner")
        assert job.dispatch is not None
        targets = tuple(base_set.targets)
        dispatch = job.folded or job.dispatch
        view, match = dispatch.graph_op, dispatch.graph_matcher
        assert view is not None and match is not None
        if job.folded is not None:  # the op as IREE rebuilds it, made at the graph level
            target = target.model_copy(update={"fold_batch_matmuls": True})
            targets = (target, *targets[1:])
        root, root_match, at_codegen = job.dispatch.root, job.dispatch.codegen_matcher, False
        if (
            job.folded is None
            and root is not None
            and root_match is not None
            and ready.restructured(view, root)
            and not ready.tunable(root)
        ):
            view, match, at_codegen = root, root_match, True  # IREE rebuilds the op before codegen: pin codegen's op
            if target.data_tiling:
                job.skipped = (
                    f"IREE rebuilds the op before codegen ({root.shapes()}) and the base, {base.label}, data-tiles it "
                    "there: a graph-level pin is lost with the op and a codegen pin with its encodings"
                )
                return
        try:
            job.space = ready.contraction_space(
                view, match, self.isa, target, job.name, at_codegen=at_codegen, threads=self.session.options.threads
            )
        except StrategyError as err:  # the base's target refuses every pin of this op
            job.skipped = f"no space on {base.label}: {err}"
            return
        search(self.session, job, job.space, base, self.budget, before_base(targets, base_set))
        if at_codegen:
            return  # the layouts (packing, panels) act at the graph level, on the op IREE rebuilds
        if not ready.packable(view, match):
            packed = ready.packing_space(view, match, self.isa, target, f"{job.name}_packed")
            search(
                self.session,
                job,
                packed,
                base,
                self.budget,
                lambda c: (with_rules(c.strategies, base_set.rules), c.strategies.rules),
                tag="packed",
            )
        if not ready.panelable(view, match, self.isa):
            panels = ready.panel_space(view, match, self.isa, target, f"{job.name}_panels")
            search(self.session, job, panels, base, self.budget, before_base(targets, base_set), tag="panels")

    def convolution(self, job: OpJob, base: Variant) -> None:
        """Tunes one convolution on top of ``base``: its pinned-tile space
        (:func:`tdsl.strategies.cpu.space.convolution_space`), each candidate's rule before the
        base's rules. The base's conv path may rewrite the op before a graph-level pin reaches
        it (IREE's im2col, the channels-last rewrite): one candidate is built first, and where
        its rule matches nothing the job is skipped with that reason."""
        ready = cpu_spaces()
        dispatch = job.rewritten or job.dispatch
        assert dispatch is not None and dispatch.graph_op is not None and dispatch.graph_matcher is not None
        base_set = base.strategies or tuned_set([CpuTarget()])
        target = CpuTarget.expect(base_set.targets[0], "the CPU tuner")
        space = ready.convolution_space(
            dispatch.graph_op,
            dispatch.graph_matcher,
            self.isa,
            target,
            job.name,
            dispatch.pipeline or "",
            dispatch.lowering_config,
            threads=self.session.options.threads,
        )
        make = before_base(base_set.targets, base_set)
        first = next(iter(space.take(iter([(space.index_of(v), v) for v in space.seeds]))), None) or next(
            iter(space.candidates(count=self.budget, seed=self.session.options.seed)), None
        )
        if first is None:
            job.skipped = (
                f"every point of its space was pruned: {'; '.join(space.pruned.lines()) or 'no reason recorded'}"
            )
            return
        built, rules = make(first)
        probe = Variant(f"{job.name}#{first.index}", built, values=first.values, op=job.name, rules=rules)
        self.session.build([probe])
        if unapplied(probe):
            if job.rewritten is None and target.channels_last_convs and not target.im2col_convs:
                # The channels-last rewrite runs before the graph-level rules: the op they
                # see is the channels-last convolution, as the base's target lists it.
                job.rewritten = rewritten_convolution(dispatch, self.session.listing(target))
                if job.rewritten is not None:
                    self.convolution(job, base)
                    return
            job.skipped = (
                f"a graph-level pin on it matches nothing by codegen on {base.label}: its conv path (IREE's im2col, the "
                "channels-last rewrite) rewrites the op before the pin reaches it or rebuilds it after"
            )
            return
        job.space = space
        search(self.session, job, space, base, self.budget, make)
