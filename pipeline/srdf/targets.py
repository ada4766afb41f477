"""The `srdf` command's target forms and writing its outputs, all or nothing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pipeline.findings import ContractError, Finding, raise_if_errors
from pipeline.srdf.compile import checked_srdf
from pipeline.srdf.generate import DEFAULT_TIMEOUT
from pipeline.writing import write_outputs

Target = tuple[Path, Path]


def _bad(code: str, target: str, message: str, hint: str) -> Finding:
    return Finding(code, target, "", message, hint)


def _split(target: str) -> tuple[str, str | None]:
    """(source, output) of `SOURCE.py` (output None) or `SOURCE.py=OUT.srdf`.

    A path may hold '=' itself (x=y.py): the target is cut at an '=' after a .py, or not at
    all when it ends in .py, the reading whose source exists first, else the last cut (a typo
    `srdf.py=out/a.py` is told its output is no .srdf), else the first '='.
    """
    if "=" not in target:
        return target, None
    cuts = [i for i, c in enumerate(target) if c == "=" and target[:i].endswith(".py")]
    readings = [(target[:i], target[i + 1 :]) for i in reversed(cuts)]
    whole: list[tuple[str, str | None]] = [(target, None)] if target.endswith(".py") else []
    found = next((r for r in [*whole, *readings] if os.path.lexists(r[0])), None)
    if found is not None:
        return found
    if readings:
        return readings[0]
    return whole[0] if whole else (target[: target.index("=")], target[target.index("=") + 1 :])


def parse_targets(targets: Sequence[str], output: str | None) -> list[Target]:
    """`SOURCE.py`, `SOURCE.py -o OUT.srdf` or `A.py=OUT/A.srdf ...` as (source, output) pairs."""
    findings: list[Finding] = []
    pairs: list[Target] = []
    if output is not None and (len(targets) != 1 or _split(targets[0])[1] is not None):
        raise ContractError(
            [
                _bad(
                    "output_with_many_targets",
                    " ".join(targets),
                    "-o names the output of exactly one SOURCE.py",
                    "use SOURCE.py -o OUT.srdf, or A.py=OUT/A.srdf for several sources",
                )
            ]
        )
    for target in targets:
        source_text, paired = _split(target)
        out_text = paired or ""
        if paired is None:  # SOURCE.srdf beside it; none for `.` or `/` (no .py either)
            source = Path(source_text)
            default = str(source.with_suffix(".srdf")) if source.name else ".srdf"
            out_text = default if output is None else output  # an empty -o is no .srdf
        if not source_text.endswith(".py"):
            findings.append(
                _bad("source_not_python", target, "the source is not a .py file", "name SOURCE.py")
            )
        if not out_text.endswith(".srdf"):
            findings.append(
                _bad(
                    "output_not_srdf",
                    target,
                    f"the output {out_text!r} does not end in .srdf",
                    "name the output OUT.srdf",
                )
            )
        pairs.append((Path(source_text), Path(out_text)))
    seen: dict[Path, str] = {}
    for (_, out), target in zip(pairs, targets, strict=True):
        key = out.resolve()
        if key in seen:
            findings.append(
                _bad(
                    "duplicate_output",
                    target,
                    f"writes {out.as_posix()!r}, as {seen[key]!r} does",
                    "give every source its own output",
                )
            )
        seen.setdefault(key, target)
    raise_if_errors(findings)
    return pairs


def compile_targets(
    pairs: Sequence[Target], repo_root: Path, timeout: float = DEFAULT_TIMEOUT
) -> tuple[list[tuple[Path, bytes]], list[Finding]]:
    """Compile every target: the outputs and every source's warnings; or raise every finding
    of every source at once, warnings among them."""
    findings: list[Finding] = []
    results: list[tuple[Path, bytes]] = []
    for source, output in pairs:
        try:
            data, warnings = checked_srdf(source, output, repo_root, timeout)
        except ContractError as exc:
            findings.extend(exc.findings)
            continue
        results.append((output, data))
        findings.extend(warnings)
    raise_if_errors(findings)
    return results, findings


def write_targets(results: Sequence[tuple[Path, bytes]]) -> list[Path]:
    """Write the outputs (only after every target compiled), all or none; the changed ones."""
    return write_outputs(results)
