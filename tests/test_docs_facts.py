"""The docs' numbers and lists stay the code's: module lists, limits named by their constant,
the warnings, the spheres settings, the SRDF codes' test cases."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import fields

from pipeline.schemas import load_schema
from pipeline.spheres.fit import FitParams
from tests.test_docs import INDEX, PAGES, ROOT, _code_argument, _code_positions, _constants, _trees


def _package_lists() -> Iterator[tuple[str, str, set[str]]]:
    """(page, package, the modules it names) for each page's `Code: `pipeline/<package>/` — ...`
    list, which names the package's modules one by one."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for package, body in re.findall(
            r"Code: `pipeline/([a-z_]+)/` — (.*?)(?:\n- |\n\n)", text, re.S
        ):
            yield page.name, package, set(re.findall(r"`([a-z_]+\.py)`", body))


def test_module_lists_name_every_module_of_their_package() -> None:
    """docs/spheres.md lists pipeline/spheres/ module by module: a module added (meshlib.py,
    extent.py) or removed leaves the list stale."""
    problems = []
    lists = list(_package_lists())
    assert lists, "no page lists a package's modules: the pattern above no longer matches"
    for page, package, named in lists:
        there = {p.name for p in (ROOT / "pipeline" / package).glob("*.py")} - {"__init__.py"}
        problems += [f"{page}: pipeline/{package}/{m} is not named" for m in sorted(there - named)]
        problems += [
            f"{page}: pipeline/{package}/{m} does not exist" for m in sorted(named - there)
        ]
    assert problems == []


def _numeric_constants() -> dict[str, set[float]]:
    """Every module-level NAME = <number> of pipeline/ (a name several modules bind: each value),
    worked out from the source (`16 * MiB`, `2.0**-46`) without importing the module."""
    found: dict[str, set[float]] = {}
    for path in sorted(ROOT.glob("pipeline/**/*.py")):
        known: dict[str, object] = {"__builtins__": {}}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if not isinstance(target, ast.Name):
                continue
            try:
                number = eval(compile(ast.Expression(value), str(path), "eval"), known)
            except Exception:  # not arithmetic on numbers the module bound before
                continue
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                known[target.id] = number
                if re.fullmatch(r"[A-Z][A-Z0-9_]+", target.id):
                    found.setdefault(target.id, set()).add(float(number))
    return found


UNITS = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
# a number as the docs write it: 1 000 000, 10,000, 0.5, 1e-5, 2⁻⁴⁶, with an optional unit
NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:[ ,]\d{3})+|\d+(?:\.\d+)?(?:e-?\d+)?)(?: ?(KiB|MiB|GiB))?"
)


def _stated_numbers(text: str) -> set[float]:
    return {
        float(n.replace(",", "").replace(" ", "")) * UNITS.get(unit, 1)
        for n, unit in NUMBER.findall(text)
    }


def test_limits_named_by_their_constant_have_its_value() -> None:
    """`at most 16 MiB (`JSON_LIMIT`)`: a number a page gives with the constant that holds it
    is that constant's value. The number is looked for in the text before the name, back to the
    previous backticked constant or the start of its paragraph, list item or table row."""
    constants, problems, checked = _numeric_constants(), [], 0
    for page in PAGES:
        if page.name == "performance.md":  # measurements, of other versions too
            continue
        for block in re.split(r"\n\s*\n|\n(?=\||- )", page.read_text(encoding="utf-8")):
            start = 0
            for match in re.finditer(r"`([A-Z][A-Z0-9_]+)`", block):
                name = match.group(1)
                if name not in constants:
                    continue
                stated = _stated_numbers(block[start : match.start()])
                start = match.end()
                checked += 1
                if not any(abs(s - v) <= 1e-9 * abs(v) for s in stated for v in constants[name]):
                    problems.append(f"{page.name}: {name} is {sorted(constants[name])}")
    assert checked >= 10, "the pattern above no longer finds the constants the pages name"
    assert problems == []


def _is_warning(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "WARNING"


def warning_codes() -> set[str]:
    """Every code of a finding made with Severity.WARNING (by Finding, or by a helper passing
    its `code` on): given there as a string, or as the `code` parameter of the function that
    makes it, and then every string passed for that."""
    trees = _trees()
    position = _code_positions(trees)
    codes: set[str] = set()
    makers: set[str] = set()  # functions whose `code` parameter becomes a warning's code
    for func in (n for tree in trees for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for call in (n for n in ast.walk(func) if isinstance(n, ast.Call)):
            code = _code_argument(call, position)
            if code is None or not any(
                _is_warning(v) for v in [*call.args, *(k.value for k in call.keywords)]
            ):
                continue
            if isinstance(code, ast.Name) and code.id == "code":
                makers.add(func.name)
            codes.update(_constants(code))
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in makers:
            code = _code_argument(node, position)
            codes.update(_constants(code) if code is not None else [])
    return codes


def test_findings_page_lists_every_warning() -> None:
    """docs/findings.md names the warnings, the codes that stop nothing: the list is the
    compiler's, so a new warning is not taken for an error by a reader of that page."""
    text = INDEX.read_text(encoding="utf-8")
    listed = re.search(
        r"A warning, a likely mistake that stops\s+nothing \((.*?)\),\s+is printed", text, re.S
    )
    assert listed is not None, "docs/findings.md no longer lists the warnings as expected"
    named = set(re.findall(r"`([a-z0-9_]+)`", listed.group(1)))
    found = warning_codes()
    assert len(found) >= 10
    assert sorted(found - named) == [] and sorted(named - found) == []


def _doc_number(text: str) -> float:
    """A number as a table writes it: `24 000`, `2³¹−1`."""
    text = text.replace(" ", "").replace("2³¹−1", str(2**31 - 1))
    return float(text)


def test_spheres_settings_table_is_the_schema_and_the_fitter() -> None:
    """docs/spheres.md's settings table (range, default) and its list of the fixed parameters
    are the settings schema's bounds and FitParams's defaults."""
    text = (ROOT / "docs" / "spheres.md").read_text(encoding="utf-8")
    params = load_schema("spheres-settings")["$defs"]["params"]["properties"]
    defaults = {f.name: f.default for f in fields(FitParams)}
    rows = re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| ([^|]+)–([^|]+) \| ([^|]+) \|$", text, re.M)
    table = {name: (_doc_number(lo), _doc_number(hi), _doc_number(d)) for name, lo, hi, d in rows}
    assert table == {
        name: (float(p["minimum"]), float(p["maximum"]), float(defaults[name]))
        for name, p in params.items()
    }
    fixed = re.search(
        r"The other fitter parameters \((.*?)\) are fixed in\s+`FitParams`", text, re.S
    )
    assert fixed is not None, "docs/spheres.md no longer lists the fixed parameters as expected"
    listed = {n: float(v) for n, v in re.findall(r"`([a-z_]+)`\s+([0-9.]+)", fixed.group(1))}
    assert listed == {n: float(v) for n, v in defaults.items() if n not in params}


def test_srdf_codes_have_their_cases() -> None:
    """docs/srdf.md: tests/test_srdf_rules.py has a case for every code of its table, but the
    build step's, which tests/test_hostile.py runs through doit."""
    text = (ROOT / "docs" / "srdf.md").read_text(encoding="utf-8")
    table = text.split("\n## Finding codes\n", 1)[1].split("\n## ", 1)[0]
    cases = {
        "the build step": (ROOT / "tests" / "test_hostile.py").read_text(encoding="utf-8"),
        "": (ROOT / "tests" / "test_srdf_rules.py").read_text(encoding="utf-8"),
    }
    missing, rows = [], re.findall(r"^\| (.*?) \| (.*) \|$", table, re.M)
    assert len(rows) > 20, "docs/srdf.md's table of codes is no longer where this test looks"
    for codes, rule in rows:
        where = next(key for key in cases if rule.startswith(key))
        tests = cases[where]
        missing += [c for c in re.findall(r"`([a-z0-9_]+)`", codes) if f'"{c}"' not in tests]
    assert missing == []
