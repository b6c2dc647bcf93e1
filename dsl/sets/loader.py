"""Loading and dumping strategy sets: Python files, YAML and JSON.

A Python strategy file defines one or more module-level :class:`StrategySet` objects;
``FILE.py:NAME`` picks one by name. YAML/JSON files hold one StrategySet in the form
:func:`dump` writes, which round-trips without loss.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import yaml

from ..errors import StrategyFileError, TdslError
from ..model.knobs import knobs_from_data
from .strategy_set import StrategySet

PY_SUFFIXES = (".py",)
DATA_SUFFIXES = (".yaml", ".yml", ".json")


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``"dir/file.py:name"`` -> (Path("dir/file.py"), "name")."""
    path, _, name = spec.partition(":") if spec.count(":") == 1 and not Path(spec).exists() else (spec, "", "")
    return Path(path), (name or None)


def as_strategy_set(strategies: StrategySet | str | Path) -> StrategySet:
    """``strategies`` itself, or the set :func:`load` reads from that strategy file."""
    return strategies if isinstance(strategies, StrategySet) else load(strategies)


def load(spec: str | Path) -> StrategySet:
    """Loads the StrategySet named by ``spec`` (``FILE``, or ``FILE.py:NAME``).

    Every problem with the file itself (missing, a directory, unreadable, not UTF-8, not
    valid YAML/JSON, a duplicate key, nested too deeply) is a one-line
    :class:`StrategyFileError`; an invalid strategy in it is a :class:`StrategyError`.
    """
    path, name = split_spec(str(spec))
    if path.is_dir():
        raise StrategyFileError(f"strategy file {str(path)!r}: expected a file, received a directory")
    if not path.exists():
        raise StrategyFileError(f"strategy file {str(path)!r} does not exist")
    if not path.is_file():
        raise StrategyFileError(f"strategy file {str(path)!r}: expected a regular file, received a special file")
    suffix = path.suffix.lower()
    if suffix in PY_SUFFIXES:
        _read_bytes(path)  # readable at all: the import would otherwise fail deep inside
        return _load_python(path, name)
    if suffix in DATA_SUFFIXES:
        if name is not None:
            raise StrategyFileError(f"{path}: ':NAME' selects objects in Python files only")
        return _load_data(path)
    raise StrategyFileError(
        f"{path}: expected a .py, .yaml, .yml or .json strategy file, received {suffix or 'no suffix'!r}"
    )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise StrategyFileError(f"{path}: cannot be read: {reason.lower()}") from None


def _read_text(path: Path) -> str:
    """The file's text: UTF-8 (a leading byte-order mark is dropped)."""
    data = _read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise StrategyFileError(
            f"{path}:{line}:{column}: expected UTF-8 text, received the byte 0x{data[err.start]:02x}"
        ) from None


def _load_python(path: Path, name: str | None) -> StrategySet:
    found = python_object(path, name, (StrategySet,), "StrategySet")
    assert isinstance(found, StrategySet)
    return found


def python_object(path: Path, name: str | None, kinds: tuple[type, ...], what: str) -> object:
    """The module-level object of one of ``kinds`` that the Python file ``path`` defines:
    the one named ``name``, or the only one. Errors name the file (and line) in one line."""
    module_name = f"_tdsl_strategy_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise StrategyFileError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except TdslError:
        raise
    except SystemExit as err:  # the file called sys.exit(): not tdsl's exit status
        raise StrategyFileError(
            f"{path}: expected a module that defines {what}s, received a call of exit({err.code!r})"
        ) from None
    except Exception as err:  # the user's file failed; report where, not our stack
        frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
        where = f"{path}:{frames[-1].lineno}" if frames else str(path)
        raise StrategyFileError(f"{where}: {type(err).__name__}: {err}") from None
    finally:
        sys.modules.pop(module_name, None)
    objects = {k: v for k, v in vars(module).items() if isinstance(v, kinds)}
    if name is not None:
        found = getattr(module, name, None)
        if not isinstance(found, kinds):
            raise StrategyFileError(
                f"{path}: expected a {what} named {name!r}, received "
                + (type(found).__name__ if found is not None else "nothing")
                + f"; {what}s in the file: {sorted(objects)}"
            )
        return found
    if len(objects) != 1:
        raise StrategyFileError(
            f"{path}: expected exactly one module-level {what} (or FILE.py:NAME), "
            f"received {len(objects)}: {sorted(objects)}"
        )
    return next(iter(objects.values()))


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first: int):
        self.key, self.line, self.first = key, line, first
        super().__init__(f"line {line}: duplicate key {key!r} (first on line {first})")


class _KeyNotString(Exception):
    def __init__(self, key: object, line: int):
        self.line = line
        super().__init__(f"line {line}: expected a string key, received {key!r}")


def _construct_mapping(loader: Any, node: Any, deep: bool = False) -> object:  # yaml is untyped
    """``SafeLoader.construct_mapping`` that refuses duplicate keys (YAML would keep the
    last one silently) and keys that are not strings (``1:``, ``yes:``, ``~:``)."""
    first: dict[str, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise _KeyNotString(key, line)
        if key in first:
            raise _DuplicateKey(key, line, first[key])
        first[key] = line
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


# yaml.safe_load's loader, strict about keys (built with type(): PyYAML has no type stubs).
_StrictLoader: object = type("_StrictLoader", (yaml.SafeLoader,), {"construct_mapping": _construct_mapping})


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key, 0, 0)
        found[key] = value
    return found


def _yaml_problem(err: object) -> str:
    """One line from a YAML error: where, then what (PyYAML's text spans lines)."""
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        what = ", ".join(str(t) for t in (err.context, err.problem) if t)
        return f"{where}{what}"
    return " ".join(str(err).split())


def _load_data(path: Path) -> StrategySet:
    text = _read_text(path)
    is_json = path.suffix.lower() == ".json"
    kind = "JSON" if is_json else "YAML"
    try:
        if is_json:
            data: object = json.loads(text, object_pairs_hook=_no_duplicates)
        else:
            data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    except json.JSONDecodeError as err:
        raise StrategyFileError(f"{path}: not valid JSON: {err}") from None
    except _DuplicateKey as err:
        dup = err
        if is_json:  # json reports no position: find the line with the YAML reader
            try:
                yaml.load(text, Loader=_StrictLoader)  # noqa: S506
            except _DuplicateKey as located:
                dup = located
            except (yaml.YAMLError, RecursionError):
                pass
        where = f"line {dup.line}: " if dup.line else ""
        first = f" (first on line {dup.first})" if dup.first else ""
        raise StrategyFileError(
            f"{path}: {where}duplicate key {dup.key!r}{first}: a {kind} mapping may hold each key once"
        ) from None
    except _KeyNotString as err:
        raise StrategyFileError(f"{path}: not valid {kind} for a strategy set: {err}") from None
    except yaml.YAMLError as err:
        raise StrategyFileError(f"{path}: not valid {kind}: {_yaml_problem(err)}") from None
    except RecursionError:
        raise StrategyFileError(f"{path}: expected a strategy set, received {kind} nested too deeply to read") from None
    if not isinstance(data, dict):
        raise StrategyFileError(
            f"{path}: expected a mapping with name, targets and rules, received {type(data).__name__}"
        )
    try:
        loaded: StrategySet = StrategySet.model_validate(knobs_from_data(data))
    except RecursionError:
        raise StrategyFileError(f"{path}: expected a strategy set, received {kind} nested too deeply") from None
    return loaded


def to_data(strategy_set: StrategySet) -> dict[str, object]:
    """The canonical plain-data form of a set without knobs (what YAML/JSON hold)."""
    strategy_set.require_concrete("dump")
    return strategy_set.model_dump(mode="json")


def dump(strategy_set: StrategySet, fmt: str = "yaml") -> str:
    """``strategy_set`` as YAML or JSON text; :func:`load` of it gives an equal set."""
    data = to_data(strategy_set)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100))
    raise StrategyFileError(f"format: expected 'yaml' or 'json', received {fmt!r}")
