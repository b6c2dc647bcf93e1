"""A strategy set written out as an editable file: Python source or YAML, each rule
commented (what it targets, what it measured), with header notes and the dispatches left out
(``tdsl ops --emit``, ``tdsl tune``'s ``tuned.py`` and ``tuned.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.ops import python_names, python_source
from ..sets.loader import dump
from ..sets.strategy_set import StrategySet


@dataclass(frozen=True)
class Emitted:
    """The emitted set, a comment per rule (the dispatch it targets) and the dispatches
    left out with the reason."""

    strategies: StrategySet
    comments: tuple[str, ...]
    left_out: tuple[str, ...]
    source: str = "tdsl ops --emit"
    """The command that emitted the set (named in the header)."""
    notes: tuple[str, ...] = ()
    """Lines for the header, after the first (e.g. the machine the figures were measured on)."""

    def python(self, variable: str = "strategies") -> str:
        """A Python module that builds the set, each rule commented with its dispatch."""
        names = sorted(
            {n for r in self.strategies.rules for x in (r.match, r.strategy) for n in python_names(x)}
            | {type(t).__name__ for t in self.strategies.targets}
            | {"StrategySet"}
            | ({"Rule"} if self.strategies.rules else set())
        )
        lines = [
            *self._docstring(),
            "",
            f"from tdsl import {', '.join(names)}",
            "",
            f"{variable} = StrategySet(",
            f'    name="{self.strategies.name}",',
            "    targets=[" + ", ".join(python_source(t) for t in self.strategies.targets) + "],",
            "    rules=["
            if self.strategies.rules
            else "    rules=[],  # none: the target's flags are the whole strategy",
        ]
        for rule, comment in zip(self.strategies.rules, self.comments):
            lines.append(f"        # {comment}")
            lines.append(f'        Rule(target="{rule.target}", match={python_source(rule.match)},')
            optional = ", optional=True" if rule.optional else ""
            lines.append(f"             strategy={python_source(rule.strategy)}{optional}),")
        if self.strategies.rules:
            lines.append("    ],")
        lines.append(")")
        lines += [f"# not covered: {reason}" for reason in self.left_out]
        return "\n".join(lines) + "\n"

    def _docstring(self) -> list[str]:
        first = f"Strategies for {self.strategies.name}, emitted by `{self.source}`; edit freely."
        if not self.notes:
            return [f'"""{first}"""']
        return [f'"""{first}', "", *self.notes, '"""']

    def yaml(self) -> str:
        """The set as YAML (:func:`tdsl.dump`), headed by a comment per rule (the dispatch it
        targets) and followed by the dispatches left out with the reason, as comments."""
        head = [f"# Strategies for {self.strategies.name}, emitted by `{self.source}`; edit freely."]
        head += [f"# {line}" if line else "#" for line in self.notes]
        head += [
            f"# rule {rule.strategy.name}: {comment}" for rule, comment in zip(self.strategies.rules, self.comments)
        ]
        tail = [f"# not covered: {reason}" for reason in self.left_out]
        body: str = dump(self.strategies, "yaml")
        return "\n".join(head) + "\n" + body + "".join(f"{line}\n" for line in tail)
