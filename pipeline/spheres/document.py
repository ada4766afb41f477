"""spheres.json: assembling the canonical document and reading spheres back from it."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.findings import Finding, json_pointer, raise_if_errors
from pipeline.schemas import check_schema
from pipeline.spheres.geometry import Array
from pipeline.strict_json import dump_json, parse_json

SCHEMA = "rosie.robot-spheres.v1"
FILE = "spheres.json"


def sphere_list(centers: Array, radii: Array) -> list[dict[str, Any]]:
    """Spheres as JSON values, in a canonical order (by centre, then radius)."""
    rows = sorted(
        (tuple(float(v) for v in c), float(r)) for c, r in zip(centers, radii, strict=True)
    )
    return [{"center": list(c), "radius": r} for c, r in rows]


def spheres_of(entry: dict[str, Any]) -> tuple[Array, Array]:
    """Centres (k, 3) and radii (k) of one link entry."""
    spheres = entry["spheres"]
    centers = np.array([s["center"] for s in spheres], dtype=float).reshape(-1, 3)
    radii = np.array([s["radius"] for s in spheres], dtype=float)
    return centers, radii


def document_bytes(
    model_id: str, made_from: dict[str, Any], links: dict[str, dict[str, Any]]
) -> bytes:
    """The canonical bytes of spheres.json."""
    return dump_json(
        {"schema": SCHEMA, "model_id": model_id, "made_from": made_from, "links": links}
    )


def read_document(data: bytes, display: str, model_id: str) -> dict[str, Any]:
    """Strictly parse and schema-check spheres.json; the model id must match."""
    document = parse_json(data, display)
    findings = check_schema(document, "spheres", display)
    raise_if_errors(findings)
    if document["model_id"] != model_id:
        raise_if_errors(
            [
                Finding(
                    "model_id_mismatch",
                    display,
                    json_pointer(["model_id"]),
                    f"is {document['model_id']!r}, the URDF names {model_id!r}",
                    "use the spheres.json of this robot",
                )
            ]
        )
    return document
