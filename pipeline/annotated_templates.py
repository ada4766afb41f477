"""The packaged annotated templates (`pipeline/templates/<name>.json`): their bytes, without
their `_doc` notes, and the findings of a note left in a document written from one."""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from pipeline.findings import Finding, json_pointer
from pipeline.strict_json import dump_json


def template_names() -> list[str]:
    """Every packaged annotated template's name (`pipeline/templates/<name>.json`), sorted."""
    folder = resources.files("pipeline").joinpath("templates")
    return sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".json"))


def template_bytes(name: str) -> bytes:
    """The exact bytes of the annotated template `pipeline/templates/<name>.json`."""
    if name not in template_names():
        raise ValueError(f"no template named {name!r}")
    return resources.files("pipeline").joinpath("templates").joinpath(name + ".json").read_bytes()


# A key ending in this holds a note of an annotated template: `<field>_doc` beside `<field>`.
NOTE_SUFFIX = "_doc"


def bare_template_bytes(name: str) -> bytes:
    """The template `name` without its `_doc` notes: a file to fill in as it is."""
    return dump_json(_without_notes(json.loads(template_bytes(name))))


def _without_notes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_notes(v) for k, v in value.items() if not _is_note(k, v)}
    if isinstance(value, list):
        return [_without_notes(item) for item in value]
    return value


def _is_note(key: str, value: object) -> bool:
    return key.endswith(NOTE_SUFFIX) and isinstance(value, str)


def template_notes(
    document: object, findings: Iterable[Finding], display: str, template: str
) -> list[Finding]:
    """`findings` with each note of `pipeline template <template>` left in the document (a key
    ending in `_doc` that holds a text) refused once, as a note, instead of by every rule that
    judges the key or its value (`unexpected_field`, `wrong_type`, `unknown_joint`, ...)."""
    notes = _note_places(document)
    if not notes:
        return list(findings)  # the common case
    kept = [f for f in findings if not any(_at_or_below(f.place, p) for p in notes)]
    hint = (
        f"delete it and every other *{NOTE_SUFFIX} key ({len(notes)} in this file): they are "
        f"the template's notes, to read, not fields (`pipeline template {template} --bare` "
        "prints the template without them)"
    )
    for place, key in notes.items():
        message = f"{key!r} is a note of `pipeline template {template}`, not a field"
        kept.append(Finding("unexpected_field", display, place, message, hint))
    return kept


def _note_places(document: object) -> dict[str, str]:
    """The JSON pointer of every note in `document`, and its key."""
    places: dict[str, str] = {}
    todo: list[tuple[object, list[str | int]]] = [(document, [])]
    while todo:  # iteratively: a document nests as deep as strict_json allows
        value, parts = todo.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if _is_note(key, item):
                    places[json_pointer([*parts, key])] = key
                else:
                    todo.append((item, [*parts, key]))
        elif isinstance(value, list):
            todo += [(item, [*parts, index]) for index, item in enumerate(value)]
    return places


def _at_or_below(place: str, pointer: str) -> bool:
    return place == pointer or place.startswith(pointer + "/")
