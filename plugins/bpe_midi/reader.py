"""The `midi` reader: .mid/.midi files, globs and directories, one Song per file.

Unreadable files are skipped with a warning naming each one and a count at the end
(`on_error: skip`, the default, so one bad file cannot stop a 100,000-file run), or are an error
(`on_error: error`, what `bpe train --strict` sets and what encoding uses).
"""

import hashlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from bpe_core.contract import Source, check_options
from bpe_core.errors import BpeError
from bpe_core.files import expand_paths
from bpe_midi.song import Song, read_song, song_of

SUFFIXES = (".mid", ".midi", ".MID", ".MIDI")


class MidiReader:
    name = "midi"
    suffixes = SUFFIXES

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("reader", self.name, options, ("on_error", "parser"))
        self.on_error = options.get("on_error", "skip")
        if self.on_error not in ("skip", "error"):
            raise BpeError(f"input.on_error: {self.on_error!r} is not allowed; allowed: skip, error")
        self.parser = options.get("parser", "fast")
        if self.parser not in ("fast", "mido", "symusic"):
            raise BpeError(f"input.parser: {self.parser!r} is not allowed; allowed: fast, mido, symusic")
        self._sources: list[Source] = []
        self.skipped: list[str] = []
        self.beats = 0.0

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[Song]:
        files = expand_paths(paths, self.suffixes)
        for path in files:
            try:
                data = _read_bytes(path)
                song = read_song(path, self.parser, data)
            except BpeError as error:
                if strict or self.on_error == "error":
                    raise
                self.skipped.append(path)
                print(f"warning: skipped {error}", file=sys.stderr)
                continue
            self._sources.append(Source(path, len(data), hashlib.sha256(data).hexdigest()))  # the bytes parsed
            self._measure(song)
            yield song
        if self.skipped:
            print(f"warning: skipped {len(self.skipped)} of {len(files)} MIDI files (on_error: skip)", file=sys.stderr)

    def memory_documents(self, items: Iterable[Any]) -> Iterator[Song]:
        """Songs from memory: a path (a file or a directory, read as `documents` reads it), a
        `mido.MidiFile` or a `Song`."""
        for index, item in enumerate(items):
            path = os.fspath(item) if isinstance(item, (str, os.PathLike)) else None
            if isinstance(path, str) and "\n" not in path and len(path) <= 4096:  # else text: song_of says so
                yield from self.documents([path])
                continue
            try:
                song = song_of(item, self.parser)
            except BpeError as error:
                raise BpeError(f"documents[{index}]: {error}") from None
            self._measure(song)
            yield song

    def _measure(self, song: Song) -> None:
        self.beats += max([note.end for note in song.notes] + [song.end]) / song.ticks_per_beat

    def sources(self) -> list[Source]:
        return list(self._sources)

    def measures(self) -> dict[str, float]:
        """What the songs read so far add up to, for the tokenizer's provenance."""
        return {"beats": round(self.beats, 3), "files_skipped": len(self.skipped)}


def _read_bytes(path: str) -> bytes:
    """A MIDI file's bytes, read once: parsed and hashed for provenance from the same bytes."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise BpeError(f"cannot read {path}: {error.strerror or error}") from None
