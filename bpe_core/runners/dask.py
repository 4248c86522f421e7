"""Counting and encoding on a Dask cluster, with the same counts, merges and ids as one machine.

This module plans the tasks, submits them and gathers their results; the work of each task is a
function the caller hands in (`training.count_task`, `corpus.shards.SHARD_TASKS`), so the runner knows
nothing about plans or tokenizers, and Dask pickles those functions by name to the workers.

Counting: the input files are planned into tasks on the client from their names and sizes alone
(a large plain file becomes byte ranges on a grid, which the reader aligns to places where no
chunk can cross; small files are grouped). Each task runs the same reader, normalizers and
pretokenizer as a local run and returns a Counts; counts are summed on the workers in a tree as
tasks finish, and only the final sum (unique chunks, never text) comes back to the client.
Encoding: one task per input file writes that file's shard. Dask retries the tasks of a lost
worker; tasks are pure (outputs are written atomically), so a retry is harmless.

dask.distributed is optional (`pip install "bpe-core[dask]"`) and imported only here.
"""

import contextlib
import hashlib
import json
import logging
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.config import RunnerConfig
from bpe_core.contract import Reader, ReadsRanges
from bpe_core.counts import Counts, sum_counts
from bpe_core.errors import BpeError
from bpe_core.files import reader_files
from bpe_core.plugins import registry
from bpe_core.runners.local import default_workers

INSTALL = 'runner kind dask needs dask.distributed, which is not installed: pip install "bpe-core[dask]"'
GROUP_FILES = 256  # at most this many small files per counting task
TASKS_PER_SLOT = 4  # ranges are made smaller than runner.range_bytes until each worker thread gets this many
MIN_RANGE_BYTES = 1 << 20
CONNECT_SECONDS = 10  # how long reaching the scheduler may take before that is an error


@dataclass(frozen=True)
class Task:
    """Files counted whole (step 0), or the byte range of one file at grid point `start`."""

    paths: tuple[str, ...]
    size: int  # bytes, for progress
    start: int = 0
    step: int = 0

    def describe(self) -> str:
        if self.step:
            return f"{self.paths[0]} (bytes from {self.start})"
        return self.paths[0] if len(self.paths) == 1 else f"{self.paths[0]} and {len(self.paths) - 1} more files"


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise BpeError(INSTALL) from None
    return distributed


@contextlib.contextmanager
def connect(runner: RunnerConfig, progress: bool | None) -> Iterator[Any]:
    """A Client for the runner's scheduler, or for a local cluster started here and closed after.

    Losing the scheduler while the work runs is one BpeError, raised as soon as the connection
    closes; distributed's own log lines about it are kept quiet, since that error says it all."""
    distributed = _distributed()
    with _quiet_logs():
        if runner.address:
            try:
                _handshake(runner.address)
                client = distributed.Client(runner.address, timeout=f"{CONNECT_SECONDS}s")
            except (OSError, TimeoutError) as error:
                reason = str(error) or "no answer"
                raise BpeError(
                    f"cannot reach the Dask scheduler at {runner.address} (waited {CONNECT_SECONDS} s): {reason}"
                ) from None
            with client, _scheduler_loss(client, runner.address):
                yield client
            return
        workers = runner.workers or default_workers()
        with (
            distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, silence_logs=logging.CRITICAL
            ) as cluster,
            distributed.Client(cluster) as client,
            _scheduler_loss(client, cluster.scheduler_address),
        ):
            if progress is not False:
                print(
                    f"dask: local cluster of {workers} worker processes, dashboard {client.dashboard_link}",
                    file=sys.stderr,
                )
            yield client


def _handshake(address: str) -> None:
    """Raise unless a Dask scheduler at `address` answers within CONNECT_SECONDS. distributed's
    own timeout bounds the TCP connection but not the handshake after it: a port that accepts and
    never answers (another service, a stopped scheduler) would hang a Client forever. The
    connection is tried on an event loop of its own, in a thread, whatever loop the caller runs."""
    import asyncio  # here: it imports concurrent.futures, which encoding one line does without

    distributed = _distributed()
    failures: list[BaseException] = []

    async def greet() -> None:
        comm = await distributed.comm.connect(address, timeout=CONNECT_SECONDS)
        await comm.close()

    def attempt() -> None:
        try:
            asyncio.run(asyncio.wait_for(greet(), CONNECT_SECONDS))
        except Exception as error:  # handed to the caller's thread
            failures.append(error)

    thread = threading.Thread(target=attempt, name="bpe-dask-handshake", daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS + 1)
    if thread.is_alive():
        raise TimeoutError("no answer")
    if failures:
        raise failures[0]


@contextlib.contextmanager
def _scheduler_loss(client: Any, address: str) -> Iterator[None]:
    """Errors that come of the scheduler going away (futures cancelled under us, closed
    connections, calls on a client that is reconnecting) become one BpeError."""
    try:
        yield
    except BpeError:
        raise
    except Exception as error:
        if client.status == "running" and not isinstance(error, (SchedulerLost, *_lost_types())):
            raise
        raise BpeError(lost_scheduler(address)) from None


class SchedulerLost(Exception):
    """A result was cancelled because the client lost the scheduler."""


def lost_scheduler(address: str) -> str:
    import dask  # installed with distributed, which is imported by now

    silence = dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.tcp"))
    return (
        f"lost the Dask scheduler at {address} in the middle of the run (it stopped, or the network to it "
        f"was silent for {silence:g} s); no output was written"
    )


def _lost_types() -> tuple[type[BaseException], ...]:
    """distributed's errors for a connection that closed or a future cancelled with it."""
    distributed = _distributed()
    return (distributed.client.FutureCancelledError, distributed.comm.CommClosedError)


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    """distributed logs connection trouble (with tracebacks) to stderr; the errors raised here say
    what happened once, so its loggers are silenced while the runner uses it, then restored."""
    names = [name for name in list(logging.root.manager.loggerDict) if name.split(".")[0] in ("distributed", "tornado")]
    loggers = [logging.getLogger(name) for name in ["distributed", *names]]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def check_workers(client: Any, components: Sequence[tuple[str, str]]) -> None:
    """Each worker can build each component (kind, name) that the tasks build: a worker without a
    plugin the work needs is named with the plugin, before any task runs there."""
    if not components:
        return
    plugins = registry()
    reports = client.run(missing_components, list(components))
    for worker, missing in sorted(reports.items()):
        for kind, name, reason in missing:
            plugin = plugins.plugin_of(kind, name)
            raise BpeError(
                f"Dask worker {worker} cannot load plugin {plugin!r}, which provides the {kind} {name!r}: {reason}; "
                "install the plugin on every worker"
            )


def missing_components(components: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """On a worker: the components (kind, name) that this process's plugins do not provide, each
    with the reason."""
    try:
        plugins = registry()
    except BpeError as error:  # a plugin installed here fails to import
        return [(kind, name, str(error)) for kind, name in components]
    return [
        (kind, name, "no plugin installed there provides it")
        for kind, name in components
        if name not in plugins.names(kind)
    ]


def plan_tasks(reader: Reader, paths: list[str], range_bytes: int, slots: int = 1, absolute: bool = True) -> list[Task]:
    """Counting tasks for the inputs, from file names and sizes only, enough to keep `slots`
    worker threads busy. Paths are absolute (a worker's working directory is not the client's),
    or as given if not `absolute` (processes forked here)."""
    files = reader_files(reader, paths)
    sizes = [(path, os.path.getsize(path)) for path in (map(os.path.abspath, files) if absolute else files)]
    range_bytes = range_step(sum(size for _, size in sizes), range_bytes, slots)  # (a file named twice counts twice)
    tasks: list[Task] = []
    group: list[str] = []
    group_size = 0

    def flush() -> None:
        nonlocal group, group_size
        if group:
            tasks.append(Task(tuple(group), group_size))
            group = []
            group_size = 0

    for path, size in sizes:
        if size > range_bytes and isinstance(reader, ReadsRanges) and reader.splittable(path):
            flush()
            tasks.extend(
                Task((path,), min(range_bytes, size - start), start, range_bytes)
                for start in range(0, size, range_bytes)
            )
            continue
        group.append(path)
        group_size += size
        if group_size >= range_bytes or len(group) >= GROUP_FILES:
            flush()
    flush()
    return tasks


def range_step(total_bytes: int, range_bytes: int, slots: int) -> int:
    """Byte ranges of at most `range_bytes`, smaller until each worker thread gets a few tasks."""
    return min(range_bytes, max(MIN_RANGE_BYTES, -(-total_bytes // (TASKS_PER_SLOT * slots))))


def report_of(result: tuple[Counts, str]) -> str:
    """What the client needs of a finished counting task: the reader's warnings."""
    return result[1]


def counts_of(result: tuple[Counts, str]) -> Counts:
    return result[0]


# client side -----------------------------------------------------------------------------------


def _failure(future: Any, task: Task | None) -> Exception:
    """The error of a future that did not finish: its task's error, or the scheduler's loss."""
    if future.status == "cancelled":  # by the client, when its connection to the scheduler closed
        return SchedulerLost()
    error = future.exception()
    if isinstance(error, BpeError):
        return BpeError(str(error))
    where = f" on {task.describe()}" if task is not None else ""
    return BpeError(f"a Dask task failed{where}: {type(error).__name__}: {error}")


CountTask = Callable[[str, Task], tuple[Counts, str]]


def count_on_dask(
    config: dict[str, Any],
    reader: Reader,
    paths: list[str],
    runner: RunnerConfig,
    progress: bool | None,
    count_task: CountTask,
    components: Sequence[tuple[str, str]] = (),
) -> Counts:
    """Count the inputs on a Dask cluster: `count_task(config as JSON, task)` counts one task's
    input as a local run would and returns its counts and the reader's warnings. The same Counts
    as counting locally. `components` are the (kind, name) of the components a task builds, which
    each worker must have a plugin for."""
    distributed = _distributed()
    config_json = json.dumps(config, sort_keys=True)
    files = reader_files(reader, paths)
    with connect(runner, progress) as client:
        check_workers(client, components)
        tasks = plan_tasks(reader, paths, runner.range_bytes, sum(client.nthreads().values()) or 1)
        bar = progress_bars.bar(progress, "counting", total=sum(task.size for task in tasks), unit="B", unit_scale=True)
        results = [client.submit(count_task, config_json, task, pure=False) for task in tasks]
        reports = {client.submit(report_of, result, pure=False): task for task, result in zip(tasks, results)}
        counted = {client.submit(counts_of, result, pure=False): task for task, result in zip(tasks, results)}
        del results
        waiting = distributed.as_completed(list(reports) + list(counted))
        pairs: list[Any] = []  # a count (or a sum of counts) waiting for a partner
        parts_left = Counter(path for task in tasks for path in task.paths)  # a file is done when all its ranges are
        files_done = 0
        try:
            for future in waiting:
                if future.status != "finished":
                    raise _failure(future, reports.get(future) or counted.get(future))
                task = reports.pop(future, None)
                if task is not None:
                    for line in future.result().splitlines():
                        bar.write(line, file=sys.stderr)
                    parts_left.subtract(task.paths)
                    files_done += sum(1 for path in task.paths if parts_left[path] == 0)
                    bar.set_postfix_str(f"{files_done}/{len(files)} files", refresh=False)
                    bar.update(task.size)
                    continue
                counted.pop(future, None)
                pairs.append(future)
                if len(pairs) == 2:  # summed on a worker: counts never gather on the client
                    waiting.add(
                        client.submit(sum_counts, [("counts", pairs[0]), ("counts", pairs[1])], True, pure=False)
                    )
                    pairs = []
            total: Counts = pairs[0].result()
        except BaseException:
            client.cancel(list(reports) + list(counted) + pairs)
            raise
        finally:
            bar.close()
    given = {os.path.abspath(path): path for path in files}  # inputs named as given, in input order
    for item in total.inputs:
        item["path"] = given.get(item["path"], item["path"])
    order = {path: index for index, path in enumerate(files)}
    total.inputs.sort(key=lambda item: order.get(item["path"], len(order)))
    return total


@dataclass(frozen=True)
class ShardTasks:
    """The functions a Dask run of `bpe encode -o DIR/` submits, module-level so that they pickle by
    name: `whole(tokenizer data, digest, path, shard path, options)` encodes a file into its
    shard, `part(tokenizer data, digest, path, start, step, part path, options)` a byte range into
    a part, `join(part paths, shard path, options, fragments, parts)` joins the parts, and
    `part_path(shard path, start)` names a part."""

    whole: Callable[..., Any]
    part: Callable[..., tuple[int, int]]
    join: Callable[..., Any]
    part_path: Callable[[str, int], str]


def encode_on_dask(
    data: dict[str, Any],
    reader: Reader,
    files: list[str],
    shard_paths: list[str],
    options: Any,
    runner: RunnerConfig,
    progress: bool | None,
    tasks: ShardTasks,
    whole_files: bool = False,
    components: Sequence[tuple[str, str]] = (),
) -> list[Any]:
    """Encode each file into its shard on the cluster, with the tokenizer whose file content is
    `data`; what `tasks.whole` (or `tasks.join`) returns per file, in order.

    A large file that the reader can read in ranges is encoded in byte ranges (as counting splits
    it) into parts that a last task joins, unless `whole_files`. `components` are as for
    `count_on_dask`."""
    distributed = _distributed()
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()
    sizes = [os.path.getsize(path) for path in files]
    ranged = reader if isinstance(reader, ReadsRanges) and not whole_files else None
    with (
        connect(runner, progress) as client,
        progress_bars.bar(progress, "encoding", total=sum(sizes), unit="B", unit_scale=True) as bar,
    ):
        check_workers(client, components)
        slots = sum(client.nthreads().values()) or 1
        step = range_step(sum(sizes), runner.range_bytes, slots)
        shared = client.scatter(data, broadcast=True, hash=False)
        finals: dict[Any, tuple[int, int]] = {}  # the future that ends a file's shard -> (position, bytes it encoded)
        ranges: dict[Any, tuple[str, int]] = {}  # a range's future -> (file, bytes)
        for position, (path, shard) in enumerate(zip(map(os.path.abspath, files), map(os.path.abspath, shard_paths))):
            if ranged is None or sizes[position] <= step or not ranged.splittable(path):
                finals[client.submit(tasks.whole, shared, digest, path, shard, options, pure=False)] = (
                    position,
                    sizes[position],
                )
                continue
            starts = range(0, sizes[position], step)
            parts = [tasks.part_path(shard, start) for start in starts]
            encoded = [
                client.submit(tasks.part, shared, digest, path, start, step, part, options, pure=False)
                for start, part in zip(starts, parts)
            ]
            ranges.update(
                (future, (path, min(step, sizes[position] - start))) for future, start in zip(encoded, starts)
            )
            join = client.submit(tasks.join, parts, shard, options, ranged.range_fragments, encoded, pure=False)
            finals[join] = (position, 0)
        results: list[Any] = [None] * len(files)
        done = 0
        try:
            for future in distributed.as_completed(list(ranges) + list(finals)):
                if future.status != "finished":
                    name = ranges[future][0] if future in ranges else files[finals[future][0]]
                    raise _failure(future, Task((name,), 0))
                if future in ranges:
                    bar.update(ranges[future][1])
                    continue
                position, encoded_bytes = finals[future]
                results[position] = future.result()
                done += 1
                bar.set_postfix_str(f"{done}/{len(files)} files", refresh=False)
                bar.update(encoded_bytes)
        except BaseException:
            client.cancel(list(ranges) + list(finals))
            raise
    return results
