"""The entry point of a spec and its sequence names: which sequence runs the
``foreach_match`` runs, their (matcher, action) pairs and the function each is scoped to,
the work a tdsl render runs after a run, and tdsl symbols from sequence names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..bindings import Unit
from ..model.kinds import Injection
from .ir import Module, Op, Sequence
from .problems import Note, SpecImportError

TUNING_ENTRY_ATTR = "iree_codegen.tuning_spec_entrypoint"
TUNING_MODULE_ATTR = "iree_codegen.tuning_spec_with_default_entrypoint"
TUNING_APPLIED = "__tuning_spec_applied__"


def sanitize(name: str) -> str:
    """``name`` as a tdsl symbol: characters other than letters, digits and ``_`` become
    ``_``; a leading digit gets a ``_`` in front."""
    text = "".join(c if c.isalnum() and c.isascii() or c == "_" else "_" for c in name) or "_"
    if not (text[0].isalpha() or text[0] == "_"):
        text = "_" + text
    return text


@dataclass
class Pair:
    matcher: str
    action: str
    scope: Optional[str]
    line: Optional[int]


def check_spec(module: Module, path: str) -> None:
    """Refuses a file without operations (empty) and a module without transform
    sequences (not a transform spec), naming what it holds instead."""
    if not module.sequences and not module.others:
        raise SpecImportError(path, None, "", "a transform-dialect spec, received an empty spec (no operation)")
    if module.sequences:
        return
    old = next((op for op in module.others if op.name == "transform.sequence"), None)
    if old is not None:
        raise SpecImportError(
            path,
            old.line,
            old.name,
            "the older top-level entry point: write it as transform.named_sequence @__transform_main(%root: "
            "!transform.any_op) in a module with the transform.with_named_sequence attribute",
        )
    held = ", ".join(dict.fromkeys(op.name for op in module.others))
    raise SpecImportError(
        path,
        module.others[0].line,
        module.others[0].name,
        f"a transform-dialect spec (transform.named_sequence ops), received not a transform spec: it holds {held}",
    )


def guess_injection(module: Module, text: str) -> Optional[Injection]:
    """The injection point of a spec whose entry point has no name IREE defaults to (a
    codegen library run as ``--iree-codegen-transform-dialect-library=lib.mlir@transform_main``):
    a codegen library where one sequence runs ``foreach_match`` and the spec's code names
    ``hal.executable`` ops (only a codegen library sees them), else None."""
    if any(module.sequence(name) is not None for name in ("__transform_main", "__kernel_config")):
        return None
    if any(isinstance(s.op.attrs.get(TUNING_ENTRY_ATTR), Unit) for s in module.sequences):
        return None
    runs = [s for s in module.sequences if any(op.name == "transform.foreach_match" for op in s.op.body.ops)]
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    return Injection.CODEGEN_LIBRARY if len(runs) == 1 and "hal.executable" in code else None


def find_entry(module: Module, kind: Optional[Injection], path: str) -> tuple[Sequence, Injection]:
    marked = [s for s in module.sequences if isinstance(s.op.attrs.get(TUNING_ENTRY_ATTR), Unit)]
    if len(marked) > 1:
        raise SpecImportError(
            path,
            marked[1].line,
            "transform.named_sequence",
            "a single tuning spec entry point (several have iree_codegen.tuning_spec_entrypoint)",
        )
    if marked:
        return marked[0], kind or Injection.TUNING_SPEC
    main = module.sequence("__transform_main")
    if main is not None:
        return main, kind or Injection.PREPROCESSING
    config = module.sequence("__kernel_config")
    if config is not None:
        tuning = isinstance(module.attrs.get(TUNING_MODULE_ATTR), Unit)
        return config, kind or (Injection.TUNING_SPEC if tuning else Injection.CODEGEN_LIBRARY)
    runs = [s for s in module.sequences if any(op.name == "transform.foreach_match" for op in s.op.body.ops)]
    if len(runs) == 1 and kind is not None:
        return runs[0], kind
    names = ", ".join("@" + s.name for s in runs) or "none"
    raise SpecImportError(
        path,
        runs[0].line if runs else None,
        "transform.named_sequence",
        "an entry point: @__kernel_config or a sequence with iree_codegen.tuning_spec_entrypoint (tuning spec or codegen "
        f"library), or @__transform_main (preprocessing spec); sequences with foreach_match: {names}",
        "name the injection point (kind=tuning_spec, preprocessing or codegen_library) to use the only one"
        if len(runs) == 1
        else "",
    )


FUNCTIONS = (("func.func", "util.func"), ("func.func",), ("util.func",))
"""The ``ops`` of a ``structured.match`` of payload functions."""


def _runs_over(op: Op, sources: set[int]) -> Optional[Op]:
    """The ``foreach_match`` of ``transform.foreach %functions { foreach_match in %f }``
    (``%functions`` one of ``sources``); None for any other foreach."""
    body = [o for o in op.body.ops if o.name != "transform.yield"] if op.regions else []
    if op.name != "transform.foreach" or not op.operands or op.operands[0] not in sources or len(body) != 1:
        return None
    run = body[0]
    return run if run.name == "transform.foreach_match" and run.operands[:1] == op.body.args[:1] else None


def _function_match(op: Op, roots: set[int]) -> tuple[bool, Optional[str]]:
    """(whether ``op`` matches payload functions in the root, the one ``sym_name`` it names)."""
    if op.name != "transform.structured.match" or not op.operands or op.operands[0] not in roots:
        return False, None
    attrs = op.attr("op_attrs")
    if op.attr("ops") not in FUNCTIONS:
        return False, None
    if set(op.attrs) == {"ops"}:
        return True, None
    if isinstance(attrs, dict) and set(attrs) == {"sym_name"} and isinstance(attrs["sym_name"], str):
        return True, attrs["sym_name"]
    return False, None


def _run_pairs(run: Op, scope: Optional[str], path: str) -> list[Pair]:
    for flag in ("restrict_root", "flatten_results"):
        if run.attr(flag) is not None:
            raise SpecImportError(path, run.line, run.name, f"foreach_match with {flag} (tdsl's runs have neither)")
    matchers, actions = run.attr("matchers"), run.attr("actions")
    assert isinstance(matchers, tuple) and isinstance(actions, tuple)
    return [Pair(getattr(m, "name", ""), getattr(a, "name", ""), scope, run.line) for m, a in zip(matchers, actions)]


def read_pairs(
    entry: Sequence,
    path: str,
    deferred: Optional[list[Op]] = None,
    notes: Optional[list[Note]] = None,
    own: bool = False,
) -> list[Pair]:
    """The (matcher, action) pairs of the entry's ``foreach_match`` runs, in order, with the
    function each run is scoped to; a run inside ``transform.foreach`` over every payload
    function runs over the root (noted in ``notes``). With ``deferred``, the other ops of the
    entry after a run (in a tdsl render (``own``), work tdsl runs after a run, located at
    ``<strategy>.<field>``) are collected there instead of refused."""
    scopes: dict[int, Optional[str]] = {}
    roots = {entry.args[0]} if entry.args else set()
    pairs: list[Pair] = []
    for op in entry.op.body.ops:
        if (
            deferred is not None
            and pairs
            and op.name not in ("transform.foreach_match", "transform.yield")
            and not is_scope(op)
        ):
            deferred.append(op)
            continue
        functions, name = _function_match(op, roots)
        nested = _runs_over(op, set(scopes))
        if functions and (name is not None or not own):
            scopes[op.results[0]] = name
        elif op.name == "transform.foreach_match":
            source = op.operands[0]
            if source not in roots and scopes.get(source) is None:
                raise SpecImportError(
                    path, op.line, op.name, "a foreach_match over the payload root or a function tdsl scopes by name"
                )
            pairs.extend(_run_pairs(op, scopes.get(source), path))
            if source in roots and op.results:
                roots.add(op.results[0])
        elif nested is not None:
            scope = scopes[op.operands[0]]
            if scope is None and notes is not None:
                notes.append(
                    Note(op.line, "transform.foreach over every payload function: the rules run over the payload root")
                )
            pairs.extend(_run_pairs(nested, scope, path))
        elif op.name != "transform.yield":
            raise SpecImportError(
                path,
                op.line,
                op.name,
                f"an op in the entry point @{entry.name}: tdsl's entry only runs foreach_match (over the root or a function)",
            )
    if not pairs:
        raise SpecImportError(
            path,
            entry.line,
            "transform.named_sequence",
            f"a foreach_match in the entry point @{entry.name} (it selects no op)",
        )
    return pairs


def is_scope(op: Op) -> bool:
    attrs = op.attr("op_attrs")
    return op.name == "transform.structured.match" and isinstance(attrs, dict) and set(attrs) == {"sym_name"}


PER_OP = "per_op"
"""The key of :func:`deferred_fields` that names the sequence run on each folded op."""


def deferred_fields(ops: list[Op]) -> dict[str, dict[str, object]]:
    """The DataLayout fields tdsl renders as work after a run, by strategy name:
    ``propagate_reshapes`` (ops at ``<name>.propagate_reshapes``),
    ``consumer_interchange`` (the interchange at ``<name>.consumer_interchange``) and
    ``fold_unit_dims`` (ops at ``<name>.fold_unit_dims``; the sequence its
    ``transform.include`` runs on each folded op, which holds the pack steps, under
    :data:`PER_OP`)."""
    found: dict[str, dict[str, object]] = {}

    def visit(op: Op) -> None:
        loc = op.loc or ""
        name, _, field = loc.partition(".")
        if field == "propagate_reshapes":
            found.setdefault(name, {})["propagate_reshapes"] = True
        elif field == "consumer_interchange" and op.name == "transform.structured.interchange":
            found.setdefault(name, {})["consumer_interchange"] = op.attr("iterator_interchange")
        elif field == "fold_unit_dims":
            found.setdefault(name, {})["fold_unit_dims"] = True
        elif not field and op.name == "transform.include":
            found.setdefault(name, {})[PER_OP] = getattr(op.attr("target"), "name", None)
        for region in op.regions:
            for block in region:
                for child in block.ops:
                    visit(child)

    for op in ops:
        visit(op)
    return found


def own_index(symbol: str) -> Optional[tuple[int, str]]:
    """(rule index, name) of tdsl's action symbol ``tdsl_r<i>_<name>``."""
    if not symbol.startswith("tdsl_r"):
        return None
    head, _, name = symbol[len("tdsl_r") :].partition("_")
    return (int(head), name) if head.isdigit() and name else None
