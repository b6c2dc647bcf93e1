"""Writing an imported set as a readable Python strategy module or YAML file.

:func:`write_python` emits constructor calls with only the fields that differ from their
defaults, dimension groups in their short spellings (``m=2048``, ``filter=[3, 3]``,
``m={"one_of": [128, 256]}``) and MLIR text (pattern DAGs, raw escape hatches) as
module-level constants; :func:`tdsl.load` of the module gives back an equal set.
:func:`write_yaml` is :func:`tdsl.dump`'s YAML with multi-line strings as blocks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Union

import yaml
from pydantic import BaseModel

from ..model.base import SYMBOL_RE
from ..sets.loader import to_data
from ..sets.strategy_set import StrategySet

WIDTH = 100

_DIMS_FIELDS = (
    "batch",
    "m",
    "n",
    "k",
    "k1",
    "k2",
    "output_image",
    "output_channel",
    "filter",
    "input_channel",
    "depth",
    "strides",
    "dilations",
)


@dataclass(frozen=True)
class _Atom:
    text: str


@dataclass(frozen=True)
class _List:
    items: tuple["_Node", ...]
    open: str = "["
    close: str = "]"


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[tuple[str, "_Node"], ...]


_Node = Union[_Atom, _List, _Call]


def _flat(node: _Node) -> str:
    if isinstance(node, _Atom):
        return node.text
    if isinstance(node, _List):
        return node.open + ", ".join(_flat(i) for i in node.items) + node.close
    return f"{node.name}(" + ", ".join(f"{k}={_flat(v)}" for k, v in node.args) + ")"


def _format(node: _Node, indent: int, column: int) -> str:
    """``node`` starting at ``column`` on a line indented ``indent``: on one line when it
    fits, else one argument / item per line."""
    flat = _flat(node)
    if isinstance(node, _Atom) or len(flat) + column <= WIDTH:
        return flat
    pad = " " * (indent + 4)
    if isinstance(node, _List):
        if not node.items:
            return flat
        inner = "".join(f"{pad}{_format(i, indent + 4, indent + 4)},\n" for i in node.items)
        return f"{node.open}\n{inner}{' ' * indent}{node.close}"
    inner = "".join(f"{pad}{k}={_format(v, indent + 4, indent + 5 + len(k))},\n" for k, v in node.args)
    return f"{node.name}(\n{inner}{' ' * indent})"


class _Writer:
    def __init__(self) -> None:
        self.imports: dict[str, set[str]] = {}
        self.constants: list[tuple[str, str]] = []

    def use(self, cls: type) -> str:
        name = cls.__name__
        public = sys.modules.get("tdsl")  # the package's public API (loaded before any submodule)
        module = "tdsl" if getattr(public, name, None) is cls else cls.__module__
        self.imports.setdefault(module, set()).add(name)
        return name

    def text(self, value: str, field: str) -> str:
        """A one-line string as a literal; MLIR text (several lines) as a module constant
        named after its field (``PATTERN_1``, ``SEQUENCE_2``)."""
        if "\n" not in value:
            return repr(value)
        for name, existing in self.constants:
            if existing == value:
                return name
        base = "".join(c if c.isalnum() else "_" for c in field).upper().strip("_") or "MLIR"
        k = 1 + sum(1 for n, _ in self.constants if n.rsplit("_", 1)[0] == base)
        name = f"{base}_{k}"
        self.constants.append((name, value))
        return name

    def value(self, value: Any, field: str = "", owner: str = "") -> _Node:
        if isinstance(value, BaseModel):
            return self.model(value, owner)
        if isinstance(value, str):
            return _Atom(self.text(value, field))
        if isinstance(value, bool) or value is None:
            return _Atom(repr(value))
        if isinstance(value, int):
            return _Atom(str(value))
        if isinstance(value, dict):
            return _List(
                tuple(_Atom(f"{k!r}: {_flat(self.value(v, field, owner))}") for k, v in value.items()), "{", "}"
            )
        if isinstance(value, (tuple, list)):
            return _List(tuple(self.value(v, field, owner) for v in value))
        return _Atom(repr(value))

    def dims(self, value: Any) -> _Node:
        if value is None:
            return _Atom("None")
        if len(value) == 1:
            only = value[0]
            return _Atom(str(only[0]) if len(only) == 1 else "[" + ", ".join(str(v) for v in only) + "]")
        if all(len(a) == 1 for a in value):
            return _Atom('{"one_of": [' + ", ".join(str(a[0]) for a in value) + "]}")
        return _Atom('{"one_of": [' + ", ".join("[" + ", ".join(str(v) for v in a) + "]" for a in value) + "]}")

    def model(self, model: BaseModel, owner: str = "") -> _Call:
        cls = type(model)
        name = self.use(cls)
        own = getattr(model, "name", None)
        label = own if isinstance(own, str) else owner
        args: list[tuple[str, _Node]] = []
        for field_name, info in cls.model_fields.items():
            value = getattr(model, field_name)
            if field_name == "kind":
                continue
            if not info.is_required() and value == info.get_default(call_default_factory=True):
                continue
            if field_name in _DIMS_FIELDS and _is_dims(info):
                args.append((field_name, self.dims(value)))
            else:
                args.append((field_name, self.value(value, field_name, label)))
        return _Call(name, tuple(args))


def _is_dims(info: Any) -> bool:
    return any("canonical_dims" in repr(m) for m in info.metadata)


def _literal(value: str) -> str:
    if "\\" in value or '"""' in value or value.endswith('"'):
        return repr(value)
    return '"""\\\n' + value + '"""'


def write_python(
    strategy_set: StrategySet, source: str = "", notes: Iterable[str] = (), variable: Optional[str] = None
) -> str:
    """A Python strategy module that defines ``strategy_set`` (as ``variable``, by default
    the set's name); ``source`` and ``notes`` go into its docstring."""
    writer = _Writer()
    rules = _List(
        tuple(
            _Call(
                writer.use(type(rule)),
                (
                    ("target", _Atom(repr(rule.target))),
                    ("match", writer.value(rule.match)),
                    ("strategy", writer.value(rule.strategy)),
                    *((("optional", _Atom("True")),) if rule.optional else ()),
                ),
            )
            for rule in strategy_set.rules
        )
    )
    targets = writer.value(list(strategy_set.targets))
    name = variable or (strategy_set.name if SYMBOL_RE.fullmatch(strategy_set.name) else "strategies")
    top = _Call(
        writer.use(StrategySet), (("name", _Atom(repr(strategy_set.name))), ("targets", targets), ("rules", rules))
    )
    body = f"{name} = " + _format(top, 0, len(name) + 3) + "\n"
    doc = ["Imported by tdsl from " + (source or "a transform-dialect spec") + "."]
    listed = list(notes)
    if listed:
        doc += ["", "What the import changed:"] + [f"  {n}" for n in listed]
    header = '"""' + "\n".join(doc).replace('"""', "'''").replace("\\", "/") + '\n"""\n\n'
    imports = "from __future__ import annotations\n\n"
    for module in sorted(writer.imports, key=lambda m: (m != "tdsl", m)):
        imports += f"from {module} import " + ", ".join(sorted(writer.imports[module])) + "\n"
    constants = "".join(f"\n{n} = {_literal(v)}\n" for n, v in writer.constants)
    return header + imports + constants + "\n" + body


def _str(dumper: Any, value: str) -> Any:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


# yaml.SafeDumper with multi-line strings as literal blocks (built with type(): PyYAML has no type stubs).
_BlockDumper: Any = type("_BlockDumper", (yaml.SafeDumper,), {})
_BlockDumper.add_representer(str, _str)


def write_yaml(strategy_set: StrategySet, source: str = "", notes: Iterable[str] = ()) -> str:
    """The set as YAML (:func:`tdsl.load` reads it back equal); ``source`` and ``notes`` as
    a leading comment."""
    lines = [f"# Imported by tdsl from {source or 'a transform-dialect spec'}."]
    lines.extend(f"# {n}" for n in notes)
    text = yaml.dump(to_data(strategy_set), Dumper=_BlockDumper, sort_keys=False, default_flow_style=None, width=100)
    return "\n".join(lines) + "\n" + str(text)
