"""Imperative entry points: a plain sequence (``@__transform_main``, ``@__kernel_config``,
...) that selects ops itself with ``transform.structured.match ops{[..]} in %root`` (or in
the root's functions, all or one by ``sym_name``) and runs a chain of transform ops on each
matched handle, instead of ``foreach_match`` pairs.

:func:`read_chains` splits the entry into one :class:`Chain` per match (the match, then
every op that uses its handle or a handle derived from it, in order). Each chain is read
like a pair (:meth:`tdsl.importer.pair_reader.PairReader.read_chain`): the match becomes the
matcher (:func:`chain_matcher`), the chain the action (:func:`chain_action`, a sequence on
the matched op), and with ``allow_raw`` a chain tdsl has no typed kind for is kept as the
MLIR of that chain alone (:func:`chain_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import StrategyError
from ..model.kinds import Injection
from ..model.matchers import OpNameMatch
from .entry import is_scope
from .ir import Block, Op, Sequence
from .problems import Note, SpecImportError, Unsupported

MATCH = "transform.structured.match"


@dataclass
class Chain:
    """One ``structured.match`` of the entry and the ops run on what it matched."""

    match: Op
    ops: list[Op] = field(default_factory=list)
    scope: Optional[str] = None
    """The function the match looks in (``structured.match attributes {sym_name = ..}``)."""

    @property
    def line(self) -> Optional[int]:
        return self.match.line

    @property
    def handle(self) -> int:
        return self.match.results[0]


FUNCTIONS = (("func.func",), ("util.func",), ("func.func", "util.func"))
"""The ``ops`` of a match of payload functions."""


def _selects(op: Op, containers: dict[int, Optional[str]]) -> bool:
    """Whether ``op`` is a match of payload ops in the root or in payload functions
    (``containers``: those handles, with the function a scope names)."""
    return op.name == MATCH and bool(op.operands) and op.operands[0] in containers and not is_scope(op)


def _functions(op: Op, injection: Injection) -> bool:
    """Whether ``op`` matches every payload function (no other filter) at ``injection``: IREE
    preprocesses ``util.func`` ops and configures ``func.func`` ops (a match of the other
    kind finds nothing there, and stays an op of its own chain)."""
    names = op.attr("ops")
    kind = "util.func" if injection is Injection.PREPROCESSING else "func.func"
    return names in FUNCTIONS and isinstance(names, tuple) and kind in names and set(op.attrs) == {"ops"}


def is_imperative(entry: Sequence) -> bool:
    """Whether ``entry`` selects ops with ``structured.match`` itself and runs no
    ``foreach_match``."""
    ops = entry.op.body.ops
    on_root = (op for op in ops if op.name == MATCH and op.operands and op.operands[0] in entry.args)
    return not any(_runs_matchers(op) for op in ops) and any(True for _ in on_root)


def _runs_matchers(op: Op) -> bool:
    if op.name == "transform.foreach_match":
        return True
    return any(_runs_matchers(child) for region in op.regions for block in region for child in block.ops)


def _uses(op: Op) -> set[int]:
    """The values ``op`` and the ops of its regions use."""
    used = set(op.operands)
    for region in op.regions:
        for block in region:
            for child in block.ops:
                used |= _uses(child)
    return used


def read_chains(entry: Sequence, path: str, notes: list[Note], injection: Injection) -> list[Chain]:
    """The entry's chains in order; an op that reads nothing (a ``transform.param.constant``)
    joins each chain that uses its value. A ``transform.print`` (debug output) is dropped
    with a note; an op that acts on the payload root itself, or on the handles of two matches at
    once, is refused (tdsl's rules act on the ops one match selects)."""
    chains: list[Chain] = []
    owner: dict[int, Chain] = {}
    containers: dict[int, Optional[str]] = dict.fromkeys(entry.args)
    constants: dict[int, Op] = {}  # values of ops that read nothing: copied into the chains using them
    for op in entry.op.body.ops:
        if op.name == "transform.yield":
            continue
        if op.name == "transform.print":
            notes.append(Note(op.line, "transform.print (debug output of the transform interpreter) is not kept"))
            continue
        if op.name == MATCH and op.operands and op.operands[0] in entry.args and is_scope(op):
            name = op.attr("op_attrs")
            assert isinstance(name, dict)
            containers[op.results[0]] = str(name["sym_name"])
            continue
        if _selects(op, containers):
            chain = Chain(op, scope=containers[op.operands[0]])
            chains.append(chain)
            owner[op.results[0]] = chain
            if _functions(op, injection) and chain.scope is None:
                containers[op.results[0]] = None  # matches in it look in every function
            continue
        if not op.operands and not op.regions and op.name != MATCH:
            constants.update((result, op) for result in op.results)  # a parameter, say
            continue
        found = {id(owner[v]): owner[v] for v in sorted(_uses(op)) if v in owner}
        if len(found) != 1:
            what = (
                "the payload root itself (tdsl's rules act on the ops a transform.structured.match selects)"
                if not found
                else f"the ops of {len(found)} matches at once (tdsl's rules act on the ops of one match)"
            )
            raise SpecImportError(path, op.line, op.name, f"an op of the entry point @{entry.name} that acts on {what}")
        chain = next(iter(found.values()))
        chain.ops.extend(c for v in sorted(_uses(op)) if (c := constants.get(v)) is not None and c not in chain.ops)
        chain.ops.append(op)
        for result in op.results:
            owner[result] = chain
    # a match of every function that only served as the place other matches look in
    kept = [c for c in chains if c.ops or not _functions(c.match, injection) or c.handle not in containers]
    if not kept:
        raise SpecImportError(
            path,
            entry.line,
            "transform.named_sequence",
            f"a transform.structured.match of payload ops in the entry point @{entry.name} (it selects no op)",
        )
    return kept


def chain_matcher(match: Op) -> OpNameMatch:
    """The matcher of ``structured.match ops{[..]}``: an :class:`OpNameMatch` of its names.
    Raises :class:`Unsupported` for the match's other filters (tdsl has no matcher for
    them)."""
    others = sorted(set(match.attrs) - {"ops"})
    if others:
        raise Unsupported(
            match.name,
            match.line,
            f"a match by op names only (ops{{[...]}}); tdsl has no typed matcher for its {', '.join(others)} "
            f"({_filters(match)})",
        )
    names = match.attr("ops")
    if not isinstance(names, tuple) or not names or not all(isinstance(n, str) for n in names):
        raise Unsupported(match.name, match.line, "a match by op names (ops{[...]})")
    try:
        return OpNameMatch(names=tuple(str(n) for n in names))
    except StrategyError as err:
        raise Unsupported(match.name, match.line, f"op names an OpNameMatch accepts ({err})") from None


def _filters(match: Op) -> str:
    """The filters of ``structured.match`` other than ``ops{[..]}``, as the spec spells them
    (``interface{LinalgOp} attributes {..}``)."""
    text = " ".join(match.scoped_text.split())
    head = text.split(" in %", 1)[0]
    names = head.find("ops{[")
    if names >= 0:
        end = head.find("]}", names)
        head = head[:names] + head[end + 2 :] if end >= 0 else head
    return head.split("transform.structured.match", 1)[-1].strip()


def chain_name(chain: Chain) -> str:
    """A rule name from what the chain matches and its first op: ``matmul_pack_greedily``."""
    names = chain.match.attr("ops")
    matched = str(names[0]).rsplit(".", 1)[-1] if isinstance(names, tuple) and names else "op"
    acting = next((op for op in chain.ops if op.operands), None)  # not a parameter it reads
    first = acting.name.rsplit(".", 1)[-1] if acting is not None else "match"
    return f"{matched}_{first}"


def chain_action(chain: Chain, name: str) -> Sequence:
    """The chain as an action sequence ``@name`` whose one argument is the matched op."""
    body = Block((chain.handle,), (chain.match.result_types[0],), list(chain.ops))
    op = Op("transform.named_sequence", (), (), (), {"sym_name": name}, [[body]], chain.line, None)
    return Sequence(name, op, ({},), ())


def chain_text(chain: Chain, names: dict[int, str], name: str) -> str:
    """The chain as the MLIR of an action ``@name`` taking the matched op
    (``!transform.any_op``, cast to the match's result type where that is narrower)."""
    handle = names[chain.handle]
    handle_type = chain.match.result_types[0]
    argument = handle if handle_type == "!transform.any_op" else "%matched"
    lines = [f"transform.named_sequence @{name}({argument}: !transform.any_op {{transform.consumed}}) {{"]
    if argument != handle:
        lines.append(f"  {handle} = transform.cast {argument} : !transform.any_op to {handle_type}")
    for op in chain.ops:
        lines.extend("  " + line for line in op.scoped_text.splitlines())
    lines += ["  transform.yield", "}"]
    return "\n".join(lines)
