"""The processes this test process has started, as the operating system lists them (/proc, Linux):
to check that a batch runs in worker processes and that they are gone after `close()` or once their
owner is garbage-collected, without reading any bpe_core object.

A child that has exited but is not reaped yet (a zombie) counts as gone.
"""

import os
import time
from pathlib import Path


def child_processes() -> set[int]:
    """The process ids of this process's living children."""
    me = os.getpid()
    children = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text(encoding="ascii", errors="replace")
        except OSError:  # it ended while we looked
            continue
        # "pid (command) state ppid ...": the command may hold spaces and parentheses
        state, parent = stat.rpartition(")")[2].split()[:2]
        if int(parent) == me and state != "Z":
            children.add(int(entry.name))
    return children


def wait_until_gone(processes: set[int], timeout: float = 10) -> set[int]:
    """Those of `processes` still living after `timeout` seconds (empty as soon as all are gone)."""
    deadline = time.monotonic() + timeout
    while (living := processes & child_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return living
