"""The exception types users see: a message for a person, naming the file, line or key; how a
failure of the system (an OSError) is said to one; and the checks the public functions make of
their arguments at the door, so a wrong type is our message, never a TypeError from inside."""

import errno
import os
from typing import Any

# What ran out, by errno, as an error line says it: the causes that are the machine's, not the
# input's, met writing an output, opening a file or starting a worker process.
_RAN_OUT = {
    errno.ENOSPC: "disk full (no space left on the device)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file size limit reached (ulimit -f)",
    errno.EMFILE: "too many open files (the limit per process: ulimit -n)",
    errno.ENFILE: "too many open files in the system",
    errno.ENOMEM: "out of memory",
}


class BpeError(Exception):
    """Bad input or configuration. The CLI prints `error: <message>` and exits with status 2."""


class WrongTokenizer(BpeError):
    """Ids (a shard set, an ids file) read with a tokenizer other than the one that made them, or
    counts trained with another config: the message names both; `--force` (`force=True`) reads
    them anyway where that can make sense."""


class ArgumentError(BpeError, TypeError):
    """A public function given an argument of the wrong type: a BpeError (what the command line
    reports) and a TypeError (what Python code expects), naming the argument and what it takes."""


def described(value: Any) -> str:
    """A value as an error about its type shows it: the type, and short values themselves."""
    return f"{type(value).__name__} {value!r}" if isinstance(value, (int, float, str, bytes)) else type(value).__name__


def path_argument(value: Any, name: str) -> str:
    """A path argument (str or os.PathLike) as a str."""
    if isinstance(value, str) or (isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)):
        return os.fspath(value)
    raise ArgumentError(f"{name}: expected a path (str or os.PathLike), got {described(value)}")


def check_argument(value: Any, kinds: type | tuple[type, ...], name: str, what: str) -> None:
    """`value` is an instance of `kinds` (a bool is not an int here), else an ArgumentError
    saying that `name` takes `what`."""
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        raise ArgumentError(f"{name}: expected {what}, got {described(value)}")


def located(where: str, message: str) -> str:
    """`where: message`, unless the message already starts by naming that place (a pretokenizer
    that names the record, say), so no location is said twice."""
    return message if message.startswith((f"{where}:", f"{where},")) else f"{where}: {message}"


def failure_cause(error: OSError) -> str:
    """What an OSError says to a person: what ran out, for a resource running out (disk full,
    too many open files), else the system's message."""
    return _RAN_OUT.get(error.errno or 0) or error.strerror or str(error)


def machine_ran_out(error: BaseException) -> bool:
    """Whether `error` is Python's way of saying the machine ran out where no MemoryError or
    OSError says so: a thread that could not start (no memory for its stack, or the limit on
    threads reached), a compiled module that could not be loaded for want of memory."""
    return (isinstance(error, RuntimeError) and str(error) == "can't start new thread") or _loading_without_memory(
        error
    )


def _loading_without_memory(error: BaseException) -> bool:
    # what the dynamic loader says when a compiled module finds no room to be mapped
    return isinstance(error, ImportError) and (
        "failed to map segment" in str(error) or "cannot allocate memory" in str(error)
    )


def machine_failure(error: BaseException) -> str:
    """What a failure of the machine says to a person: out of memory, a thread that could not
    start, what ran out for an OSError; anything else by its type and message."""
    if isinstance(error, MemoryError) or _loading_without_memory(error):
        return "out of memory"
    if isinstance(error, RuntimeError) and machine_ran_out(error):
        return "out of memory, or too many threads (a thread could not start)"
    if isinstance(error, OSError):
        return failure_cause(error)
    return f"{type(error).__name__}: {error}"
