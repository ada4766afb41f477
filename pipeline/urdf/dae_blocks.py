"""COLLADA blocks of faces and lines (`<triangles>`, `<polylist>`, `<polygons>`, `<trifans>`,
`<tristrips>`, `<lines>`, `<linestrips>`) that Tesseract's mesh reader refuses, aborts on, or
reads otherwise than the COLLADA reader here (pycollada, through trimesh).

Measured with Tesseract 0.5's reader (assimp 5.2, as `tesseract_robotics` builds it, its
assertions on) on crafted files, a visual mesh as a collision one:
- it walks every element inside a block: one it does not know there (a `<ph>` polygon's hole
  `<h>`, a `<technique>` inside an `<extra>`) makes it refuse the file, and the URDF with it;
- a block's `count` is read as C's atoi reads it (`12x` is 12, `abc` and a missing one 0). A
  `<polygons>` whose count is not the number of its `<p>`s (those in `<ph>`s too), a
  `<triangles>` or `<polylist>` of a count above 0 and not exactly one `<p>`, abort the process
  (SIGABRT); a `<polylist>` without a `<vcount>` before its `<p>` crashes it (SIGSEGV);
- a `<triangles>` `<p>` not of 3 x count corners, a `<polylist>` `<p>` not of the corners its
  first `count` `<vcount>` numbers add up to (or fewer numbers than that), a `<tristrips>` or
  `<linestrips>` of no count above 0, a `<p>` whose indices are not a whole number of corners
  (one per `<input>` offset), and, in a block of a count above 0, an index naming none of its
  source's items (its accessor's count: a VERTEX index its POSITION source's, a NORMAL index
  its own) make it refuse the file;
- a `<triangles>`, `<polylist>` or `<trifans>` of no count above 0 is read as empty, and a
  `<ph>`'s polygon is read as any other, while pycollada reads the first's faces and drops the
  second: a collision mesh holding either would be covered and collided otherwise
  (`read_otherwise`, for collision meshes: the spheres step calls it).
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING

import numpy as np

from pipeline.findings import Finding
from pipeline.strict_xml import source_line
from pipeline.urdf.dae_nodes import local_name

if TYPE_CHECKING:
    from lxml import etree

BLOCKS = ("triangles", "polylist", "polygons", "trifans", "tristrips", "lines", "linestrips")
_KNOWN = ("input", "vcount", "p", "ph", "extra")  # what the reader reads (or skips) in a block
_ATOI = re.compile(r"\s*([+-]?[0-9]+)")
_HINT = "export the mesh again (each block's count the number of its primitives)"
_CHUNK = 1 << 20  # characters of a text counted at once: their bytes, and a few masks of them
# a block whose count may be read as 0, a <ph>, or a <p> holding a negative index: the only
# files read_otherwise parses
_SUSPECT = re.compile(
    rb"<(?:[\w.-]+:)?(?:ph[\s/>]|(?:triangles|polylist|trifans)\b(?![^>]*\scount\s*="
    rb"\s*[\"']\s*\+?0*[1-9])|p>[^<]*-)"
)
_NEGATIVE = re.compile(r"(?<!\S)-[0-9]+")


def atoi(text: str | None) -> int:
    """A count as C's atoi reads it (`12x` is 12, `abc` and None 0), as Tesseract's reader does."""
    found = _ATOI.match(text or "")
    return int(found.group(1)) if found else 0


def words(text: str | None) -> int:
    """The words of `text` between ASCII whitespace, counted without a list of them: a `<p>`
    of 40 M two-digit indices split into one took 2.4 GB."""
    count, after_space = 0, True
    text = text or ""
    for start in range(0, len(text), _CHUNK):
        chunk = np.frombuffer(text[start : start + _CHUNK].encode("utf-8", "replace"), np.uint8)
        space = chunk <= 32
        before = np.concatenate(([after_space], space[:-1]))
        count += int(np.count_nonzero(before & ~space))
        after_space = bool(space[-1])
    return count


def _blocks(root: etree._Element) -> list[etree._Element]:
    return [b for mesh in root.iter("{*}mesh") for b in mesh if local_name(b) in BLOCKS]


def dae_block_findings(root: etree._Element, display: str) -> list[Finding]:
    """The finding on a COLLADA file's first block that Tesseract's mesh reader refuses or
    crashes on (on a visual mesh too: the URDF is refused, or the planner's process ends)."""
    items = _items(root)
    for block in _blocks(root):
        found = _problem(block, items)
        if found is not None:
            element, what, crash, hint = found
            tail = (
                f"Tesseract's mesh reader {crash}, and the planner's process with it"
                if crash
                else "Tesseract's mesh reader refuses it (on a visual too), and with it the URDF"
            )
            message = f"is a COLLADA file whose {what}: {tail}"
            return [Finding("mesh_not_a_mesh", display, str(source_line(element)), message, hint)]
    return []


def _items(root: etree._Element) -> dict[str, int]:
    """'#id' of each <source> and <vertices> -> the items an index may name: its accessor's
    count (a <vertices>, its POSITION source's), as Tesseract's reader checks an index."""
    items = {}
    for source in root.iter("{*}source"):
        accessor = source.find("{*}technique_common/{*}accessor")
        if source.get("id") and accessor is not None:
            items[f"#{source.get('id')}"] = atoi(accessor.get("count"))
    for vertices in root.iter("{*}vertices"):
        for put in vertices.iterchildren("{*}input"):
            if put.get("semantic") == "POSITION" and put.get("source", "") in items:
                items[f"#{vertices.get('id')}"] = items[put.get("source", "")]
    return items


def _problem(
    block: etree._Element, items: dict[str, int]
) -> tuple[etree._Element, str, str, str] | None:
    """Where and why Tesseract's reader refuses (crash "") or crashes on one block, and the fix."""
    tag = local_name(block)
    inner = [e for e in block.iterdescendants() if local_name(e)]
    for element in inner:
        name = local_name(element)
        if name == "h":
            what, hint = (
                "a <ph> polygon with a hole (<h>)",
                "export the mesh again, its faces triangulated",
            )
            return element, f"<{tag}> holds {what}", "", hint
        if name not in _KNOWN:
            what = (
                f"a <{name}>, an element the reader does not know in a block (nor in its <extra>)"
            )
            hint = (
                "export the mesh again without it: a block holds <input>, <vcount>, <p>, <ph> "
                "and <extra> alone, and that reader reads into the <extra> too"
            )
            return element, f"<{tag}> holds {what}", "", hint
    found = _counted(block, tag, inner)
    if found is None and atoi(block.get("count")) > 0:
        return _past_the_end(block, tag, inner, items)
    return None if found is None else (*found, _HINT)


def _counted(
    block: etree._Element, tag: str, inner: list[etree._Element]
) -> tuple[etree._Element, str, str] | None:
    """Where and why Tesseract's reader refuses (crash "") or crashes on a block's counts."""
    count = atoi(block.get("count"))
    stride = 1 + max((atoi(e.get("offset")) for e in inner if local_name(e) == "input"), default=0)
    lists = [e for e in inner if local_name(e) == "p"]
    sizes = [words(p.text) for p in lists]
    said = f"<{tag} count={block.get('count', '')!r}>"
    if tag in ("tristrips", "linestrips") and count <= 0:
        return block, f"{said} has no count above 0", ""
    if count <= 0:  # its <p>s are not read (read_otherwise), but a <polygons> counts them
        if tag == "polygons" and lists:
            return block, f"{said} holds {_ps(lists)}, not its count", "aborts (SIGABRT)"
        return None
    if tag == "polylist":
        vcounts = [e for e in inner if local_name(e) == "vcount"]
        if lists and (not vcounts or inner.index(vcounts[0]) > inner.index(lists[0])):
            return block, f"{said} has no <vcount> before its <p>", "crashes (SIGSEGV)"
        numbers = [atoi(w) for v in vcounts[:1] for w in (v.text or "").split()]
        if len(numbers) < count:
            return block, f"{said} has {len(numbers)} <vcount> numbers, fewer than its count", ""
        expected = sum(numbers[:count])
    else:
        expected = {"triangles": 3 * count}.get(tag, 0)
    for p, size in zip(lists, sizes, strict=True):
        if (expected and size != expected * stride) or (not expected and size % stride):
            wanted = (
                f"not {expected * stride} ({expected} corners of {stride} each)"
                if expected
                else f"not whole corners of {stride} each"
            )
            return p, f"{said} has a <p> of {size} indices, {wanted}", ""
    if tag == "polygons" and count != len(lists):
        return block, f"{said} holds {_ps(lists)}, not its count", "aborts (SIGABRT)"
    if tag in ("triangles", "polylist") and len(lists) != 1:
        return block, f"{said} holds {_ps(lists)}, not one", "aborts (SIGABRT)"
    return None


def _past_the_end(
    block: etree._Element, tag: str, inner: list[etree._Element], items: dict[str, int]
) -> tuple[etree._Element, str, str, str] | None:
    """The first `<p>` index naming none of its source's items, of a VERTEX or NORMAL input."""
    inputs = [e for e in inner if local_name(e) == "input"]
    stride = 1 + max((atoi(e.get("offset")) for e in inputs), default=0)
    checked = [
        (e.get("semantic", ""), atoi(e.get("offset")), items[e.get("source", "")])
        for e in inputs
        if e.get("semantic") in ("VERTEX", "NORMAL") and e.get("source", "") in items
    ]
    lists = [e for e in inner if local_name(e) == "p"] if checked else []
    for p in lists:
        highest = _highest(p.text, stride, {offset for _, offset, _ in checked if offset >= 0})
        if highest is None:
            continue
        for semantic, offset, count in checked:
            if offset >= 0 and highest[offset] >= count:
                what = (
                    f"<{tag} count={block.get('count', '')!r}> has a <p> whose {semantic} index "
                    f"{highest[offset]} names none of its {count} items"
                )
                hint = "export the mesh again (each index one of its source's items, from 0)"
                return p, what, "", hint
    return None


def _highest(text: str | None, stride: int, offsets: set[int]) -> dict[int, int] | None:
    """The largest index at each of `offsets` of a `<p>` of corners of `stride` (-1 for none),
    its numbers read a chunk at a time (a 117 MB `<p>` split into a list took gigabytes); None
    when a word is no whole number (how the reader reads one is not judged here). Only the
    offsets asked: an `<input offset="1000000000">` would be a list of 8 GB."""
    text = text or ""
    highest = dict.fromkeys(offsets, -1)
    start = read = 0
    while start < len(text):
        end = min(start + _CHUNK // 4, len(text))  # a quarter: 8 bytes a number read
        while end < len(text) and text[end] > " ":  # a chunk ends between words
            end += 1
        chunk = text[start:end]
        try:  # text it cannot read: an error, or (numpy 1) a warning and fewer numbers
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                numbers = np.fromstring(chunk, dtype=np.int64, sep=" ")
        except ValueError:
            return None
        if len(numbers) != words(chunk):
            return None
        for offset in highest:
            column = numbers[(offset - read) % stride :: stride]
            if len(column):
                highest[offset] = max(highest[offset], int(column.max()))
        start, read = end, read + len(numbers)
    return highest


def _ps(lists: list[etree._Element]) -> str:
    return f"{len(lists)} <p>" + ("" if len(lists) == 1 else "s")


def suspect(data: bytes) -> bool:
    """Whether a COLLADA file may hold a block read_otherwise refuses (the files it parses)."""
    return _SUSPECT.search(data) is not None


def read_otherwise(data: bytes, display: str, root: etree._Element | None) -> list[Finding]:
    """Findings on a collision COLLADA file's blocks that Tesseract's mesh reader and pycollada
    read otherwise: a `<ph>` polygon (pycollada drops it, Tesseract collides it) and a block of
    faces without a count above 0 (Tesseract skips its faces, pycollada reads them); and, for
    the steps that read a collision mesh without the urdf step's checks (srdf, spheres), a block
    Tesseract refuses or crashes on, found among those (`root`: the file parsed, or None to
    parse it here)."""
    if not suspect(data):
        return []  # the fast path: every block counted, no <ph>
    from pipeline.strict_xml import parse_xml

    if root is None:  # not parsed (no strict XML): parsed here, for its findings
        root = parse_xml(data, display, huge_text=True)  # as mesh_findings reads a mesh
    refused = dae_block_findings(root, display)  # the steps reading it without mesh_findings
    if refused:
        return refused
    for block in _blocks(root):
        tag = local_name(block)
        holes = [e for e in block.iterdescendants() if local_name(e) == "ph"]
        if tag == "polygons" and holes:
            return [
                Finding(
                    "mesh_unreadable",
                    display,
                    str(source_line(holes[0])),
                    "holds a <ph> polygon, which the COLLADA reader here (pycollada) drops and "
                    "Tesseract collides, so the spheres would not cover it",
                    "export the collision mesh again with triangles only",
                )
            ]
        negative = next(
            (n for p in block.iter("{*}p") if (n := _NEGATIVE.search(p.text or ""))), None
        )
        if negative is not None:
            return [
                Finding(
                    "mesh_unreadable",
                    display,
                    str(source_line(block)),
                    f"holds a <{tag}> whose <p> has the index {negative.group()}: Tesseract's "
                    "mesh reader reads it as another corner than the COLLADA reader here, which "
                    "counts it back from the last, so the planner would collide another mesh "
                    "than the spheres cover (a line of it is a part of one point, on which the "
                    "planner crashes)",
                    "export the collision mesh again (each index one of its source's items, "
                    "from 0)",
                )
            ]
        faces = any(p.text and not p.text.isspace() for p in block.iter("{*}p"))
        if tag in ("triangles", "polylist", "trifans") and atoi(block.get("count")) <= 0 and faces:
            said = f"<{tag} count={block.get('count', '')!r}>"
            return [
                Finding(
                    "mesh_unreadable",
                    display,
                    str(source_line(block)),
                    f"holds a {said} with faces: Tesseract's mesh reader skips a block of no "
                    "count above 0, the COLLADA reader here reads them, so the planner would "
                    "collide another mesh than the spheres cover",
                    f"set the <{tag}>'s count to the number of its primitives, or export the "
                    "collision mesh again",
                )
            ]
    return []
