"""Example third-party bpe-core plugin: protein sequences over the 20 standard amino acids.

Provides a pretokenizer `protein` (chunks are runs of standard amino acids; `*` stops and `X`
or other letters break chunks and are dropped), a reader `protein-lines` (one sequence per
non-empty line, `#` comments skipped) and a decoder `protein` (symbols back to a sequence).
It uses only the public contract: bpe_core.hookspecs.hookimpl, bpe_core.contract (Source and
check_options) and bpe_core.errors.BpeError.
"""

import os
import re
from collections.abc import Iterator
from typing import Any

from bpe_core.contract import Source, check_options
from bpe_core.errors import BpeError
from bpe_core.hookspecs import hookimpl

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
RUN = re.compile(f"[{AMINO_ACIDS}]+")


class ProteinPretokenizer:
    name = "protein"
    byte_level = False
    decoder = "protein"
    symbol_unit = "amino acids"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("pretokenizer", self.name, options, ("uppercase",))
        self.uppercase = bool(options.get("uppercase", True))

    def options(self) -> dict[str, Any]:
        return {"uppercase": self.uppercase}

    def alphabet(self) -> list[str]:
        return list(AMINO_ACIDS)

    def split(self, document: Any) -> list[str]:
        text = document.upper() if self.uppercase else document
        return RUN.findall(text)

    def symbols(self, chunk: Any) -> list[int]:
        return [AMINO_ACIDS.index(residue) for residue in chunk]

    def safe_cut(self, text: str) -> int:
        return 0


class ProteinLinesReader:
    name = "protein-lines"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("reader", self.name, options, ())
        self._sources: list[Source] = []

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[str]:
        for path in paths:
            if not os.path.isfile(path):
                raise BpeError(f"input file {path} does not exist")
            self._sources.append(Source(path, os.path.getsize(path), ""))
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    line = line.strip()
                    if line and not line.startswith("#"):
                        yield line

    def sources(self) -> list[Source]:
        return list(self._sources)


class ProteinDecoder:
    name = "protein"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("decoder", self.name, options, ())

    def decode(self, symbols: list[int], alphabet: list[str]) -> str:
        return "".join(alphabet[symbol] for symbol in symbols)

    def write(self, document: Any, path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(document + "\n")


@hookimpl
def bpe_core_pretokenizers() -> dict[str, Any]:
    return {"protein": ProteinPretokenizer}


@hookimpl
def bpe_core_readers() -> dict[str, Any]:
    return {"protein-lines": ProteinLinesReader}


@hookimpl
def bpe_core_decoders() -> dict[str, Any]:
    return {"protein": ProteinDecoder}
