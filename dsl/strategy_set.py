"""StrategySet: an ordered list of rules (matcher -> strategy -> target).

Rendering a set for one target picks that target's rules, in order; the first rule
whose matcher succeeds on an op wins (``transform.foreach_match`` semantics). One set
may hold rules for several targets, e.g. pack on CPU and leave the layout alone on GPU.

Cross-field checks that need the target live here: the strategy kind fits the
target's backend, the MMA intrinsic exists on the GPU, the matcher can match the op
form seen at that injection point, and the loop counts agree.

Example::

    StrategySet(name="demo", rules=[
        Rule(target="cpu", match=OpNameMatch(names=["linalg.matmul"]),
             strategy=DataLayout(name="mm_pack", pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]))),
    ])
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field, model_validator

from .codegen import Codegen
from .layout import DataLayout
from .lowering import CpuLowering, GpuLowering
from .matchers import ContractionMatch, ConvolutionMatch, FunctionMatch, Matcher, leaves, match_op_names
from .model import Described, StrategyModel, SymbolName, fmt, problem
from .targets import AmdGpuArch, AmdGpuTarget, CpuTarget, Target
from .targets.amdgpu_resources import lds_problem

Strategy = Annotated[
    Union[DataLayout, CpuLowering, GpuLowering, Codegen], Field(discriminator="kind")
]

# Which backends each strategy kind can run on.
_BACKENDS = {
    "data_layout": ("llvm-cpu", "rocm"),
    "cpu_lowering": ("llvm-cpu",),
    "gpu_lowering": ("rocm",),
    "codegen": ("llvm-cpu", "rocm"),
}

# Named ops that no longer exist when codegen configuration runs, per backend.
_GONE_AT_CODEGEN = {
    "rocm": ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_", "linalg.matvec"),
    "llvm-cpu": ("linalg.conv_",),
}


class Rule(StrategyModel):
    """Apply ``strategy`` to every op ``match`` accepts, when compiling for ``target``."""

    target: SymbolName
    match: Matcher
    strategy: Strategy

    @model_validator(mode="after")
    def _selects_ops(self) -> "Rule":
        if isinstance(self.match, FunctionMatch):
            raise problem(
                "match",
                "a matcher that selects ops; a function matcher only restricts where to look "
                "(combine it in all_of with an op_name, contraction or convolution matcher)",
                "function",
            )
        return self


def _default_targets() -> tuple[Any, ...]:
    return (CpuTarget(), AmdGpuTarget())


class StrategySet(StrategyModel):
    """An ordered list of rules for one or more targets; see the module docstring."""

    _names_errors = True

    name: SymbolName
    targets: tuple[Target, ...] = Field(default_factory=_default_targets)
    rules: tuple[Rule, ...]

    @model_validator(mode="after")
    def _check(self) -> "StrategySet":
        names = [t.name for t in self.targets]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise problem(f"targets[{i}].name", "unique target names", name)
        if not self.rules:
            raise problem("rules", "at least one rule", [])
        seen: dict[tuple[str, str], Any] = {}
        for i, rule in enumerate(self.rules):
            if rule.target not in names:
                raise problem(f"rules[{i}].target", f"one of the targets {names}", rule.target)
            target = self.targets[names.index(rule.target)]
            key = (rule.target, rule.strategy.name)
            if key in seen and seen[key] != rule.strategy:
                raise problem(
                    f"rules[{i}].strategy.name",
                    f"a name not used by another strategy for target {rule.target!r}",
                    rule.strategy.name,
                )
            seen[key] = rule.strategy
            _check_rule(i, rule, target, names.index(rule.target))
        return self

    def target(self, name: str) -> Any:
        """The target called ``name`` (a target name such as ``cpu`` or ``gfx942``)."""
        for target in self.targets:
            if target.name == name:
                return target
        raise KeyError(name)

    def rules_for(self, target: str) -> list[tuple[int, Rule]]:
        """(index in ``rules``, rule) for every rule of ``target``, in order."""
        return [(i, r) for i, r in enumerate(self.rules) if r.target == target]


def _check_rule(i: int, rule: Rule, target: Any, target_index: int) -> None:
    strategy = rule.strategy
    backends = _BACKENDS[strategy.kind]
    if target.backend not in backends:
        raise problem(
            f"rules[{i}].strategy.kind",
            f"a strategy for {target.backend} (target {target.name!r}); "
            f"{strategy.kind} runs on {', '.join(backends)}",
            strategy.kind,
        )
    if strategy.kind in ("cpu_lowering", "gpu_lowering", "codegen"):
        gone = _GONE_AT_CODEGEN[target.backend]
        for op in sorted(match_op_names(rule.match)):
            if op.startswith(gone):
                alternative = "convolution" if "conv" in op else "contraction"
                raise problem(
                    f"rules[{i}].match.names",
                    f"an op that exists at codegen time on {target.name}: {op} is a "
                    f"linalg.generic by then, so this rule would match nothing",
                    op,
                    hint=f"use a {alternative} matcher",
                )
    if strategy.kind == "cpu_lowering":
        for leaf in leaves(rule.match):
            if isinstance(leaf, ConvolutionMatch) and leaf.batch == ((1,),):
                raise problem(
                    f"rules[{i}].match.batch",
                    "a batch other than 1: IREE drops the compilation_info of batch-1 "
                    "convolutions on llvm-cpu (InsertBatchDimForBatchlessConv rebuilds the op)",
                    [1],
                )
    expected = rule.match.loop_count()
    loops = strategy.loops()
    if expected is not None and loops is not None and loops[1] is not None and expected != loops[1]:
        field, got = loops
        raise problem(
            field,
            f"{expected} entries, one per loop of the matched op (rules[{i}].match fixes "
            f"{expected} loops)",
            Described(f"{got} entries {list(getattr(strategy, field, ()) or ())}" if "." not in field else f"{got} entries"),
            strategy=strategy.name,
        )
    if (
        isinstance(strategy, DataLayout)
        and strategy.specialize
        and isinstance(target, CpuTarget)
        and target.ukernels != "none"
    ):
        raise problem(
            f"targets[{target_index}].ukernels",
            "'none' when a data_layout specializes to linalg.mmt4d: IREE 3.13's mmt4d "
            "ukernel gives wrong results on graph-level mmt4d ops (max error 29 on a "
            "128x256x192 f32 matmul, any inner tile)",
            target.ukernels,
            hint=f"set CpuTarget(ukernels='none') for target {target.name!r}",
        )
    if isinstance(strategy, GpuLowering) and isinstance(target, AmdGpuTarget):
        facts = target.facts
        if strategy.subgroup_size != facts.subgroup_size:
            raise problem(
                "subgroup_size",
                f"{facts.subgroup_size}, the subgroup size of {facts.arch}",
                strategy.subgroup_size,
                strategy=strategy.name,
            )
        if strategy.thread_count() > facts.max_workgroup_size:
            raise problem(
                "workgroup_size",
                f"at most {facts.max_workgroup_size} threads on {facts.arch}",
                Described(f"{fmt(strategy.workgroup_size)} ({strategy.thread_count()} threads)"),
                strategy=strategy.name,
            )
        if strategy.mma_kind is not None and facts.intrinsic(strategy.mma_kind) is None:
            raise problem(
                "mma_kind",
                f"an MMA intrinsic of {facts.arch}: "
                + ", ".join(x.name for x in facts.mma_intrinsics),
                strategy.mma_kind,
                strategy=strategy.name,
            )
        _check_gpu_resources(rule, strategy, facts)
    if isinstance(strategy, Codegen):
        strategy.check_target(target)


def _check_gpu_resources(rule: Rule, strategy: GpuLowering, facts: AmdGpuArch) -> None:
    """LDS budget and MMA shape fit, for contractions whose loop roles the matcher fixes."""
    contractions = [leaf for leaf in leaves(rule.match) if isinstance(leaf, ContractionMatch)]
    if not contractions:
        return
    match = contractions[0]
    intrinsic = facts.intrinsic(strategy.mma_kind) if strategy.mma_kind else None
    sizes = match.problem_sizes()
    if intrinsic is not None and sizes is not None and strategy.padding is None:
        m, n, k = sizes
        if m % intrinsic.m or n % intrinsic.n or k % intrinsic.k:
            fitting = [
                x.name
                for x in facts.mma_intrinsics
                if (x.a_type, x.b_type, x.c_type) == (match.lhs_type, match.rhs_type, match.output_type)
                and not (m % x.m or n % x.n or k % x.k)
            ]
            raise problem(
                "mma_kind",
                f"an intrinsic whose M, N and K ({intrinsic.m}, {intrinsic.n}, {intrinsic.k} for "
                f"{intrinsic.name}) divide the problem's {m}x{n}x{k}, or a 'padding' tile; "
                "intrinsics for these element types that fit: "
                + (", ".join(fitting) or "none"),
                strategy.mma_kind,
                strategy=strategy.name,
            )
    roles = match.loop_roles()
    if intrinsic is not None and strategy.subgroup is not None and roles is not None and len(roles) == len(strategy.workgroup):
        _check_subgroups(strategy, roles, intrinsic, facts)
    lds = lds_problem(strategy, match, facts)
    if lds is None:
        return
    estimate = lds.estimate()
    if not estimate.fits:
        legal = lds.largest_legal_reduction()
        hint = (
            f"the largest reduction[{legal[0]}] that fits is {legal[1]}"
            if legal is not None
            else "shrink the workgroup tile"
        )
        raise problem(
            "reduction",
            f"at most {facts.lds_bytes_per_workgroup} bytes of LDS per workgroup on {facts.arch}; "
            f"workgroup {list(strategy.workgroup)} with reduction {list(strategy.reduction or ())} "
            f"promotes {estimate.unpadded} bytes",
            list(strategy.reduction or ()),
            hint=hint,
            strategy=strategy.name,
        )


def _check_subgroups(strategy: GpuLowering, roles: tuple[str, ...], intrinsic: Any, facts: AmdGpuArch) -> None:
    """TileAndFuse + MMA: each workgroup tile is a whole number of subgroup tiles
    (subgroup x intrinsic), and the subgroups fill the workgroup exactly."""
    assert strategy.subgroup is not None
    subgroups = 1
    innermost = {role: max(i for i, r in enumerate(roles) if r == role) for role in "mn" if role in roles}
    for i, role in enumerate(roles):
        if role not in "mn" or not strategy.workgroup[i]:
            continue
        size = (intrinsic.m if role == "m" else intrinsic.n) if innermost[role] == i else 1
        span = strategy.subgroup[i] * size
        if span == 0 or strategy.workgroup[i] % span:
            raise problem(
                f"subgroup[{i}]",
                f"a tile whose span (subgroup x {size} for {intrinsic.name}) divides "
                f"workgroup[{i}] = {strategy.workgroup[i]}",
                strategy.subgroup[i],
                strategy=strategy.name,
            )
        subgroups *= strategy.workgroup[i] // span
    threads = subgroups * facts.subgroup_size
    if threads != strategy.thread_count():
        raise problem(
            "workgroup_size",
            f"{threads} threads: the workgroup tile {list(strategy.workgroup)} holds {subgroups} subgroup "
            f"tiles of {list(strategy.subgroup)} x {intrinsic.m}x{intrinsic.n} ({intrinsic.name})",
            Described(f"{list(strategy.workgroup_size)} ({strategy.thread_count()} threads)"),
            strategy=strategy.name,
        )
