"""Ordered parallel map over documents in worker processes (fork), for encoding batches."""

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from bpe_core.counting import default_workers

Result = TypeVar("Result")

_worker_function: Callable[[Any], Any] | None = None


def _call(item: Any) -> Any:
    assert _worker_function is not None
    return _worker_function(item)


def map_in_order(function: Callable[[Any], Result], items: Sequence[Any], workers: int | None) -> list[Result]:
    """[function(item) for item in items], spread over `workers` processes (default: all cores)."""
    global _worker_function
    workers = workers or default_workers()
    if workers <= 1 or len(items) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(item) for item in items]
    _worker_function = function  # inherited by the forked workers; no pickling of the tokenizer
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(items))) as pool:
            chunksize = max(1, len(items) // (workers * 8))
            return pool.map(_call, items, chunksize=chunksize)
    finally:
        _worker_function = None
