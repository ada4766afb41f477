"""The README and docs stay true to the code: finding codes, links, commands and task names."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from doit.doit_cmd import DoitConfig, DoitMain
from packaging.requirements import Requirement

from pipeline.cli import build_parser
from pipeline.loadcheck import REASONS
from pipeline.schemas import _CODES

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
INDEX = ROOT / "docs" / "findings.md"
SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
# codes raised through data rather than a call the scan below can read: the schema keyword table,
# load-check's reasons, the schema check's fallback, strict JSON's duplicate-key walk
INDIRECT = {code for code, _ in _CODES.values()} | set(REASONS)
INDIRECT |= {"schema_violation", "duplicate_key"}
# doit's own commands (docs/doit.md), which are not task groups
DOIT_COMMANDS = {cmd.get_name() for cmd in DoitMain.DOIT_CMDS}


def _constants(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _constants(node.body)
        yield from _constants(node.orelse)


def _trees() -> list[ast.Module]:
    return [ast.parse(p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("pipeline/**/*.py"))]


def _code_positions(trees: list[ast.Module]) -> dict[str, int]:
    """Finding, and each function with a `code` parameter: where that parameter stands."""
    position = {"Finding": 0}
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.FunctionDef):
            params = [a.arg for a in node.args.args if a.arg not in ("self", "cls")]
            if "code" in params:
                position[node.name] = params.index("code")
    return position


def _code_argument(call: ast.Call, position: dict[str, int]) -> ast.expr | None:
    name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
    if name not in position:
        return None
    given = [*call.args[position[name] : position[name] + 1]]
    given += [k.value for k in call.keywords if k.arg == "code"]
    return given[0] if given else None


def raised_codes() -> set[str]:
    """Every code passed to Finding() or to a helper whose `code` parameter makes one."""
    trees = _trees()
    position = _code_positions(trees)
    codes = set(INDIRECT)
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Call):
            code = _code_argument(node, position)
            codes.update(_constants(code) if code is not None else [])
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            target = node.targets[0]
            if isinstance(target, ast.Tuple):  # code, message = "...", "..."
                for t, v in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(t, ast.Name) and t.id == "code":
                        codes.update(_constants(v))
    return codes


def string_literals() -> set[str]:
    """Every string constant of pipeline/."""
    return {c for tree in _trees() for n in ast.walk(tree) for c in _constants(n)}


def index_rows() -> dict[str, list[str]]:
    """docs/findings.md: code -> the pages its row names."""
    rows: dict[str, list[str]] = {}
    for line in INDEX.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([a-z0-9_]+)` \| (.*) \|$", line)
        if match:
            rows[match.group(1)] = re.findall(r"\]\(([^)]+)\)", match.group(2))
    return rows


def test_findings_index_lists_every_raised_code() -> None:
    missing = sorted(raised_codes() - set(index_rows()))
    assert missing == [], f"add these codes to docs/findings.md: {missing}"


def test_raised_codes_are_stable_snake_case() -> None:
    """DESIGN.md: each finding has a stable snake_case code."""
    assert sorted(code for code in raised_codes() if not SNAKE.match(code)) == []


def test_parsed_models_are_frozen_data_classes() -> None:
    """DESIGN.md: parse into small frozen data classes first, then validate the model."""
    loose = []
    for tree in _trees():
        for node in ast.walk(tree):
            for deco in getattr(node, "decorator_list", []):
                call = deco if isinstance(deco, ast.Call) else None
                name = getattr(call.func if call else deco, "id", None)
                frozen = call is not None and any(
                    k.arg == "frozen" and getattr(k.value, "value", None) is True
                    for k in call.keywords
                )
                if name == "dataclass" and not frozen:
                    loose.append(getattr(node, "name", "?"))
    assert loose == []


def test_findings_index_lists_only_codes_the_compiler_has() -> None:
    literals = string_literals()
    unknown = sorted(code for code in index_rows() if code not in literals)
    assert unknown == [], f"docs/findings.md lists codes pipeline/ never raises: {unknown}"


def test_findings_index_pages_explain_their_codes() -> None:
    problems = []
    for code, links in index_rows().items():
        if not links:
            problems.append(f"{code}: no page")
        for link in links:
            page = (INDEX.parent / link).resolve()
            if f"`{code}`" not in page.read_text(encoding="utf-8"):
                problems.append(f"{code}: {link} does not name it")
    assert problems == []


def test_codes_named_in_finding_tables_exist() -> None:
    """A backticked snake_case word in a table's code column is a code pipeline/ has."""
    literals, problems = string_literals(), []
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else []
            # the code column: last cell of a row whose every backticked word looks like a code
            words = re.findall(r"`([^`]+)`", cells[-1]) if cells else []
            if words and all(SNAKE.match(w) for w in words) and "code" in _header(page, line):
                problems += [f"{page.name}: {w}" for w in words if w not in literals]
    assert problems == []


def _header(page: Path, row: str) -> str:
    """The header row of the table `row` belongs to."""
    lines = page.read_text(encoding="utf-8").splitlines()
    at = lines.index(row)
    while at > 0 and lines[at - 1].startswith("|"):
        at -= 1
    return lines[at].lower().rsplit("|", 2)[-2]


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = page.parent / path if path else page
        if not dest.exists():
            problems.append(f"{target}: no such file")
        elif anchor:
            headings = re.findall(r"^#+\s+(.*)$", dest.read_text(encoding="utf-8"), re.M)
            if anchor not in {_slug(h) for h in headings}:
                problems.append(f"{target}: no such heading")
    assert problems == []


def _choices(parser: object) -> dict[str, object]:
    for action in getattr(parser, "_actions", []):
        if getattr(action, "choices", None) and hasattr(action, "_name_parser_map"):
            return dict(action.choices)
    return {}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pipeline_subcommands_named_in_docs_exist(page: Path) -> None:
    commands = _choices(build_parser())
    problems = []
    text = page.read_text(encoding="utf-8")
    for sub, word in re.findall(r"\bpipeline (?:--json )?([a-z][a-z-]*)(?: ([a-z]+)\b)?", text):
        if sub not in commands:
            problems.append(f"pipeline {sub}")
        elif sub == "spheres" and word and word not in _choices(commands[sub]):
            problems.append(f"pipeline spheres {word}")
    assert problems == []


def _dodo_names() -> set[str]:
    """The names dodo.py binds, read from its source: importing it takes the checkout's build
    lock until exit, which blocks every other test process that builds this checkout."""
    tree = ast.parse((ROOT / "dodo.py").read_text(encoding="utf-8"))
    names = {
        alias.asname or alias.name
        for n in tree.body
        if isinstance(n, ast.ImportFrom)
        for alias in n.names
    }
    return names | {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_doit_tasks_named_in_docs_exist(page: Path) -> None:
    groups = {name.removeprefix("task_") for name in _dodo_names() if name.startswith("task_")}
    text = page.read_text(encoding="utf-8")
    # a command: in backticks, or at the start of a line of a command block
    named = set(re.findall(r"(?:`|^ *)doit ([a-z][a-z-]*)\b", text, re.M)) - DOIT_COMMANDS
    named |= {g for g in re.findall(r"`([a-z]+):(?:<[a-z_]+>|[a-z0-9_]+)`", text)}
    named -= {"tcad", "xmlns", "explorer"}  # XML prefixes, not steps
    assert sorted(named - groups) == []


def _parsers(parser: object, name: str = "pipeline") -> Iterator[tuple[str, object]]:
    yield name, parser
    for sub, child in _choices(parser).items():
        yield from _parsers(child, f"{name} {sub}")


def test_every_subcommand_and_argument_has_help() -> None:
    """`pipeline ... --help` is docs too: each subcommand and argument says what it is."""
    problems = []
    for name, parser in _parsers(build_parser()):
        for action in getattr(parser, "_actions", []):
            if hasattr(action, "_name_parser_map"):  # the subcommands: each with its help line
                helped = {a.dest for a in action._choices_actions if a.help}
                problems += [
                    f"{name} {sub}: no help" for sub in action.choices if sub not in helped
                ]
            elif not action.help:
                problems.append(f"{name}: {action.dest}")
    assert problems == []


def _imported_top_levels() -> set[str]:
    """The top-level module of every import in pipeline/ and dodo.py (relative ones excepted)."""
    names: set[str] = set()
    for path in [*sorted(ROOT.glob("pipeline/**/*.py")), ROOT / "dodo.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def _declared_dependencies() -> set[str]:
    """The distribution names in pyproject.toml's [project] dependencies (tomllib is 3.11+)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.M | re.S)
    assert block is not None
    found = re.findall(r'"([A-Za-z0-9_.-]+)', block.group(1))
    return {name.lower().replace("_", "-") for name in found}


def _distributions_of(module: str) -> set[str]:
    """The installed distributions holding `module`, from their file lists.

    Not importlib.metadata.packages_distributions(): on 3.10 it reads only top_level.txt, which
    wheels built without setuptools (numpy, matplotlib, jsonschema) do not have.
    """
    found = set()
    for dist in importlib.metadata.distributions():
        tops = {Path(f.parts[0]).stem for f in dist.files or [] if f.parts}
        if module in tops:
            found.add(dist.metadata["Name"].lower().replace("_", "-"))
    return found


# modules a dependency imports only when the compiler asks it to: trimesh reads DAE with collada
THROUGH_DEPENDENCY = {"collada"}
THIRD_PARTY = sorted(
    (_imported_top_levels() - set(sys.stdlib_module_names) - {"pipeline", "__future__"})
    | THROUGH_DEPENDENCY
)


def test_doit_reads_pyproject_on_the_oldest_python_supported() -> None:
    """doit reads [tool.doit] (the dumpdb that reads the json .doit.db) from pyproject.toml with
    tomllib, tomli or tomlkit. On Python 3.10, which requires-python allows, there is no tomllib
    and `pip install -e .` installed no other: every doit command warned 'a TOML parser is not
    available' and `doit dumpdb` ended in doit's dbm traceback (a docs review, Python 3.10.13)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[tool.doit." in text
    oldest = re.search(r'^requires-python = ">=(\d+\.\d+)"', text, re.M)
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.M | re.S)
    assert oldest is not None and block is not None
    parsers = [
        r
        for r in map(Requirement, re.findall(r'^\s*"([^"]+)"', block.group(1), re.M))
        if r.name in DoitConfig._TOML_LIBS
        and (r.marker is None or r.marker.evaluate({"python_version": oldest.group(1)}))
    ]
    assert parsers, f"no dependency gives doit a TOML parser on Python {oldest.group(1)}"


@pytest.mark.parametrize("module", THIRD_PARTY)
def test_third_party_imports_are_declared_dependencies(module: str) -> None:
    """README's `pip install -e .` must install every module the compiler imports."""
    names = _distributions_of(module)
    assert names, f"{module} is imported but not installed"
    assert names & _declared_dependencies(), f"{module} ({names}) is missing from dependencies"


def _options(parser: object) -> set[str]:
    return {s for a in getattr(parser, "_actions", []) for s in a.option_strings}


def test_pipeline_options_named_in_docs_exist() -> None:
    """An option shown with a `pipeline` command (in backticks or on a command block's line)
    is one of that command's: `pipeline spheres verify --samples`, `pipeline srdf --timeout`."""
    commands, problems = dict(_parsers(build_parser())), []
    command = re.compile(r"\bpipeline (?:--json )?([a-z][a-z-]*)(?: (verify|status|refit|show))?")
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        # a command: the rest of its backticked span, or of its line in a command block
        for span in re.findall(r"`(pipeline [^`]*)`|^ *(pipeline .*)$", text, re.M):
            line = span[0] or span[1]
            found = command.match(line)
            if not found or f"pipeline {found.group(1)}" not in commands:
                continue  # an unknown subcommand: test_pipeline_subcommands_named_in_docs_exist
            name = " ".join(p for p in ("pipeline", *found.groups()) if p)
            words = re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", line.split("#")[0][found.end() :])
            allowed = _options(commands[name]) | {"-h", "--help"}
            problems += [f"{page.name}: {name} {w}" for w in words if w not in allowed]
    assert problems == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_repository_paths_named_in_docs_exist(page: Path) -> None:
    """A backticked path of the compiler, its tests, CI, docs or build/ (`pipeline/urdf/xacro.py`,
    `tests/test_hostile.py`, `.ci/freshness`) names a file or folder there is; a placeholder
    (`build/robots/<model_id>/`) or a pattern (`build/robots/*`) is not looked up."""
    text = page.read_text(encoding="utf-8")
    named = re.findall(r"`((?:pipeline|tests|\.ci|docs|build)/[^`\s]*)`", text)
    missing = [p for p in named if not re.search(r"[<*…]|\.\.\.", p) and not (ROOT / p).exists()]
    assert missing == []
