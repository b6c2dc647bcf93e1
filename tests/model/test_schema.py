"""tdsl schema: the JSON Schema of strategy files accepts what the loader accepts and
refuses what it refuses (structure, kinds, types, ranges), checked with jsonschema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest
import tdsl.schema as schema_module
import yaml
from tdsl import StrategySet, load
from tdsl.cli import main
from tdsl.errors import StrategyError, TdslError
from tdsl.schema import strategy_file_schema

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = sorted(ROOT.glob("examples/*/strategy.*"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = strategy_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: jsonschema.Draft202012Validator, data: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:300]}" for e in validator.iter_errors(data)]


def test_examples_exist() -> None:
    assert len(EXAMPLES) >= 8 and any(p.suffix == ".yaml" for p in EXAMPLES)


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.suffix == ".yaml"], ids=lambda p: p.parent.name)
def test_every_example_yaml_file_validates(validator: jsonschema.Draft202012Validator, path: Path) -> None:
    assert _errors(validator, yaml.safe_load(path.read_text())) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_show_json_and_yaml_of_every_example_validate(
    validator: jsonschema.Draft202012Validator, capsys, path: Path
) -> None:
    assert main(["show", str(path), "--format", "json"]) == 0
    assert _errors(validator, json.loads(capsys.readouterr().out)) == []
    assert main(["show", str(path), "--format", "yaml"]) == 0
    assert _errors(validator, yaml.safe_load(capsys.readouterr().out)) == []


BASE: dict[str, Any] = {
    "name": "s",
    "rules": [
        {
            "target": "cpu",
            "match": {
                "kind": "contraction",
                "lhs_type": "f32",
                "rhs_type": "f32",
                "output_type": "f32",
                "m": 256,
                "n": 384,
                "k": 512,
            },
            "strategy": {
                "kind": "cpu_lowering",
                "name": "mm",
                "distribution": [64, 64, 0],
                "vector_common_parallel": [8, 32, 0],
                "vector_reduction": [0, 0, 1],
            },
        }
    ],
}


def _match(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for key, value in fields.items():
            if value is _DROP:
                data["rules"][0]["match"].pop(key)
            else:
                data["rules"][0]["match"][key] = value

    return edit


def _strategy(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for key, value in fields.items():
            if value is _DROP:
                data["rules"][0]["strategy"].pop(key)
            else:
                data["rules"][0]["strategy"][key] = value

    return edit


_DROP = object()
_NAMES = {"kind": "op_name", "names": "linalg.matmul"}

# (id, edit, accepted by the loader)
VARIANTS: list[tuple[str, Callable[[dict[str, Any]], None], bool]] = [
    ("m: 256", _match(m=256), True),
    ("m: any", _match(m="any"), True),
    ("m: null", _match(m=None), True),
    ("m left out", _match(m=_DROP), True),
    ("m: [256]", _match(m=[256]), True),
    ("m: [[128], [256]]", _match(m=[[128], [256]]), True),
    ("m: one_of ints", _match(m={"one_of": [128, 256]}), True),
    ("m: one_of lists", _match(m={"one_of": [[128], [256]]}), True),
    ("m: 'big'", _match(m="big"), False),
    ("m: -1", _match(m=-1), True),
    ("m: ['?', 256]", _match(m=["?", 256]), True),
    ("m: one_of with '?'", _match(m={"one_of": [["?"], [256]]}), True),
    ("m: -2", _match(m=-2), False),
    ("m: '??'", _match(m=["??"]), False),
    ("m: true", _match(m=True), False),
    ("m: [1, [2]]", _match(m=[1, [2]]), False),
    ("m: one_of empty", _match(m={"one_of": []}), False),
    ("m: one_of and more", _match(m={"one_of": [1], "x": 2}), False),
    ("m: 65 alternatives", _match(m={"one_of": list(range(1, 66))}), False),
    ("unknown matcher field", _match(q=1), False),
    ("matcher without kind", _match(kind=_DROP), False),
    ("unknown matcher kind", _match(kind="nope"), False),
    ("names: one string", lambda d: d["rules"][0].update(match=dict(_NAMES)), True),
    ("names: a list", lambda d: d["rules"][0].update(match={**_NAMES, "names": ["linalg.matmul"]}), True),
    ("names: not an op name", lambda d: d["rules"][0].update(match={**_NAMES, "names": "Matmul"}), False),
    ("names: a number", lambda d: d["rules"][0].update(match={**_NAMES, "names": 3}), False),
    ("strategy without kind", _strategy(kind=_DROP), False),
    ("strategy name not a symbol", _strategy(name="1mm"), False),
    (
        "tile list of 17",
        lambda d: d["rules"][0].update(
            match=dict(_NAMES),
            strategy={
                **d["rules"][0]["strategy"],
                "distribution": [1] * 17,
                "vector_common_parallel": None,
                "vector_reduction": None,
            },
        ),
        False,
    ),
    ("negative tile", _strategy(distribution=[-1, 64, 0]), False),
    ("tile as a string", _strategy(distribution=["64", 64, 0]), False),
    ("target without kind", lambda d: d.update(targets=[{"name": "cpu"}]), False),
    ("target with kind", lambda d: d.update(targets=[{"kind": "llvm-cpu", "name": "cpu"}]), True),
    ("top-level extra key", lambda d: d.update(extra=1), False),
    ("no rules key", lambda d: d.pop("rules"), False),
]


@pytest.mark.parametrize(("edit", "accepted"), [(e, a) for _, e, a in VARIANTS], ids=[i for i, _, _ in VARIANTS])
def test_schema_agrees_with_the_loader(
    validator: jsonschema.Draft202012Validator, edit: Callable[[dict[str, Any]], None], accepted: bool
) -> None:
    data = copy.deepcopy(BASE)
    edit(data)
    try:
        StrategySet.model_validate(copy.deepcopy(data))
        loads = True
    except StrategyError:
        loads = False
    assert loads == accepted, "the loader changed its mind: update this table"
    errors = _errors(validator, data)
    assert (not errors) == accepted, errors


def test_yaml_with_m_256_loads_and_validates(validator: jsonschema.Draft202012Validator, tmp_path: Path) -> None:
    """The issue's example: `m: 256` in YAML is accepted by both."""
    text = (
        "name: s\n"
        "rules:\n"
        "  - target: cpu\n"
        "    match: {kind: contraction, lhs_type: f32, rhs_type: f32, output_type: f32, m: 256, n: 384, k: 512}\n"
        "    strategy: {kind: cpu_lowering, name: mm, distribution: [64, 64, 0]}\n"
    )
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert load(path).rules[0].match.m == ((256,),)  # type: ignore[union-attr]
    assert _errors(validator, yaml.safe_load(text)) == []


def test_an_unknown_before_validator_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new convenience spelling in the model must be taught to the schema (else the schema
    would refuse what the loader accepts)."""
    known = dict(schema_module._BEFORE)
    known.pop("tdsl.model.matchers.dims._canonical_dims")
    monkeypatch.setattr(schema_module, "_BEFORE", known)
    with pytest.raises(TdslError, match="_canonical_dims accepts spellings tdsl.schema does not know"):
        strategy_file_schema()


def test_schema_command(tmp_path: Path, capsys) -> None:
    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == strategy_file_schema()
    assert printed["$schema"].endswith("2020-12/schema") and printed["title"] == "tdsl strategy file"
    out = tmp_path / "strategy.schema.json"
    assert main(["schema", "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == printed
    assert main(["schema", "-o", str(tmp_path)]) == 2
