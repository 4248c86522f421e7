"""Ordered, bounded parallel map in forked worker processes, for counting and encoding.

The function is handed to the workers by fork (it is never pickled, so closures over a tokenizer
are fine); only items and results cross process boundaries. At most a few items per worker are
in flight, so a corpus of any size streams through in constant memory. This module knows nothing
about tokenizers. multiprocessing and concurrent.futures are imported when work is about to be
forked, not before: a short command (one line to encode) forks nothing and need not pay for them.
"""

import bisect
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from bpe_core.engine import pack_id_lists, unpack_id_lists

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

Result = TypeVar("Result")

_worker_function: Callable[[Any], Any] | None = None
# ordered_map's batches (with a weight): a few hundred reads, or one streamed text piece of a MiB
BATCH_ITEMS = 256
BATCH_WEIGHT = 1 << 16
# ids below this travel back from a WorkerPool's processes as shared int objects (o200k_base's all do)
BOXED_IDS = 1 << 18
# a WorkerPool's own share weighs this much of a forked process's: this process also receives
# and unpacks the others' results, and they would otherwise wait for it
HERE_SHARE = 0.6


def default_workers() -> int:
    """The cores this process may use."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def fork_available() -> bool:
    """Whether this platform starts processes by fork (the workers here are forked)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _end_with_parent() -> None:
    """In a forked worker: end as soon as the process that forked it is gone. A parent killed by
    SIGKILL cannot stop its workers, and one waiting for work, or working on for nobody, would
    otherwise outlive it."""
    import multiprocessing

    # the pid the parent recorded before forking: it may be gone before this runs
    forked_by = multiprocessing.parent_process()
    parent = os.getppid() if forked_by is None else forked_by.pid

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.25)
        os._exit(1)

    try:
        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    except RuntimeError:  # no memory for its stack: the worker still works, as the pool may tell
        pass


def _call(item: Any) -> Any:
    assert _worker_function is not None
    return _worker_function(item)


def ordered_map(
    function: Callable[[Any], Result],
    items: Iterable[Any],
    workers: int | None = None,
    weight: Callable[[Any], int] | None = None,
) -> Iterator[Result]:
    """Yield function(item) for each item, in order, computed in `workers` processes.

    With one worker (or no fork on this platform) it runs in this process. With `weight`, the
    items go to the workers in batches of consecutive items (up to BATCH_ITEMS of them, or
    BATCH_WEIGHT of their weight): one round trip per batch, not per item, so many small items
    (reads, short documents) are not all process overhead, and one heavy item goes alone.

    >>> list(ordered_map(len, ["a", "bb"], workers=2))
    [1, 2]
    """
    global _worker_function
    workers = workers or default_workers()
    if weight is not None and workers > 1:
        for results in ordered_map(partial(_call_each, function), _batches(items, weight), workers):
            yield from results
        return
    iterator = iter(items)
    head = [item for _, item in zip(range(2), iterator)]
    if workers <= 1 or len(head) < 2 or not fork_available():
        for item in head:
            yield function(item)
        for item in iterator:
            yield function(item)
        return
    if _worker_function is not None:
        raise RuntimeError("ordered_map does not nest")
    _worker_function = function  # inherited by the forked workers
    # an executor, not multiprocessing.Pool: a Pool waits forever for the item of a worker that died
    # (out of memory, killed); an executor reports it
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = _started(
        ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_end_with_parent)
    )
    finished = False
    try:
        pending: deque[Future[Result]] = deque()
        for item in itertools.chain(head, iterator):
            pending.append(pool.submit(_call, item))
            if len(pending) >= 2 * workers:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
        finished = True
    finally:
        _worker_function = None
        # after an error, do not wait for items in flight: the command line ends what is left
        pool.shutdown(wait=finished, cancel_futures=True)


def _started(pool: "ProcessPoolExecutor") -> "ProcessPoolExecutor":
    """The pool with its workers started (a pool starts them all at its first task). If starting
    fails part way (too many open files), the workers already started wait for work that nothing
    will send, and the interpreter's exit would wait for them forever: they are killed. Once
    started, the pool's own thread ends them (killing one that is sending a result would leave
    that thread reading the rest forever)."""
    import multiprocessing

    earlier = set(multiprocessing.active_children())
    try:
        pool.submit(int)
    except BaseException:
        for process in set(multiprocessing.active_children()) - earlier:
            process.kill()  # not SIGTERM, which a worker just forked may still have a Python handler for
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    return pool


def _call_each(function: Callable[[Any], Result], batch: list[Any]) -> list[Result]:
    return [function(item) for item in batch]


def _batches(items: Iterable[Any], weight: Callable[[Any], int]) -> Iterator[list[Any]]:
    """Consecutive items in lists of at most BATCH_ITEMS, closed once they weigh BATCH_WEIGHT."""
    batch: list[Any] = []
    total = 0
    for item in items:
        batch.append(item)
        total += weight(item)
        if len(batch) >= BATCH_ITEMS or total >= BATCH_WEIGHT:
            yield batch
            batch = []
            total = 0
    if batch:
        yield batch


def _result(future: "Future[Result]") -> Result:
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        raise MemoryError("a worker process died (out of memory, or killed)") from None


def shared_map(
    function: Callable[[Any], Result],
    items: Iterable[Any],
    workers: int | None = None,
    here: Callable[[Any], Result] | None = None,
) -> Iterator[Result]:
    """Yield function(item) for each item, in no set order, computed here and in `workers - 1`
    forked processes: this process takes an item itself whenever those have enough queued.
    `here`, if given, is what this process calls instead of `function` on the items it takes
    (say, one that adds into a total it holds rather than returning a copy to add).

    For work whose results add up in any order (counting). Fewer processes than `ordered_map`
    for the same cores, so less memory: a forked process's resident size starts at its
    parent's. The first item is computed here before anything is forked, so what `function`
    builds on first use is inherited, and a single item forks nothing.
    """
    global _worker_function
    workers = workers or default_workers()
    local = here or function
    iterator = iter(items)
    for item in itertools.islice(iterator, 1):
        yield local(item)
    head = list(itertools.islice(iterator, 1))
    if workers <= 1 or not head or not fork_available():
        for item in itertools.chain(head, iterator):
            yield local(item)
        return
    if _worker_function is not None:
        raise RuntimeError("shared_map does not nest")
    _worker_function = function
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = _started(
        ProcessPoolExecutor(workers - 1, mp_context=multiprocessing.get_context("fork"), initializer=_end_with_parent)
    )
    finished = False
    try:
        pending: deque[Future[Result]] = deque()
        for item in itertools.chain(head, iterator):
            if len(pending) < 2 * (workers - 1):
                pending.append(pool.submit(_call, item))
            else:
                yield local(item)
            while pending and pending[0].done():
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
        finished = True
    finally:
        _worker_function = None
        # after an error, do not wait for items in flight: the command line ends what is left
        pool.shutdown(wait=finished, cancel_futures=True)


def claimed_map(
    function: Callable[[Any], int],
    items: Sequence[Any],
    workers: int,
    handover: Callable[[], Result],
    progress: Callable[[int], object] | None = None,
) -> list[Result]:
    """Call function(item) once for each item, here and in `workers - 1` processes forked first,
    each claiming the next item from a shared counter whenever it is free; then return what
    `handover()` gives in each forked process. For work that each process folds into state of its
    own (counts), handed over once at the end: no item or result crosses between processes on the
    way, and no pool thread competes with the work for the interpreter lock (an executor's did,
    and kept its worker waiting for items half the time). `function` returns the size of the work
    done, summed across processes into `progress` as this process goes."""
    import multiprocessing

    context = multiprocessing.get_context("fork") if fork_available() else None
    if workers <= 1 or len(items) < 2 or context is None:
        for item in items:
            size = function(item)
            if progress is not None:
                progress(size)
        return []
    claimed: Any = context.Value("q", 0)  # the next item to claim
    done: Any = context.Value("q", 0)  # the sizes that `function` returned, summed
    receivers = []
    processes = []
    for _ in range(min(workers, len(items)) - 1):
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_claim_and_hand_over, args=(function, items, claimed, done, handover, sender))
        process.start()
        sender.close()
        receivers.append(receiver)
        processes.append(process)
    reported = 0
    try:
        while (index := _claim(claimed, len(items))) is not None:
            size = function(items[index])
            with done.get_lock():
                done.value += size
            if progress is not None:
                progress(done.value - reported)
                reported = done.value
        results = [WorkerPool._receive(receiver) for receiver in receivers]
    except BaseException:
        for process in processes:  # they would wait to hand over what nobody reads now
            process.terminate()
        raise
    finally:
        for process in processes:
            process.join()
    if progress is not None:
        progress(done.value - reported)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def _claim(claimed: Any, count: int) -> int | None:
    with claimed.get_lock():
        index: int = claimed.value
        if index >= count:
            return None
        claimed.value = index + 1
    return index


def _claim_and_hand_over(
    function: Callable[[Any], int],
    items: Sequence[Any],
    claimed: Any,
    done: Any,
    handover: Callable[[], Any],
    connection: Any,
) -> None:
    """A claimed_map worker: the items it claims, then its handover (or the exception raised)."""
    _end_with_parent()
    try:
        while (index := _claim(claimed, len(items))) is not None:
            size = function(items[index])
            with done.get_lock():
                done.value += size
        result: Any = handover()
    except BaseException as error:  # sent to the parent, which raises it
        with claimed.get_lock():
            claimed.value = len(items)
        result = error
    connection.send(result)


def _serve(function: Callable[[list[Any]], list[Any]], connection: Any, int_lists: bool) -> None:
    """A WorkerPool process: for each list of items received, send back the list of results
    (or the exception raised); None ends it."""
    _end_with_parent()
    while True:
        items = connection.recv()
        if items is None:
            return
        try:
            results: Any = function(items)
            if int_lists:  # no int object per id on either side, nor pickled one by one
                results = pack_id_lists(results)
        except BaseException as error:  # sent to the parent, which raises it
            results = error
        connection.send(results)


class WorkerPool:
    """Forked workers that live across calls, so state they build (a tokenizer's chunk cache)
    stays warm from one batch to the next. The function is handed over by fork, never pickled;
    it takes a list of items and gives their results in order (so it may group the work, as
    encoding joins short documents). As in `shared_map`, this process works too: `workers`
    cores take `workers - 1` forked processes. Each call cuts the items into `workers` contiguous
    shares of about equal weight (this process's lighter, HERE_SHARE), sends each forked process
    its share in one message (from a short-lived thread) and computes the first share itself: no
    pool threads compete with the work for the interpreter lock. The pool keeps no reference to
    the function (each call is handed it again), so an owner that the function refers to can
    still be garbage-collected, and close the pool from a finalizer."""

    def __init__(self, function: Callable[[list[Any]], list[Any]], workers: int, int_lists: bool = False) -> None:
        """`int_lists`: each result is a list of ids (ints in 0..2^31 - 1), which then travel
        back packed (`engine.pack_id_lists`)."""
        self.workers = workers
        self.int_lists = int_lists
        self.boxes: list[object] = []  # the ints that unpacked ids are written as, made on first use
        self.owner = os.getpid()  # the workers are this process's: a process forked from it has none
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.connections: list[Any] = []
        self.processes: list[Any] = []
        for _ in range(max(1, workers - 1)):
            ours, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(function, theirs, int_lists), daemon=True)
            process.start()
            theirs.close()
            self.connections.append(ours)
            self.processes.append(process)

    def map(
        self, function: Callable[[list[Any]], list[Any]], items: Sequence[Any], weights: Sequence[int] | None = None
    ) -> list[Any]:
        """The results of `items`, in order, `function` being the one the workers were forked with
        (this process runs it on its own share); `weights` (default: 1 each) balance the shares."""
        shares = weighted_shares(len(items), weights, len(self.connections) + 1, HERE_SHARE)
        # sent from a thread: a pipe takes a share only as fast as its worker reads it, and this
        # process starts on its own share meanwhile (the thread holds the interpreter lock only
        # between writes)
        sender = threading.Thread(target=self._send, args=(items, shares[1:]))
        sender.start()
        try:
            results = function(list(items[shares[0][0] : shares[0][1]]))
        finally:  # the other shares' results are read even after an error here, so none is left for the next call
            sender.join()
            received = [self._receive(connection) for connection in self.connections]
        for share in received:
            if isinstance(share, BaseException):
                raise share
            results.extend(self._unpacked(share) if self.int_lists else share)
        return results

    def _unpacked(self, packed: bytes) -> list[list[int]]:
        if not self.boxes:
            self.boxes = list(range(BOXED_IDS))
        return unpack_id_lists(packed, self.boxes)

    def _send(self, items: Sequence[Any], shares: list[tuple[int, int]]) -> None:
        for connection, (start, end) in zip(self.connections, shares):
            connection.send(list(items[start:end]))

    @staticmethod
    def _receive(connection: Any) -> Any:
        try:
            return connection.recv()
        except EOFError:
            raise MemoryError("a worker process died (out of memory, or killed)") from None

    def owned(self) -> bool:
        """Whether the workers are this process's (not a parent's, inherited by a fork)."""
        return os.getpid() == self.owner

    def close(self) -> None:
        """End the workers; in a process forked from the owner, nothing (they are the owner's)."""
        if not self.owned():
            return
        for connection, process in zip(self.connections, self.processes):
            try:
                connection.send(None)
            except OSError:
                pass
            connection.close()
            process.join(timeout=1)
            if process.is_alive():
                process.terminate()


def weighted_shares(count: int, weights: Sequence[int] | None, parts: int, first: float = 1.0) -> list[tuple[int, int]]:
    """`parts` contiguous (start, end) ranges of range(count), of about equal total weight, except
    the first, which weighs `first` times as much as each of the others."""
    totals = list(itertools.accumulate(weights if weights is not None else [1] * count))
    whole = totals[-1] if totals else 0
    shares: list[tuple[int, int]] = []
    start = 0
    for part in range(1, parts + 1):
        boundary = whole * (first + part - 1) / (first + parts - 1)
        end = count if part == parts else max(start, bisect.bisect_left(totals, boundary) + 1)
        end = min(end, count)
        shares.append((start, end))
        start = end
    return shares
