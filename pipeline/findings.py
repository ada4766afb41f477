"""Findings about bad input and the one error type that carries them."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from enum import Enum
from typing import NamedTuple

# The characters that break a line or reorder what a terminal shows (C0 and C1 controls, DEL,
# the line and paragraph separators, the bidirectional controls), as a regex class's contents:
# the schemas' free texts refuse them (schemas.TEXT and the schema files' patterns). A finding's
# line escapes these and every other character str.isprintable rejects (printable below).
UNSHOWABLE = "\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069"
_BREAKING = re.compile(f"[{UNSHOWABLE}]")


def breaking(text: str) -> str | None:
    """The first character of `text` of UNSHOWABLE (a free text refuses it), or None."""
    found = _BREAKING.search(text)
    return found.group() if found else None


# A finding quotes what an input holds (a key, a name, a program's field), which may be
# megabytes: a 10 MB joint name made a line of 20 MB. A part of a line longer than this keeps
# its start and end (the value's start, then what is wrong with it) around a note of the cut.
PART_LIMIT = 2000
_HEAD, _TAIL = 1500, 400


def _cut(text: str) -> str:
    """`text`, or its start and end around how many characters were left out."""
    if len(text) <= PART_LIMIT:
        return text
    left_out = len(text) - _HEAD - _TAIL
    return f"{text[:_HEAD]} [... {left_out} characters left out ...] {text[-_TAIL:]}"


def printable(text: str) -> str:
    """`text` with each character Python's repr escapes written as repr writes it.

    A file name or JSON key can hold a line break (also U+0085, U+2028, U+2029), another C0 or
    C1 control character, a bidirectional control that reorders what a terminal shows, one a
    terminal shows as nothing or as a plain space (U+200B, U+FEFF, U+00AD, U+00A0), or (a name
    that is not UTF-8) a lone surrogate: a finding stays one line showing what the input holds.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


class Severity(str, Enum):
    """How serious a finding is: errors stop the build, warnings do not."""

    ERROR = "error"
    WARNING = "warning"


class Finding(NamedTuple):
    """One problem in one input: where it is, which rule it breaks, and how to fix it."""

    code: str
    file: str
    place: str
    message: str
    hint: str
    severity: Severity = Severity.ERROR

    def line(self) -> str:
        """Render as `file:place: code: message; hint`, each part cut short when huge."""
        place, message, hint = (_cut(part) for part in (self.place, self.message, self.hint))
        where = f"{_cut(self.file)}:{place}" if place else _cut(self.file)
        text = f"{where}: {self.code}: {message}"
        if hint:
            text += f"; {hint}"
        if self.severity is Severity.WARNING:
            text = f"{text} (warning)"
        return printable(text)

    def as_json(self) -> dict[str, str]:
        """Render as a JSON-ready mapping."""
        data = self._asdict()
        data["severity"] = self.severity.value
        return data


class ContractError(Exception):
    """Input that breaks a spec rule; carries every finding that was collected."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings: tuple[Finding, ...] = tuple(findings)
        super().__init__(self.findings)  # a pickled copy is made again from them

    def __str__(self) -> str:
        """The findings' lines, as `render` prints them (made when asked: most never are)."""
        return render(self.findings)


def unshowable(text: str) -> str | None:
    """The first character of `text` a finding's line escapes (printable), or None."""
    return None if text.isprintable() else next(c for c in text if not c.isprintable())


def unshowable_name(kind: str, name: str) -> tuple[str, str] | None:
    """The message and fix of invalid_text_character for a name (a URDF link, an SRDF group)
    holding a character a line does not print as itself (`&#10;`, `&#x202E;`, `&#x200B;`):
    lines that print it (progress, `spheres status`) split, reorder or hide part of it; None
    when it holds none."""
    char = unshowable(name)
    if char is None:
        return None
    plain = "".join(c for c in name if c.isprintable())
    return (
        f"{kind} '{escaped(name)}' holds {ascii(char)[1:-1]} (U+{ord(char):04X}), a line "
        "break, control, bidirectional control or invisible character, which splits, reorders "
        "or hides part of a line that prints the name",
        f"name it in printable characters (as '{escaped(plain)}'), and every element that "
        f"names the {kind} too",
    )


def folded(name: str) -> str:
    """A file name with its accents composed (NFC) and its case folded: two names alike so are
    one file on macOS and Windows."""
    return unicodedata.normalize("NFC", name).casefold()


def as_read(name: str) -> str:
    """A name as a person reads it printed: accents however encoded (NFC), any case, without
    white space or invisible (format) characters; two names alike so are one to a reader."""
    key = folded(name)
    return "".join(c for c in key if not c.isspace() and unicodedata.category(c) != "Cf")


def escaped(name: str) -> str:
    """A name as a finding shows one refused for its characters (a folder that is no model or
    cell id): every non-ASCII or unprintable character escaped, `r2d2\\xe9`, so a look-alike,
    an invisible one or another encoding of an accent shows which character it is."""
    return name.encode("unicode_escape", "backslashreplace").decode("ascii")


class Closest:
    """The name of a set that a name it does not hold most likely meant, for a finding's hint:
    the one name it begins, case aside (an id typed short: `kuka_kr6` for `kuka_kr6r900sixx`,
    which difflib's ratio put below `kuka_kr3r540`, sharing more of the shorter id's letters);
    of several it begins, the one it is, case aside, else none (`kuka_kr` begins every KUKA);
    of none, the one at the best similarity (difflib's ratio, at least 0.6), and none when two
    tie (`joint_9` is as near each of `joint_1` ... `joint_6`). Each lookup reads every name of the
    set, so only the first LOOKUPS names asked about are looked up (a hostile URDF's 20,000
    mimics of unknown joints), and a name over NAME_LIMIT characters is not compared."""

    LOOKUPS = 20
    NAME_LIMIT = 256

    def __init__(self, known: Collection[str]) -> None:
        self._known = known  # read at the first lookup: most sets are never asked
        self.left = self.LOOKUPS

    def name(self, name: str) -> str | None:
        """The name of the set `name` most likely meant, or None."""
        if self.left <= 0 or len(name) > self.NAME_LIMIT:
            return None
        self.left -= 1
        key = name.casefold()
        begun = (
            [c for c in self._known if len(c) <= self.NAME_LIMIT and c.casefold().startswith(key)]
            if key
            else []
        )
        if len(begun) == 1:
            return begun[0]
        if begun:
            same = [c for c in begun if c.casefold() == key]
            return same[0] if len(same) == 1 else None
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(name)
        best, ratio, tied = None, 0.6, False
        for candidate in self._known:
            if len(candidate) > self.NAME_LIMIT:
                continue
            matcher.set_seq1(candidate)
            if matcher.real_quick_ratio() < ratio or matcher.quick_ratio() < ratio:
                continue
            score = matcher.ratio()
            if score > ratio or (best is None and score >= ratio):
                best, ratio, tied = candidate, score, False
            elif score == ratio:
                tied = True
        return None if tied else best

    def hint(self, name: str, fix: str) -> str:
        """`fix`, after the question naming the name meant when there is one."""
        meant = self.name(name)
        return fix if meant is None else f"did you mean {meant!r}? {fix}"


def listed_and_closest(name: str, known: list[str]) -> tuple[str, str | None]:
    """`known` as a finding lists it (the first ten, then how many more; "" for none) and the
    one of them `name` most likely meant (`Closest`), for a name that is none of them."""
    return listed_names(known), Closest(known).name(name)


def listed_names(known: Sequence[str]) -> str:
    """`known` as a finding lists it: the first ten, then how many more ("" for none)."""
    return ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")


def errors(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that stop a build."""
    return [f for f in findings if f.severity is Severity.ERROR]


def raise_if_errors(findings: Sequence[Finding]) -> None:
    """Raise ContractError when any finding is an error."""
    if errors(findings):
        raise ContractError(findings)


def reading_order(findings: Sequence[Finding]) -> list[Finding]:
    """Findings grouped by file (in the order files first appear), by line within a file.

    Rules run one after another (a link's collisions before its visuals, say), so the order
    they found things in is not the order a person reads the file in.
    """
    rank: dict[str, int] = {}
    for finding in findings:
        rank.setdefault(finding.file, len(rank))
    indexed = list(enumerate(findings))
    indexed.sort(key=lambda i_f: (rank[i_f[1].file], _line(i_f[1].place), i_f[0]))
    return [finding for _, finding in indexed]


def _line(place: str) -> int:
    """A place's line number; 0 for a place that is no line (a JSON pointer keeps its order)."""
    return int(place) if place.isdigit() and place.isascii() else 0


# Lines printed at most, every command and doit step alike: a config.json of 1.3 M unknown keys
# printed 1.3 M lines (212 MB). After them, one line says how many more there are and how to
# see them; `--json` prints every finding, for a program (or a person) that wants them all.
FINDINGS_SHOWN = 100


def render(findings: Sequence[Finding], as_json: bool = False) -> str:
    """The findings as text lines, the first FINDINGS_SHOWN in reading order and a line
    counting the rest, or all of them as a JSON document."""
    findings = reading_order(findings)
    if as_json:
        return json.dumps([f.as_json() for f in findings], indent=2, sort_keys=True)
    lines = [f.line() for f in findings[:FINDINGS_SHOWN]]
    if len(findings) > FINDINGS_SHOWN:
        lines.append(_left_out(findings[FINDINGS_SHOWN:]))
    return "\n".join(lines)


def _left_out(rest: Sequence[Finding]) -> str:
    """The line that counts the findings not shown and names the command that shows them."""
    warned = sum(f.severity is Severity.WARNING for f in rest)
    counts = ""
    if warned:
        errors = len(rest) - warned
        counts = f" ({errors} error{'s' * (errors != 1)}, {warned} warning{'s' * (warned != 1)})"
    return (
        f"pipeline: {len(rest)} more finding{'s' * (len(rest) != 1)} not shown{counts}, after "
        f"the first {FINDINGS_SHOWN}; `pipeline --json` before the command prints every one "
        "(a doit step's: `pipeline --json validate MODEL_ID`, `pipeline --json srdf "
        "robots/MODEL_ID/srdf.py -o /tmp/x.srdf`, `pipeline --json cell cells/CELL_ID --check`)"
    )


def json_pointer(parts: Iterable[str | int]) -> str:
    """An RFC 6901 JSON pointer for a path of keys and indices."""
    out = ""
    for part in parts:
        out += "/" + str(part).replace("~", "~0").replace("/", "~1")
    return out or "/"
