"""The documentation's shape (issue: docs a newcomer can read): the README stays under 250
lines, no paragraph or list item of README.md, docs/*.md or an example README passes 120
words, every measurement sits in a table that names its machine and ISA (never in a
sentence), every relative link resolves, and every `tdsl` command and option the pages
name exists in the parser. Whether the blocks run is test_readme.py's job."""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
from pathlib import Path

import pytest
from readme_blocks import ROOT, code_blocks, command_lines, pages
from tdsl.cli import parser

MAX_README_LINES = 250
MAX_WORDS = 120

DOCS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))

FIGURE_IN_TABLE = re.compile(r"\d(?:\.\d+)?\s?(?:ms|s|min|GFLOP/s|GB/s|MB|KB|MFLOP)\b|\d\.\d+x\b|\b\d+x\b(?!\d)|\d\s?%")
"""A measured figure in a table cell: a time, a rate, a size, a ratio or a share."""

FIGURE_IN_PROSE = re.compile(r"\b\d+\.\d+x\b|\d\s?GFLOP/s|\b\d+\.\d+\s?ms\b")
"""A measured figure in a sentence: a fractional speed-up, a rate, a fractional time."""


def _strip_code(text: str) -> str:
    """``text`` with fenced blocks blanked (line count kept)."""
    return re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)


def blocks(page: str) -> list[tuple[str, list[str]]]:
    """The page as ``[(kind, lines)]``: kind is "heading", "table", "item" (one list item
    with its continuation lines) or "paragraph"; fenced code is left out."""
    out: list[tuple[str, list[str]]] = []
    for chunk in re.split(r"\n\s*\n", _strip_code((ROOT / page).read_text())):
        lines = [line for line in chunk.splitlines() if line.strip()]
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("#"):
                out.append(("heading", [line]))
            elif stripped.startswith("|"):
                if out and out[-1][0] == "table" and out[-1][1] and lines.index(line) > 0:
                    out[-1][1].append(line)
                else:
                    out.append(("table", [line]))
            elif re.match(r"([*-]|\d+\.)\s", stripped) and not line.startswith("  "):
                out.append(("item", [line]))
            elif out and out[-1][0] in ("item", "paragraph") and lines.index(line) > 0:
                out[-1][1].append(line)
            else:
                out.append(("paragraph", [line]))
    return out


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def tables(page: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """``[(caption, header, rows)]``: the caption is the paragraph just above the table."""
    found = []
    parts = blocks(page)
    for i, (kind, lines) in enumerate(parts):
        if kind != "table":
            continue
        caption = " ".join(parts[i - 1][1]) if i and parts[i - 1][0] == "paragraph" else ""
        rows = [_cells(line) for line in lines if not re.fullmatch(r"\|?[\s:|-]+\|?", line.strip())]
        found.append((caption, rows[0], rows[1:]))
    return found


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) < MAX_README_LINES


@pytest.mark.parametrize("page", pages())
def test_no_paragraph_or_list_item_passes_the_word_limit(page: str) -> None:
    long = [
        f"{len(' '.join(lines).split())} words: {lines[0][:70]}..."
        for kind, lines in blocks(page)
        if kind in ("paragraph", "item") and len(" ".join(lines).split()) > MAX_WORDS
    ]
    assert not long, f"{page}: paragraphs over {MAX_WORDS} words:\n" + "\n".join(long)


@pytest.mark.parametrize("page", pages())
def test_measurements_are_table_rows_naming_machine_and_isa(page: str) -> None:
    for caption, header, rows in tables(page):
        if not any(FIGURE_IN_TABLE.search(cell) for row in rows for cell in row):
            continue
        if "Machine:" in caption and "ISA:" in caption:
            continue
        names = [h.lower() for h in header]
        machine = [i for i, h in enumerate(names) if "machine" in h]
        isa = [i for i, h in enumerate(names) if re.search(r"\bisa\b", h)]
        assert machine and isa, f"{page}: a table of measurements ({header}) has no machine and ISA columns or caption"
        for row in rows:
            assert row[machine[0]] and row[isa[0]], f"{page}: a measurement names no machine or ISA: {row}"


@pytest.mark.parametrize("page", pages())
def test_no_measurement_in_a_sentence(page: str) -> None:
    found = [
        " ".join(lines)[:100]
        for kind, lines in blocks(page)
        if kind in ("paragraph", "item") and FIGURE_IN_PROSE.search(re.sub(r"`[^`]*`", "", " ".join(lines)))
    ]
    assert not found, (
        f"{page}: measured figures in prose (move them to a table in docs/measurements.md):\n" + "\n".join(found)
    )


def _slug(heading: str) -> str:
    text = heading.lstrip("#").strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(path: Path) -> set[str]:
    return {_slug(m.group(0)) for m in re.finditer(r"^#{1,6} .*$", _strip_code(path.read_text()), flags=re.M)}


@pytest.mark.parametrize("page", pages())
def test_every_relative_link_resolves(page: str) -> None:
    source = ROOT / page
    text = _strip_code(source.read_text())
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (source.parent / path).resolve() if path else source
        assert resolved.exists(), f"{page}: link to {target}: no such file"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{page}: link to {target}: no such heading"


def test_every_docs_page_is_linked_from_the_readme_and_opens_with_a_summary() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in DOCS:
        assert f"]({page})" in readme, f"README.md does not link {page}"
        parts = blocks(page)
        assert parts[0][0] == "heading" and parts[0][1][0].startswith("# "), page
        assert parts[1][0] == "paragraph", f"{page} opens without a summary paragraph"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings}


@pytest.mark.parametrize("page", pages())
def test_every_command_line_in_a_block_parses(page: str) -> None:
    for _, kind, body in code_blocks((ROOT / page).read_text()):
        if kind != "sh":
            continue
        for line in command_lines(body):
            try:
                parser().parse_args(shlex.split(line)[1:])
            except SystemExit as exc:
                pytest.fail(f"{page}: `{line}` does not parse (exit {exc.code})")


@pytest.mark.parametrize("page", pages())
def test_every_inline_command_names_real_options(page: str) -> None:
    commands = _subparsers()
    every = set().union(*(_options(p) for p in commands.values()))
    for span in re.findall(r"`(tdsl [^`]+)`", _strip_code((ROOT / page).read_text())):
        words = span.split()[1:]
        command = words[0] if words and not words[0].startswith("-") else None
        if command is None:
            known = _options(parser())
        elif command in commands:
            known = _options(commands[command])
        else:
            assert command.isupper(), f"{page}: `{span}`: no command {command!r}"
            known = every
        for word in words:
            flag = re.sub(r"[\[\]]", "", word).split("=")[0]
            if re.fullmatch(r"--?[A-Za-z][\w-]*", flag):
                assert flag in known, f"{page}: `{span}`: {flag} is not an option of tdsl {command or ''}"


IR_MARKERS = {"tdsl.layout", "tdsl.applied", "tdsl.rule"}
"""Attribute names tdsl writes into the IR, not Python names."""


def _resolve(dotted: str) -> object:
    """The module or attribute a dotted ``tdsl.…`` name names (ImportError/AttributeError if none)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("page", pages())
def test_every_tdsl_name_the_page_gives_exists(page: str) -> None:
    """Dotted names in inline code (`tdsl.strategies.cpu.auto()`) and the `from tdsl… import`
    lines of its Python blocks: a module that moved shows up here, without compiling."""
    text = (ROOT / page).read_text()
    names = [m.group(1) for m in re.finditer(r"`(tdsl(?:\.\w+)+)(?:\([^`]*\))?`", _strip_code(text))]
    for _, kind, body in code_blocks(text):
        if kind == "python":
            for module, imported in re.findall(r"^from (tdsl[\w.]*) import ([\w, ]+)", body, flags=re.M):
                names += [f"{module}.{name.split()[0]}" for name in imported.split(",")]
    for name in names:
        if name in IR_MARKERS:
            continue
        try:
            _resolve(name)
        except (ImportError, AttributeError) as exc:
            pytest.fail(f"{page}: `{name}` does not exist ({exc})")


@pytest.mark.parametrize("page", pages())
def test_every_repository_path_the_page_names_exists(page: str) -> None:
    text = _strip_code((ROOT / page).read_text())
    for path in re.findall(r"`((?:dsl|tests|benchmarks|examples|templates|docs|\.ci)/[^`\s<>*]*)`", text):
        assert (ROOT / path).exists(), f"{page}: `{path}` does not exist"


def test_the_layout_names_every_layer_of_the_package() -> None:
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `dsl/` |"))
    named = set(re.findall(r"`(\w+)/`", row.split("|")[2]))
    layers = {
        p.name for p in (ROOT / "dsl").iterdir() if p.is_dir() and not p.is_symlink() and (p / "__init__.py").exists()
    }
    assert named == layers, f"README's layout row names {sorted(named)}; dsl/ holds {sorted(layers)}"
