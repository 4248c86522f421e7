"""Writing files so that a failure never leaves a truncated or half-written output behind."""

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from bpe_core.errors import BpeError


@contextlib.contextmanager
def atomic_output(path: str | None, binary: bool = False) -> Iterator[IO[Any]]:
    """Standard output for None or "-"; otherwise a temporary file in the same directory that
    replaces `path` only when the block finishes without an exception."""
    if path is None or path == "-":
        stream: IO[Any] = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        suffix = "-" + os.path.basename(path)
        handle: IO[Any]
        if binary:
            handle = tempfile.NamedTemporaryFile("wb", dir=directory, prefix=".tmp-", suffix=suffix, delete=False)
        else:
            handle = tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", newline="", dir=directory, prefix=".tmp-", suffix=suffix, delete=False
            )
    except OSError as error:
        raise BpeError(f"cannot write {path}: {error.strerror or error}") from error
    try:
        with handle:
            yield handle
        os.replace(handle.name, path)
    except BaseException:
        os.unlink(handle.name)
        raise
