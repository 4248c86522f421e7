"""The command line's standard streams when they are not what a program expects: closed when the
process starts, or failing as it writes (a reader that left the pipe, a full disk); and a thread
of the process's own that fails (no memory to start another), which must end the command.

A process may be started with standard input, output or error closed (`bpe ... >&-`). Python
leaves such a stream None, and the first file the process opens then gets the stream's
descriptor, so whatever is meant for the stream would go into that file. `guard_standard_streams`
holds the descriptors on /dev/null first, then gives each closed stream an object that says so.

Writing the one error line must not fail in turn (`report`), and standard output that failed
must not fail again as Python flushes it at exit (`silence_standard_output`).

A worker pool's own threads (the one that hands out tasks, a queue's feeder) can fail when the
process may not grow (RLIMIT_AS): the main thread would then wait for results forever.
`end_on_thread_failure` makes such a failure interrupt the main thread, which unwinds (removing
temporary files) and reports it (`thread_failure`). This module does not decide exit statuses or
messages: `cli.main` does.
"""

import contextlib
import io
import os
import signal
import sys
import threading
from typing import Any

from bpe_core.errors import BpeError, failure_cause


class _ClosedStream(io.BufferedIOBase):
    """Standard input or output of a process started with it closed: using it is a BpeError
    saying so."""

    def __init__(self, failure: str) -> None:
        super().__init__()
        self._failure = failure

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        raise BpeError(self._failure)

    def read1(self, size: int = -1) -> bytes:
        raise BpeError(self._failure)

    def readinto(self, buffer: Any) -> int:
        raise BpeError(self._failure)

    def write(self, data: Any) -> int:
        raise BpeError(self._failure)


def guard_standard_streams() -> None:
    """Make a process started with standard input, output or error closed safe to run: each
    closed descriptor is opened on /dev/null, so no file opened later gets its number; reading
    standard input or writing standard output is then an error saying the stream is closed, and
    what is written to standard error goes nowhere (there is nowhere to say it: the exit status
    tells)."""
    if isinstance(getattr(sys.stdout, "buffer", None), io.RawIOBase):
        _buffer_standard_output()
    if sys.stdin is not None and sys.stdout is not None and sys.stderr is not None:
        return
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            placeholder = os.open(os.devnull, os.O_RDWR)
            if placeholder != descriptor:
                os.dup2(placeholder, descriptor)
                os.close(placeholder)
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(_ClosedStream("cannot read standard input: it is closed"), encoding="utf-8")
    if sys.stdout is None:
        closed = _ClosedStream("cannot write standard output: it is closed")
        # write_through: each write reaches the closed stream (and fails) at once, not at exit
        sys.stdout = io.TextIOWrapper(closed, encoding="utf-8", write_through=True)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")


def _buffer_standard_output() -> None:
    """Put a buffered layer under standard output where PYTHONUNBUFFERED (`python -u`) left the
    text layer on the raw file: the text layer drops the rest of a partial write unseen (a pipe
    whose reader left takes part of a write), so the command would end as if all was written.
    Text still goes through at once (write_through)."""
    text = sys.stdout
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(text.buffer),
        encoding=text.encoding,
        errors=text.errors,
        line_buffering=bool(text.line_buffering),
        write_through=True,
    )


def silence_standard_output() -> None:
    """Send what is still buffered for standard output, and anything after it, nowhere: after a
    write to it failed (its reader left, its disk is full), so that Python's flush at exit does
    not fail again with an "Exception ignored" message."""
    with contextlib.suppress(OSError, ValueError):
        descriptor = sys.stdout.fileno()
        placeholder = os.open(os.devnull, os.O_WRONLY)
        os.dup2(placeholder, descriptor)
        os.close(placeholder)


def flush_standard_output() -> None:
    """Write out what a command printed, where a failure is still reported and changes the exit
    status (at exit it would be an "Exception ignored" message). A reader that left the pipe is
    a BrokenPipeError still."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise BpeError(f"cannot write standard output: {failure_cause(error)}") from error


def failed(line: str, status: int) -> int:
    """Report one error line and return the exit status; standard output that cannot take what
    is buffered for it is silenced first, so nothing but the line is said."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError, BpeError):
        silence_standard_output()
    report(line)
    return status


def report(line: str) -> None:
    """Print one line on standard error; if even that fails (its reader left), say nothing."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


_thread_failures: list[BaseException] = []


def end_on_thread_failure() -> None:
    """From now on, an exception that ends a thread other than the main one is kept (for
    `thread_failure`) and interrupts the main thread as Ctrl-C does, so the command unwinds and
    ends instead of waiting for a result that will never come. Where Ctrl-C is ignored (a
    background job), the failure is reported here and the process ends at once: its temporary
    files are then left for the next run to remove."""

    def failed(hook: "threading.ExceptHookArgs") -> None:
        if hook.exc_value is None or isinstance(hook.exc_value, SystemExit):
            return
        _thread_failures.append(hook.exc_value)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        else:
            report(f"error: {hook.exc_value!r} in a background thread")
            os._exit(2)

    threading.excepthook = failed


def thread_failure() -> BaseException | None:
    """The exception that ended another thread of this process (see `end_on_thread_failure`), if one did."""
    return _thread_failures[0] if _thread_failures else None


def end_now_if_work_remains(status: int) -> None:
    """After a failure has unwound the stack (temporary files removed, the error line said): if
    threads of a worker pool are still running, or its processes, end the process now with
    `status`. The interpreter's exit would wait for them, possibly forever (a result half sent
    by a worker that died, a thread that found no memory to start), or race their pipes and
    report "Exception ignored". The workers are killed first: nothing will read their work."""
    others = [thread for thread in threading.enumerate() if thread is not threading.main_thread()]
    processes = sys.modules.get("multiprocessing")
    children = processes.active_children() if processes is not None else []
    if not children and not any(thread.is_alive() and not thread.daemon for thread in others):
        return
    for child in children:
        with contextlib.suppress(Exception):
            child.kill()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed, or a pipe whose reader left
            stream.flush()
    os._exit(status)
