"""How a batch's work is shared between this process and forked workers, and how their ids come
back: ids packed by the engine (`pack_id_lists`, `unpack_id_lists`) come back equal and as the
int objects this process already holds; this process takes the smaller share (it also unpacks the
others'); the cyclic garbage collector is paused for the batch and left as it was found. That the
batch's ids equal `encode`'s, forked or not, is tests/test_tokenizer_api.py's.
"""

import gc
from pathlib import Path

import pytest
from helpers.processes import child_processes, wait_until_gone
from hypothesis import given
from hypothesis import strategies as st

import bpe_core
from bpe_core import batching
from bpe_core.batching import collector_paused
from bpe_core.engine import pack_id_lists, unpack_id_lists
from bpe_core.runners.local import HERE_SHARE, weighted_shares

pytestmark = pytest.mark.both_modes

LARGEST_ID = (1 << 31) - 1
id_lists = st.lists(st.lists(st.integers(0, LARGEST_ID) | st.integers(0, 300)), max_size=20)


@given(id_lists, st.integers(0, 400))
def test_packed_id_lists_unpack_to_equal_lists(lists: list[list[int]], boxed: int) -> None:
    assert unpack_id_lists(pack_id_lists(lists), list(range(boxed))) == lists


def test_an_unpacked_id_below_the_boxes_is_the_box_itself() -> None:
    boxes: list[object] = [int(str(value)) for value in range(70_000)]  # made here: no small-int cache
    unpacked = unpack_id_lists(pack_id_lists([[65_000, 1000], [65_000]]), boxes)
    assert unpacked == [[65_000, 1000], [65_000]]
    assert unpacked[0][0] is boxes[65_000] and unpacked[1][0] is boxes[65_000]
    assert unpacked[0][1] is boxes[1000]


@pytest.mark.parametrize("bad", [-1, 1 << 31, 1 << 40])
def test_packing_refuses_an_id_outside_31_bits(bad: int) -> None:
    with pytest.raises((ValueError, OverflowError)):
        pack_id_lists([[1, bad]])


@given(st.lists(st.integers(1, 50), min_size=1, max_size=300), st.integers(2, 5))
def test_shares_cover_the_items_in_order(weights: list[int], parts: int) -> None:
    shares = weighted_shares(len(weights), weights, parts, HERE_SHARE)
    assert len(shares) == parts
    assert shares[0][0] == 0 and shares[-1][1] == len(weights)
    assert all(earlier[1] == later[0] for earlier, later in zip(shares, shares[1:]))
    assert all(start <= end for start, end in shares)


def test_this_process_takes_a_smaller_share_than_each_worker() -> None:
    weights = [10] * 1000
    (first, second) = weighted_shares(len(weights), weights, 2, HERE_SHARE)
    assert first[1] - first[0] == pytest.approx(1000 * HERE_SHARE / (1 + HERE_SHARE), abs=1)
    assert first[1] - first[0] < second[1] - second[0]
    assert weighted_shares(len(weights), weights, 2) == [(0, 500), (500, 1000)]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_for_a_batch_and_left_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a batch that fails")
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()


@pytest.fixture(scope="module")
def small_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> bpe_core.Tokenizer:
    path: Path = tmp_path_factory.mktemp("batch") / "corpus.txt"
    path.write_text("the quick brown fox jumps over the lazy dog. " * 200, encoding="utf-8")
    return bpe_core.train({"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 300}}, [path], progress=False)


def test_a_text_batch_that_keeps_only_two_processes_busy_forks_none(
    small_tokenizer: bpe_core.Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batching, "MIN_CHARACTERS_PER_WORKER", 1)  # any text keeps every process busy
    documents = [f"document {index}: the lazy dog and the fox" for index in range(200)]
    expected = [small_tokenizer.encode_ordinary(document) for document in documents]
    small_tokenizer.close()
    before = child_processes()
    assert small_tokenizer.encode_ordinary_batch(documents, workers=2) == expected
    assert child_processes() <= before
    assert small_tokenizer.encode_ordinary_batch(documents, workers=batching.MIN_TEXT_PROCESSES) == expected
    workers = child_processes() - before
    assert len(workers) == batching.MIN_TEXT_PROCESSES - 1
    small_tokenizer.close()
    assert not wait_until_gone(workers)
