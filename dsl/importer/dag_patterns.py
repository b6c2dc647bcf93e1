"""Reading ``cast_compatible_dag_from_root``: tdsl's one-pack pattern as a
:class:`PackMatch`, any other pattern region as a :class:`DagMatch`."""

from __future__ import annotations

from typing import Literal, Optional

from ..errors import StrategyError
from ..model.kinds import MatcherKind
from ..model.matchers import DagMatch, PackMatch
from .ir import Op
from .problems import Unsupported


def read_dag(op: Op) -> MatcherKind:
    """``cast_compatible_dag_from_root``: a :class:`PackMatch` for tdsl's one-pack pattern,
    else a :class:`DagMatch` holding the printed pattern region."""
    region = op.body
    pack = _pack(region.ops, region.arg_types)
    if pack is not None:
        return pack
    text = op.text
    start = text.index("{\n") + 2
    end = text.rindex("\n}")
    body = "\n".join(line[2:] if line.startswith("  ") else line for line in text[start:end].split("\n"))
    try:
        return DagMatch(pattern=body)
    except StrategyError as err:
        raise Unsupported(op.name, op.line, f"a pattern DAG tdsl can render ({err})") from None


def _pack(ops: list[Op], arg_types: tuple[str, ...]) -> Optional[MatcherKind]:
    """The :class:`PackMatch` for a pattern that is one ``linalg.pack`` / ``linalg.unpack``
    over block arguments of the types tdsl renders, else None."""
    ops = [o for o in ops if o.name != "transform.yield"]
    if len(ops) != 1 or ops[0].name not in ("linalg.pack", "linalg.unpack"):
        return None
    op = ops[0]
    inner = op.attr("inner_dims_pos")
    tiles = op.attr("static_inner_tiles")
    outer = op.attr("outer_dims_perm")
    if not isinstance(inner, tuple) or not isinstance(tiles, tuple):
        return None
    if not all(isinstance(t, str) for t in arg_types) or len(arg_types) < 2:
        return None
    src = arg_types[0]
    kind: Literal["pack", "unpack"] = "pack" if op.name == "linalg.pack" else "unpack"
    unpacked = src if kind == "pack" else arg_types[1]
    if not unpacked.startswith("tensor<"):
        return None
    parts = unpacked[len("tensor<") : -1].split("x")
    try:
        model: PackMatch = PackMatch.model_validate(
            {
                "op": kind,
                "element_type": parts[-1],
                "inner_dims_pos": tuple(int(v) for v in inner if isinstance(v, int)),
                "inner_tiles": tuple(int(v) for v in tiles if isinstance(v, int)),
                "outer_dims_perm": None
                if not isinstance(outer, tuple)
                else tuple(int(v) for v in outer if isinstance(v, int)),
                "unpacked_rank": len(parts) - 1,
            }
        )
    except StrategyError:
        return None
    src_type, dst_type = model.operand_types()
    if arg_types[0] != src_type or arg_types[1] != dst_type or len(arg_types) > 3:
        return None
    return model
