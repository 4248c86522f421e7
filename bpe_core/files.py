"""Files for readers and writers: expanding input paths, provenance of inputs, and writing
outputs so that a failure never leaves a truncated or half-written file behind.

An output is written to a temporary file beside it and renamed over it at the end; on an error,
Ctrl-C (SIGINT) or a SIGTERM/SIGHUP the temporary file is removed and the old output is left as it
was. A SIGKILL cannot be caught: it may leave a `.tmp-*` file, never a damaged output; the next
write of the same output removes such leftovers once they are a minute old (a live writer holds
a lock on its temporary file, so only a dead one's are removed).

A set of files that belong together (a shard set, a decode's files) is written into a new
directory beside its target and takes the target's place in one step (`staged_directory`), so a
reader sees the previous set or the new one, whole, and of two writers at once the later wins.

A write that fails because something ran out (the disk is full, the file size limit is reached)
is a BpeError naming the output and what ran out.
"""

import contextlib
import errno
import fcntl
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import signal
import stat
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from types import FrameType
from typing import IO, Any

from bpe_core.contract import Source
from bpe_core.errors import BpeError, failure_cause


@contextlib.contextmanager
def atomic_output(path: str | None, binary: bool = False) -> Iterator[IO[Any]]:
    """Standard output for None or "-"; otherwise a temporary file in the same directory that
    replaces `path` only when the block finishes without an exception (or a terminating signal).
    An existing path that is not a regular file (a FIFO, /dev/null) is written directly: it
    cannot be replaced, and replacing it would destroy it."""
    if path is None or path == "-":
        stream: IO[Any] = sys.stdout.buffer if binary else sys.stdout
        with running_out("standard output"):
            yield stream
            stream.flush()
        return
    check_output(path)
    if os.path.exists(path) and not os.path.isfile(path):
        try:
            direct = open(path, "wb") if binary else open(path, "w", encoding="utf-8", newline="")
        except OSError as error:
            raise BpeError(f"cannot write {path}: {failure_cause(error)}") from error
        with running_out(path), direct:
            yield direct
        return
    import tempfile  # for writing only: reading a tokenizer does without it

    directory = os.path.dirname(os.path.abspath(path))
    suffix = "-" + os.path.basename(path)
    if not os.path.basename(directory).startswith(".tmp-"):  # a staging directory is new: nothing to clean
        remove_abandoned(directory, re.compile(r"\.tmp-[a-z0-9_]{8}" + re.escape(suffix)))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)  # until the file is known to the cleanup below
    try:
        handle: IO[Any]
        if binary:
            handle = tempfile.NamedTemporaryFile("wb", dir=directory, prefix=".tmp-", suffix=suffix, delete=False)
        else:
            handle = tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", newline="", dir=directory, prefix=".tmp-", suffix=suffix, delete=False
            )
    except OSError as error:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise BpeError(f"cannot write {path}: {failure_cause(error)}") from error
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    lock = _hold(handle.name)
    try:
        with unwind_on_termination():
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held meanwhile is raised here
            with running_out(path), handle:
                yield handle.file  # the file itself: the wrapper adds a call to every write
            os.chmod(handle.name, 0o666 & ~current_umask())  # temporary files are private; outputs are not
            try:
                os.replace(handle.name, path)
            except OSError as error:  # it became a directory, or the directory went away, meanwhile
                raise BpeError(f"cannot write {path}: {failure_cause(error)}") from error
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # if the block failed before it was set back
        raise
    finally:
        if lock is not None:
            os.close(lock)


@contextlib.contextmanager
def running_out(output: str) -> Iterator[None]:
    """Within the block, a write that fails because the disk is full, a quota or the file size
    limit is reached (an OSError naming no file: the output being written) is a BpeError naming
    `output` and what ran out."""
    try:
        yield
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) or error.filename is not None:
            raise
        raise BpeError(f"cannot write {output}: {failure_cause(error)}") from error


# A temporary file or directory is a killed writer's when nobody holds its lock and it is older
# than this: a live writer takes the lock the moment it creates it, so a younger one may be live.
ABANDONED_AFTER = 60.0


def _hold(path: str) -> int | None:
    """A descriptor holding an exclusive lock on `path` (a temporary file or directory being
    written) until it is closed; None where locks cannot be taken (then leftovers stay)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def remove_abandoned(directory: str, names: "re.Pattern[str]") -> None:
    """Remove the entries of `directory` whose names match `names` (temporary files or staging
    directories of one output) that a killed writer left: unlocked and a minute old."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for name in entries:
        if not names.fullmatch(name):
            continue
        path = os.path.join(directory, name)
        try:
            if os.lstat(path).st_mtime > time.time() - ABANDONED_AFTER:
                continue
        except OSError:
            continue
        lock = _hold(path)
        if lock is None:  # live (or not ours to judge)
            continue
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        finally:
            os.close(lock)


@contextlib.contextmanager
def staged_directory(target: str, shown: str) -> Iterator[str]:
    """A new, empty directory beside `target` (`.tmp-NAME-*`) to write a whole set of files into;
    when the block ends without an exception (or a terminating signal) it takes the place of
    `target` in one step and the previous directory there is removed. Otherwise it is removed and
    `target` is left as it was. The caller checks first that `target` may be replaced."""
    import tempfile  # for writing only

    target = os.path.normpath(target)
    parent = os.path.dirname(os.path.abspath(target))
    prefix = f".tmp-{os.path.basename(os.path.abspath(target))}-"
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)  # until the directory is known to the cleanup below
    try:
        os.makedirs(parent, exist_ok=True)
        remove_abandoned(parent, re.compile(re.escape(prefix) + r"[a-z0-9_]{8}(\.old)?"))
        staging = tempfile.mkdtemp(dir=parent, prefix=prefix)
        os.chmod(staging, 0o777 & ~current_umask())  # temporary directories are private; outputs are not
    except OSError as error:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise BpeError(f"cannot create the directory {shown}: {failure_cause(error)}") from error
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    lock = _hold(staging)
    try:
        with unwind_on_termination():
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held meanwhile is raised here
            with running_out(shown):
                yield staging
            _swap_in(staging, target, shown)
    except BpeError as error:  # about a file being written: named where it was to be, not where it was staged
        shutil.rmtree(staging, ignore_errors=True)
        if staging not in str(error):
            raise
        raise type(error)(str(error).replace(staging, target)) from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # if the block failed before it was set back
        raise
    finally:
        if lock is not None:
            os.close(lock)
    shutil.rmtree(staging, ignore_errors=True)  # the previous directory, if there was one


def _swap_in(staging: str, target: str, shown: str) -> None:
    """Put the directory `staging` in place of `target`; `staging` then names the previous
    directory (or none). Writers of one parent directory take turns (a lock on it), and where the
    system can exchange two names in one step (Linux) no moment is without a whole `target`."""
    parent = os.open(os.path.dirname(os.path.abspath(target)), os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):  # no locks here (some network filesystems): one writer
            fcntl.flock(parent, fcntl.LOCK_EX)
        if not os.path.exists(target):
            os.rename(staging, target)
        elif not _exchange(staging, target):
            # the previous directory moves aside, then the new one in: a moment without `target`
            retired = staging + ".old"
            os.rename(target, retired)
            try:
                os.rename(staging, target)
            except BaseException:
                os.rename(retired, target)
                raise
            os.rename(retired, staging)
    except OSError as error:
        raise BpeError(f"cannot replace the directory {shown}: {failure_cause(error)}") from error
    finally:
        os.close(parent)  # and with it the lock


def _exchange(first: str, second: str) -> bool:
    """Exchange two paths' names in one step (Linux renameat2 RENAME_EXCHANGE); False where the
    system or the filesystem cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # for replacing directories only

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_cwd = -100
    rename_exchange = 2
    if renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), second)


def check_output(path: str | None) -> None:
    """Refuse an output path that cannot be written, before any work is done: an existing
    directory, or a parent directory that is missing or is not one. None and "-" are standard
    output."""
    if path is None or path == "-":
        return
    if os.path.isdir(path):
        raise BpeError(f"cannot write {path}: it is a directory (give a file name)")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        what = "is not a directory" if os.path.exists(directory) else "does not exist"
        raise BpeError(f"cannot write {path}: directory {os.path.dirname(path) or directory} {what}")


# Signals held while a temporary file is made, until the code that removes it is in place: one
# that came between would leave the file behind.
_DEFERRED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

# Signals that end a process by default: while an output is half written they unwind the stack
# (SystemExit) so the temporary file is removed, as Ctrl-C does with KeyboardInterrupt.
_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_taken_over: set[int] = set()
_terminated_by: list[int] = []  # the signals that raised SystemExit in this process


def _default_action_in_child() -> None:
    # A forked worker must die by SIGTERM at once (Pool.terminate sends it): a Python handler
    # would run only when the worker next runs bytecode, and a worker blocked on its task queue
    # then keeps the pool's join waiting.
    for signum in _taken_over:
        signal.signal(signum, signal.SIG_DFL)
    _taken_over.clear()


os.register_at_fork(after_in_child=_default_action_in_child)


@contextlib.contextmanager
def unwind_on_termination() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise SystemExit(128 + signal) in this process, so
    `finally` and `except BaseException` clean up before it exits with the usual status. Only
    signals left at their default action are taken over (a program's own handler wins), and only
    in the main thread (where Python runs handlers); processes forked meanwhile get the
    default action back at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    received: list[int] = []
    owner = os.getpid()

    def terminate(signum: int, _frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a process just forked, before its fork hook gave the default back
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        received.append(signum)
        _terminated_by.append(signum)
        raise SystemExit(128 + signum)

    previous_hook = sys.unraisablehook

    def unraisable(report: Any) -> None:
        # The handler ran inside a fork hook (a pool starting a worker), where an exception is
        # printed and dropped: the signal is sent again a moment later, to end the process where
        # it can (sent now, it would be handled in this hook, and dropped too).
        if received and isinstance(report.exc_value, SystemExit):
            again = threading.Timer(0.01, os.kill, (os.getpid(), received[-1]))
            again.daemon = True
            again.start()
            return
        previous_hook(report)

    taken = [signum for signum in _TERMINATING if signal.getsignal(signum) == signal.SIG_DFL]
    for signum in taken:
        signal.signal(signum, terminate)
        _taken_over.add(signum)
    if taken:
        sys.unraisablehook = unraisable
    try:
        yield
    finally:
        for signum in taken:
            signal.signal(signum, signal.SIG_DFL)
            _taken_over.discard(signum)
        if taken:
            sys.unraisablehook = previous_hook


def end_if_terminated() -> None:
    """Once a terminating signal has unwound the stack (so every temporary file is removed), end
    the process at once with the status it gives (128 + its number). The interpreter's own exit
    would wait for worker pools' threads, and one may wait forever for the rest of a result that
    a worker killed by the same signal was sending."""
    if not _terminated_by:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed, or a pipe whose reader left
            if stream is not None:
                stream.flush()
    os._exit(128 + _terminated_by[0])


def _unlisted(error: OSError) -> None:
    """A folder of inputs that cannot be listed (no permission) is an error, not a folder without inputs."""
    raise BpeError(f"cannot read directory {error.filename}: {failure_cause(error)}")


def expand_paths(paths: list[str], suffixes: tuple[str, ...] = ()) -> list[str]:
    """Files named by paths, globs and directories, in a stable order; `-` stays as is."""
    import glob  # for naming inputs only

    files: list[str] = []
    for path in paths:
        if path == "-":
            files.append(path)
        elif os.path.isdir(path):
            found: list[str] = []
            for root, _, names in os.walk(path, onerror=_unlisted):
                found.extend(os.path.join(root, name) for name in names if not suffixes or name.endswith(suffixes))
            if not found:
                raise BpeError(f"directory {path} holds no input files")
            files.extend(sorted(found))
        elif os.path.isfile(path):
            files.append(path)
        elif os.path.exists(path):
            raise BpeError(
                f"input {path} is not a regular file (it is {_file_kind(path)}); give a regular file, a directory, "
                "or - for standard input"
            )
        elif glob.has_magic(path):
            matches = sorted(match for match in glob.glob(path, recursive=True) if os.path.isfile(match))
            if not matches:
                raise BpeError(f"no files match {path}")
            files.extend(matches)
        else:
            raise BpeError(f"input file {path} does not exist")
    return files


def reader_files(reader: Any, paths: list[str]) -> list[str]:
    """The files a reader reads for these paths (directories listed with its `suffixes`), for work
    planned per file: standard input has none."""
    files = expand_paths(paths, getattr(reader, "suffixes", ()))
    if "-" in files:
        raise BpeError("give input files, not standard input (-): shards and Dask tasks are made per file")
    return files


def file_source(path: str, handle: IO[bytes] | None = None) -> Source:
    """A file's size and SHA-256, read from `handle` when given (a file opened before its
    contents were used: on POSIX it stays readable even if the path is deleted meanwhile)."""
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") if handle is None else handle as source:
            source.seek(0)
            while block := source.read(1 << 20):
                digest.update(block)
                size += len(block)
    except OSError as error:
        raise BpeError(f"cannot read {path}: {failure_cause(error)}") from error
    return Source(path, size, digest.hexdigest())


def read_failure(path: str, error: BaseException) -> BpeError:
    """The error for a file that could not be read: damaged gzip named as such, else the reason."""
    if isinstance(error, (gzip.BadGzipFile, zlib.error)):
        return BpeError(f"{path} is not a valid gzip file ({error})")
    if isinstance(error, EOFError):
        return BpeError(f"{path} is truncated: {error or 'the compressed stream ends early'}")
    if isinstance(error, OSError):
        return BpeError(f"cannot read {path}: {failure_cause(error)}")
    return BpeError(f"cannot read {path}: {error}")


class HashedFile(io.RawIOBase):
    """A binary file that hashes the bytes as they are read: provenance of exactly what a reader
    used, without reading the file a second time (which could find it changed or deleted).

    Seeking is allowed back to the start only (readers peek at a first line); that restarts the
    hash, since the bytes are read again.
    """

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        try:
            self._file = open(path, "rb", buffering=0)
        except OSError as error:
            raise BpeError(f"cannot read {path}: {failure_cause(error)}") from error
        self._digest = hashlib.sha256()
        self._size = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._file.readinto(buffer)
        if count:
            self._digest.update(memoryview(buffer)[:count])
            self._size += count
        return count or 0

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_CUR and offset == 0:
            return self._file.tell()
        if whence != os.SEEK_SET or offset != 0:
            raise io.UnsupportedOperation("a hashed file seeks only back to its start")
        self._digest = hashlib.sha256()
        self._size = 0
        return self._file.seek(0)

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        self._file.close()
        super().close()

    def source(self) -> Source:
        """Size and SHA-256 of the file as read: call it once the reader reached the end (a file
        still open is read to its end first; a closed one was read to its end by its reader)."""
        while not self._file.closed and (block := self._file.read(1 << 20)):
            self._digest.update(block)
            self._size += len(block)
        return Source(self.path, self._size, self._digest.hexdigest())


def _file_kind(path: str) -> str:
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file or directory"


def current_umask() -> int:
    """The process umask (reading it means setting it, so it is set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_json(path: str, description: str) -> Any:
    """A JSON file's content; a missing, unreadable or invalid file is a BpeError naming it."""
    return parse_json(read_file(path, description), path, description)


def read_file(path: str, description: str) -> bytes:
    """A regular file's bytes; a missing or unreadable file, or one that is not a regular file, is
    a BpeError naming it."""
    if os.path.exists(path) and not os.path.isfile(path):  # a directory, or /dev/zero: never ends
        raise BpeError(f"cannot read {description} {path}: it is not a regular file (it is {_file_kind(path)})")
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise BpeError(f"cannot read {description} {path}: {failure_cause(error)}") from error


def parse_json(content: bytes, path: str, description: str) -> Any:
    """The JSON document in a file's bytes (UTF-8); invalid JSON is a BpeError naming the file."""
    try:
        return json.loads(content.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BpeError(f"{path} is not a {description} (invalid JSON: {error})") from error
    except RecursionError:
        raise BpeError(f"{path} is not a {description} (JSON nested too deeply to read)") from None


def make_directory(directory: str) -> None:
    """Create a folder and its parents if missing (exports to a new folder); a BpeError naming it if that fails."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise BpeError(f"cannot create the folder {directory}: {failure_cause(error)}") from error


def contained_path(directory: str, name: Any, where: str, what: str) -> str:
    """The path of a file that a file (`where`: a shard index, a config) names, as `what` (its
    entry: `shard`, `input.paths[0]`), relative to `directory`; a BpeError naming `where` and the
    entry when the name is not one of a file inside `directory`: not a non-empty string, an
    absolute path, a `..` part (`\\` counts as a separator too), or a path that symbolic links
    lead out of `directory` (resolved as the file system stands now).

    Names read from files are data, not instructions: a shard set or a config that someone else
    made must not make a command read or write elsewhere. Paths given on the command line are the
    user's own and are not checked here."""
    if not isinstance(name, str) or not name or "\0" in name:
        shown = repr(name) if len(repr(name)) <= 80 else repr(name)[:60] + "..."
        raise BpeError(f"{where}: {what} {shown} is not a file name")
    shown = repr(name) if len(name) <= 80 else repr(name[:40] + "..." + name[-30:])
    outside = f"{where}: {what} {shown} is outside {directory or 'the working directory'}"
    if os.path.isabs(name) or os.path.splitdrive(name)[0] or name.startswith(("/", "\\")):
        raise BpeError(f"{outside} (an absolute path); the files it names must be inside that directory")
    if ".." in name.replace("\\", "/").split("/"):
        raise BpeError(f"{outside} (a .. part); the files it names must be inside that directory")
    path = os.path.join(directory, name)
    inside = os.path.realpath(directory or ".")
    resolved = os.path.realpath(path)
    if os.path.commonpath([inside, resolved]) != inside:
        raise BpeError(f"{outside} (a symbolic link to {resolved}); the files it names must be inside that directory")
    return path
