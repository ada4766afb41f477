"""An OBJ's `v` lines and plain `f` lines parsed by numpy, a few megabytes of lines at a time,
for objparts.py: the same numbers its Python reading of each line gives, for the lines whose
form is plain enough to be sure of it (the others are left to that reading)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

Array = np.ndarray
_CHUNK = 1 << 20  # bytes of lines parsed at a time: their temporary arrays some 30 times that
_SPACE_BYTES = np.zeros(256, dtype=bool)  # what bytes.split() splits at, but \x0b and \x0c
_SPACE_BYTES[list(b" \t\r\n")] = True
_NUMBER_BYTES = _SPACE_BYTES.copy()  # a `v` line's: digits, signs, points and exponents
_NUMBER_BYTES[list(b"0123456789.+-eEv")] = True
_DIGITS = np.zeros(256, dtype=bool)
_DIGITS[list(b"0123456789")] = True
_FACE_BYTES = _SPACE_BYTES | _DIGITS  # a plain face's, but its `f`
_FACE_BYTES[ord("/")] = True
_LONGEST = 18  # digits of a vertex number read here (int64's 19th would overflow)


def _chunks(data: bytes) -> Iterator[tuple[int, Array]]:
    """The data's whole lines, a few megabytes at a time: where each piece starts, its bytes."""
    start = 0
    while start < len(data):
        stop = data.find(b"\n", start + _CHUNK)
        stop = len(data) if stop < 0 else stop + 1
        yield start, np.frombuffer(data, np.uint8, stop - start, start)
        start = stop


def _lines(buf: Array, key: str) -> tuple[Array, Array] | None:
    """The lines of `buf` that start with `key` and a space or a tab: where each starts in
    `buf`, and their bytes, one after the other (each with its \\n); None for none."""
    starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1))
    lengths = np.diff(np.append(starts, len(buf)))  # each line with its \n
    starts = starts[starts < len(buf) - 1]
    keyed = (buf[starts] == ord(key)) & np.isin(buf[starts + 1], (ord(" "), ord("\t")))
    if not keyed.any():
        return None
    return starts[keyed], buf[np.repeat(np.pad(keyed, (0, len(lengths) - len(keyed))), lengths)]


def _offsets(text: Array) -> Array:
    """Where each line of `text` starts."""
    return np.concatenate(([0], np.flatnonzero(text[:-1] == 10) + 1))


def _words(space: Array, offsets: Array) -> tuple[Array, Array]:
    """Where each word of the text starts (its first byte not white space, the one before it
    white space, or the text's first), and how many each line (from `offsets`) holds."""
    word = np.flatnonzero(~space & np.concatenate(([True], space[:-1])))
    return word, np.diff(np.searchsorted(word, np.append(offsets, len(space))))


def vertex_table(data: bytes) -> Array | None:
    """The table of `v` lines each `v`, a space or tab, then three numbers or more of decimal
    digits, signs, points and exponents, parsed by numpy (as float() does: both call
    PyOS_string_to_double on each); None for any other `v` line (an indented one aside: the
    caller looks for those)."""
    tables = []
    for _, buf in _chunks(data):
        found = _lines(buf, "v")
        if found is None:
            continue
        table = _vertex_lines(found[1])
        if table is None:
            return None
        tables.append(table)
    return np.concatenate(tables) if tables else np.zeros((0, 3))


def _vertex_lines(text: Array) -> Array | None:
    """vertex_table of `v` lines' bytes."""
    if not _NUMBER_BYTES[text].all():
        return None
    first = _offsets(text)
    if np.count_nonzero(text == ord("v")) != len(first):
        return None  # a `v` inside a line
    word, words = _words(_SPACE_BYTES[text], first)  # of each line, its `v`
    if (words < 4).any():
        return None
    text[first] = ord(" ")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            numbers = np.fromstring(text.tobytes(), dtype=np.float64, sep=" ")
    except (ValueError, DeprecationWarning):
        return None
    if len(numbers) != len(word) - len(first):  # each word one number, read whole
        return None
    if (words == 4).all():
        return numbers.reshape(-1, 3)
    row = np.concatenate(([0], np.cumsum(words - 1)[:-1]))
    return numbers[row[:, None] + np.arange(3)]


class PlainFaces(NamedTuple):
    """An OBJ's plain faces: where each line starts, its corners' count, and its corners'
    vertex numbers less one, all in order."""

    starts: Array
    sizes: Array
    corners: Array


def plain_faces(data: bytes) -> PlainFaces:
    """The faces of `f`, a space or tab, then three words or more, each a vertex number of at
    most 18 digits, not 0, then what a `/` starts of digits and `/`s, white space (not \\x0b,
    \\x0c) between: what int(word.split(b"/")[0]) reads of each, read by numpy."""
    starts, sizes, corners = [], [], []
    for at, buf in _chunks(data):
        found = _lines(buf, "f")
        if found is None:
            continue
        plain, counts, numbers = _face_lines(found[1])
        starts.append(found[0][plain] + at)
        sizes.append(counts)
        corners.append(numbers)
    if not starts:
        return PlainFaces(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    return PlainFaces(np.concatenate(starts), np.concatenate(sizes), np.concatenate(corners))


def _face_lines(text: Array) -> tuple[Array, Array, Array]:
    """Which `f` lines (their bytes) are plain, each one's corners' count, and their vertex
    numbers less one."""
    first = _offsets(text)
    bad = ~_FACE_BYTES[text]
    bad[first] = False
    text[first] = ord(" ")
    space, digit = _SPACE_BYTES[text], _DIGITS[text]
    word, words = _words(space, first)
    bad[word] |= ~digit[word]  # a word of no number before its `/`
    # a word's number: the digits after white space, up to a `/` or white space
    index = np.arange(len(text), dtype=np.int32)  # a piece is under 2 GiB: the file, 256 MiB
    before = np.maximum.accumulate(np.where(digit, -1, index))  # the last byte not a digit
    after = np.minimum.accumulate(np.where(digit, len(text), index)[::-1])[::-1]
    del index
    number = np.flatnonzero(digit & space[np.maximum(before, 0)])
    power = after[number] - number - 1
    bad[number] |= power >= _LONGEST
    value = (text[number] - ord("0")).astype(np.int64) * 10 ** np.minimum(power, _LONGEST - 1)
    owner = np.searchsorted(word, number, side="right") - 1  # the word each digit is of
    cut = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
    values = np.zeros(len(word), dtype=np.int64)
    if len(number):
        values[owner[cut]] = np.add.reduceat(value, cut)
    bad[word[values == 0]] = True  # 0, or no number
    plain = ~np.logical_or.reduceat(bad, first) & (words >= 3)
    line = np.searchsorted(first, word, side="right") - 1
    return plain, words[plain], values[plain[line]] - 1
