"""Counting packed chunks: the engine's ChunkCounts against a Counter, the text kernel against the
scanner's split, and training's packed counting against the chunk-by-chunk path it replaces."""

import gzip
import os
import time
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from helpers.paths import BENCHMARK_TEXTS, DOCS_PATH, require
from hypothesis import given
from hypothesis import strategies as st

from bpe_core.chunking import count_chunks, count_packed
from bpe_core.engine import PADDING, ChunkCounts
from bpe_core.packing import count_documents
from bpe_core.plugins import registry
from bpe_core.runners.local import claimed_map, shared_map

PATTERN_NAMES = ("gpt2", "cl100k", "o200k")


@cache
def docs_text() -> str:
    with gzip.open(DOCS_PATH, "rt", encoding="utf-8") as handle:
        return handle.read()


def counted(keys: list[bytes]) -> ChunkCounts:
    """The keys added to a table as ranges of one buffer, as the text kernel adds them."""
    buffer = b"".join(keys) + PADDING
    table = ChunkCounts()
    start = 0
    for key in keys:
        table.add(buffer, start, start + len(key), 1)
        start += len(key)
    return table


# keys of every length around the 8-byte words, sharing prefixes so that probes meet near misses
near_misses = [b"a" * n for n in range(18)] + [b"\x00" * n for n in range(10)]
keys_strategy = st.lists(st.one_of(st.binary(max_size=20), st.sampled_from(near_misses)), max_size=300)


@pytest.mark.both_modes
@given(keys=keys_strategy)
def test_chunk_counts_count_each_key_as_a_counter_does(keys: list[bytes]) -> None:
    table = counted(keys)
    assert table.items() == dict(Counter(keys))
    assert table.size() == len(set(keys))


@pytest.mark.both_modes
@given(first=keys_strategy, second=keys_strategy)
def test_serialized_tables_add_up_to_the_counts_of_both(first: list[bytes], second: list[bytes]) -> None:
    total = counted(first)
    total.add_serialized(counted(second).serialized())
    assert total.items() == dict(Counter(first) + Counter(second))
    empty = ChunkCounts()
    empty.add_serialized(ChunkCounts().serialized())
    assert empty.items() == {}


def test_chunk_counts_grow_past_their_first_capacity() -> None:
    keys = [str(number).encode() for number in range(20000)] * 2
    assert counted(keys).items() == {key: 2 for key in keys[:20000]}


@pytest.mark.parametrize("name", PATTERN_NAMES)
def test_packed_counting_counts_the_utf8_bytes_of_the_scanners_chunks_on_the_docs(name: str) -> None:
    pretokenizer = registry().pretokenizer(name, {})
    text = docs_text()
    table = ChunkCounts()
    count_documents(table, pretokenizer, [text])  # type: ignore[arg-type]
    expected = Counter(chunk.encode("utf-8") for chunk in pretokenizer.split(text))
    assert table.items() == dict(expected)


@pytest.mark.parametrize("path", BENCHMARK_TEXTS, ids=lambda path: path.name.split(".")[1])
def test_packed_counting_counts_the_utf8_bytes_of_the_scanners_chunks_in_japanese_and_german(path: Path) -> None:
    """Runs of characters of two, three and four bytes, and ASCII between them (`ByteOffsets`)."""
    text = gzip.open(require(path), "rt", encoding="utf-8").read()[:200_000]
    for name in PATTERN_NAMES:
        pretokenizer = registry().pretokenizer(name, {})
        table = ChunkCounts()
        count_documents(table, pretokenizer, [text])  # type: ignore[arg-type]
        assert table.items() == dict(Counter(chunk.encode("utf-8") for chunk in pretokenizer.split(text)))


@pytest.mark.both_modes
@given(
    text=st.text(
        st.one_of(
            st.characters(codec="utf-8"),
            st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
            st.sampled_from(" \n'sé中😀1"),
        ),
        max_size=80,
    ),
    name=st.sampled_from(PATTERN_NAMES + ("whitespace",)),
)
def test_packed_counting_equals_encoding_each_split_chunk(text: str, name: str) -> None:
    pretokenizer = registry().pretokenizer(name, {})
    table = ChunkCounts()
    count_documents(table, pretokenizer, [text])  # type: ignore[arg-type]
    expected = Counter(chunk.encode("utf-8", "surrogatepass") for chunk in pretokenizer.split(text))
    assert table.items() == dict(expected)


@pytest.mark.parametrize("workers", [1, 2])
def test_packed_counting_in_workers_equals_counting_chunk_by_chunk(workers: int) -> None:
    pretokenizer = registry().pretokenizer("gpt2", {})
    # several batches of about a MiB, so that this process and a forked one both count
    documents = [docs_text()[start : start + 700_000] for start in range(0, 3_000_000, 700_000)]
    packed = count_packed(documents, pretokenizer, workers, False)
    by_chunk = count_chunks(documents, pretokenizer, workers, False)
    assert packed == {chunk.encode("utf-8"): times for chunk, times in by_chunk.items()}


def test_shared_map_yields_every_result_once_in_some_order() -> None:
    assert sorted(shared_map(lambda item: item * item, range(50), workers=2)) == [item * item for item in range(50)]
    assert list(shared_map(lambda item: item + 1, [1], workers=2)) == [2]
    assert list(shared_map(lambda item: item, [], workers=2)) == []


def test_claimed_map_calls_each_item_once_in_some_process_and_hands_over_the_rest() -> None:
    seen: list[int] = []  # each forked process appends to its own copy, empty when it forks

    def square(item: int) -> int:
        seen.append(item * item)
        return 1

    done: list[int] = []
    handed = claimed_map(square, list(range(200)), 3, lambda: list(seen), done.append)
    assert len(handed) == 2
    assert sorted(seen + handed[0] + handed[1]) == [item * item for item in range(200)]
    assert sum(done) == 200
    assert claimed_map(square, [7], 3, lambda: list(seen)) == []  # one item: no fork


def test_claimed_map_raises_an_error_of_a_worker_or_of_this_process() -> None:
    here = os.getpid()

    def fail_in(worker: bool):
        def check(item: int) -> int:
            if (os.getpid() != here) == worker:
                raise ValueError(f"item {item} in {'a worker' if worker else 'this process'}")
            time.sleep(0.001)  # so that both processes claim items
            return 1

        return check

    for worker in (True, False):
        where = "a worker" if worker else "this process"
        with pytest.raises(ValueError, match=f"in {where}"):
            claimed_map(fail_in(worker), list(range(300)), 2, lambda: None)
