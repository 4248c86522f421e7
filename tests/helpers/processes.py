"""The processes this test process has started, as the operating system lists them (/proc, Linux):
to check that a batch runs in worker processes and that they are gone after `close()` or once their
owner is garbage-collected, without reading any bpe_core object.

A child that has exited but is not reaped yet (a zombie) counts as gone.
"""

import os
import time
from collections.abc import Iterator
from pathlib import Path


def living_processes() -> Iterator[tuple[int, list[str]]]:
    """(pid, the fields of /proc/PID/stat after the command: state, ppid, pgrp, session, ...) of
    every process but zombies."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text(encoding="ascii", errors="replace")
        except OSError:  # it ended while we looked
            continue
        # "pid (command) state ppid pgrp session ...": the command may hold spaces and parentheses
        fields = stat.rpartition(")")[2].split()
        if fields[0] != "Z":
            yield int(entry.name), fields


def child_processes() -> set[int]:
    """The process ids of this process's living children."""
    me = os.getpid()
    return {pid for pid, fields in living_processes() if int(fields[1]) == me}


def wait_until_gone(processes: set[int], timeout: float = 10) -> set[int]:
    """Those of `processes` still living after `timeout` seconds (empty as soon as all are gone)."""
    deadline = time.monotonic() + timeout
    while (living := processes & child_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return living
