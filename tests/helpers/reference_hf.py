"""A plain-Python mirror of Hugging Face `tokenizers`' BpeTrainer (Rust), to check merges against.

Source mirrored: huggingface/tokenizers, tokenizers/src/models/bpe/trainer.rs
(`BpeTrainer::do_train`, `compute_alphabet`, `tokenize_words`, `count_pairs`, the `Merge` Ord
impl) and tokenizers/src/models/bpe/word.rs (`Word::merge`). Checked against the installed
`tokenizers` 0.23.3 (BpeTrainer via train_from_iterator, vocab and merges read from
tokenizer.json): identical on the Python docs (300 KB at vocab 1000/3000/6000/10000, the full
11 MB at 4096/8192, with and without special tokens, min_frequency 0/2/5/20/50/200,
max_token_length 2..16, limit_alphabet) and on thousands of random small corpora.

The Rust trainer is not "recount every round and take the best pair", but it is the same
thing in the usual setting: with no continuing_subword_prefix / end_of_word_suffix, a token
string can only ever be formed by one pair, so every merge rewrites every occurrence and the
queue machinery below changes nothing. Then the rule is simply: highest count, ties to the
smallest (left_id, right_id); when the string is already in the vocabulary (only possible
for a special token) the existing id is reused and the vocabulary does not grow. The
quirks below only matter once one string is formed by two different pairs (a prefix such
as "##" colliding with "#" characters in the text); they are reproduced on purpose:

* Priority: highest count first; on equal counts the lexicographically smallest
  (left_id, right_id) pair. Ids are: special tokens (in the given order), then the alphabet
  sorted by Unicode code point, then merged tokens in creation order.
* Lazy validation: a popped entry whose stored count differs from the live `pair_counts`
  value is re-pushed with the live count (and its old word set) and the loop continues.
* Merging a pair never decrements that pair's own count (Word::merge only reports the
  neighbouring pairs). The merged pair keeps a "phantom" count in `pair_counts` equal to the
  occurrences merged away (minus overlap decrements, e.g. `aaa`).
* A merged token whose string already exists reuses the existing id, the merge is still
  recorded, and the vocabulary does not grow. New occurrences of pairs involving that id then
  get pushed with `pair_counts` = phantom + new, and a pair can be merged (recorded) twice.
* Pushed entries carry only the words where the pair was newly formed (`where_to_update`),
  so a merge only rewrites the words of the entry that was popped.
* `max_token_length`: a newly formed pair is counted only if the merged symbol would hold
  strictly fewer than `max_token_length` characters (`<`, not `<=`); its later removal is
  still decremented, so such counts can go negative. Initial character pairs are never
  filtered.
* Stop: before each pop, stop when len(vocab) >= vocab_size (specials included); stop when
  the queue is empty; stop when the validated top count is < 1 or < min_frequency.
* The saved model keeps merges in a map pair -> (rank, id) built from the learned list, so a
  pair learned twice keeps only its *last* rank; tokenizer.json lists merges sorted by rank.

Not reproducible even in HF (HashMap iteration order is random per process): the ids of the
"##x" / "x</w>" strings when a prefix or suffix is set (pin them with `affix_token_order`),
which of two heap entries equal in (count, pair) pops first (only once a pair has two
entries, i.e. after a string was formed by two pairs), and limit_alphabet ties at the cut.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

I32_MIN = -(2**31)
I32_MOD = 2**32


def _wrap_i32(x: int) -> int:
    """Rust `i32` arithmetic (pair_counts is HashMap<Pair, i32>); wraps on overflow in release."""
    return (x - I32_MIN) % I32_MOD + I32_MIN


def _as_u64(x: int) -> int:
    """Rust `i32 as u64` (sign-extends negatives)."""
    return x % 2**64


@dataclass
class HFTrace:
    """Everything the trainer produced, before the model collapses duplicate merges."""

    vocab: dict[str, int]
    id_to_word: list[str]
    learned: list[tuple[tuple[int, int], int]]  # (pair of ids, new id) in learning order
    learned_counts: list[int]  # validated count of each learned merge
    reused: list[int] = field(default_factory=list)  # learned indices whose string existed

    def saved_merges(self) -> list[tuple[str, str]]:
        """Merges as tokenizer.json lists them: one per distinct pair, at its last rank."""
        rank: dict[tuple[int, int], int] = {}
        for i, (pair, _new_id) in enumerate(self.learned):
            rank[pair] = i  # HashMap::from_iter: a later insert overwrites the rank
        ordered = sorted(rank.items(), key=lambda kv: kv[1])
        return [(self.id_to_word[a], self.id_to_word[b]) for (a, b), _ in ordered]


def _compute_alphabet(
    word_counts: dict[str, int],
    initial_alphabet: Iterable[str],
    limit_alphabet: int | None,
    w2id: dict[str, int],
    id2w: list[str],
) -> None:
    usize_max = 2**64 - 1
    alphabet: dict[str, int] = {}
    for word, count in word_counts.items():
        for c in word:
            alphabet[c] = alphabet.get(c, 0) + count
    for s in initial_alphabet:
        # Rust field is HashSet<char>; the Python binding keeps the first char of each string
        # (checked: initial_alphabet=["xyz", "q"] adds "x" and "q").
        if s:
            alphabet[s[0]] = usize_max
    kept = list(alphabet.items())
    to_remove = 0
    if limit_alphabet is not None and len(alphabet) > limit_alphabet:
        to_remove = len(alphabet) - limit_alphabet
    if to_remove > 0:
        # Rust: sort_unstable_by_key(count) then drain the `to_remove` rarest. Ties between equal
        # counts are broken arbitrarily in Rust (HashMap order + unstable sort); we use code point.
        kept.sort(key=lambda kv: (kv[1], ord(kv[0])))
        kept = kept[to_remove:]
    kept.sort(key=lambda kv: ord(kv[0]))
    for c, _ in kept:
        if c not in w2id:
            id2w.append(c)
            w2id[c] = len(id2w) - 1


def _word_merge(
    syms: list[int], lens: list[int], c1: int, c2: int, repl: int, max_length: int
) -> list[tuple[tuple[int, int], int]]:
    """word.rs `Word::merge`, in place; returns the (pair, +-1) changes in Rust's order."""
    changes: list[tuple[tuple[int, int], int]] = []
    i = 0
    while i < len(syms):
        if syms[i] == c1 and i + 1 < len(syms) and syms[i + 1] == c2:
            first_c, second_c = syms[i], syms[i + 1]
            new_len = lens[i] + lens[i + 1]
            if i > 0:
                changes.append(((syms[i - 1], first_c), -1))
                if lens[i - 1] + new_len < max_length:
                    changes.append(((syms[i - 1], repl), 1))
            syms[i : i + 2] = [repl]
            lens[i : i + 2] = [new_len]
            if i < len(syms) - 1:
                changes.append(((second_c, syms[i + 1]), -1))
                if lens[i + 1] + new_len < max_length:
                    changes.append(((repl, syms[i + 1]), 1))
        i += 1
    return changes


def hf_train_trace(
    word_counts: dict[str, int],
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens: Iterable[str] = (),
    initial_alphabet: Iterable[str] = (),
    max_token_length: int | None = None,
    *,
    limit_alphabet: int | None = None,
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    affix_token_order: Iterable[str] | None = None,
) -> HFTrace:
    """`BpeTrainer::do_train` step by step; see the module docstring for the rules.

    `affix_token_order`: with a prefix or suffix, Rust gives the "##x" / "x</w>" strings ids in
    HashMap order (random per run, so HF itself is not reproducible then). Pass the order read
    back from a trained HF vocab (ids between the alphabet and the first merge) to pin it.
    """
    max_len = max_token_length if max_token_length is not None else 2**64 - 1
    w2id: dict[str, int] = {}
    id2w: list[str] = []

    # 1. special tokens, in the given order, skipping duplicates
    for tok in special_tokens:
        if tok not in w2id:
            id2w.append(tok)
            w2id[tok] = len(id2w) - 1

    # 2. alphabet, sorted by code point
    _compute_alphabet(word_counts, initial_alphabet, limit_alphabet, w2id, id2w)

    # 3. words -> symbol ids (chars missing from the alphabet are dropped). With a prefix or a
    # suffix, the new "##x" / "x</w>" strings get ids in Rust's HashMap iteration order
    # (random per process); here they follow affix_token_order, then word_counts' order.
    for s in affix_token_order or ():
        if s not in w2id:
            id2w.append(s)
            w2id[s] = len(id2w) - 1
    words: list[list[int]] = []
    lens: list[list[int]] = []
    counts: list[int] = []
    for word, count in word_counts.items():
        syms: list[int] = []
        n = len(word)
        for j, c in enumerate(word):
            if c not in w2id:
                continue
            s = c
            if j != 0 and continuing_subword_prefix is not None:
                s = continuing_subword_prefix + s
            if j == n - 1 and end_of_word_suffix is not None:
                s = s + end_of_word_suffix
            if s not in w2id:
                id2w.append(s)
                w2id[s] = len(id2w) - 1
            syms.append(w2id[s])
        words.append(syms)
        lens.append([1] * len(syms))  # Rust: current_word.add(id, 1)
        counts.append(count)

    # 4. count pairs (no max_token_length filter here)
    pair_counts: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for i, syms in enumerate(words):
        for a, b in zip(syms, syms[1:]):
            p = (a, b)
            pair_counts[p] = _wrap_i32(pair_counts.get(p, 0) + counts[i])
            where.setdefault(p, set()).add(i)

    # Heap entries: [-count, pair, seq, pos]. Rust's BinaryHeap is a max-heap on
    # (count, Reverse(pair)); entries equal on both are in unspecified order (seq here).
    heap: list[tuple[int, tuple[int, int], int, set[int]]] = []
    seq = 0
    for p, pos in where.items():
        cnt = pair_counts[p]
        if cnt > 0:
            heap.append((-cnt, p, seq, pos))
            seq += 1
    heapq.heapify(heap)
    where = {}

    learned: list[tuple[tuple[int, int], int]] = []
    learned_counts: list[int] = []
    reused: list[int] = []
    while True:
        if len(w2id) >= vocab_size:
            break
        if not heap:
            break
        neg, pair, _, pos = heapq.heappop(heap)
        top_count = -neg
        live = _as_u64(pair_counts[pair])
        if top_count != live:
            heapq.heappush(heap, (-live, pair, seq, pos))
            seq += 1
            continue
        if top_count < 1 or min_frequency > top_count:
            break

        part_a = id2w[pair[0]]
        part_b = id2w[pair[1]]
        if continuing_subword_prefix is not None and part_b.startswith(continuing_subword_prefix):
            part_b = part_b[len(continuing_subword_prefix) :]
        new_token = part_a + part_b
        if new_token in w2id:
            new_id = w2id[new_token]
            reused.append(len(learned))
        else:
            new_id = len(id2w)
            id2w.append(new_token)
            w2id[new_token] = new_id
        learned.append((pair, new_id))
        learned_counts.append(top_count)

        for iw in sorted(pos):
            for p, change in _word_merge(words[iw], lens[iw], pair[0], pair[1], new_id, max_len):
                pair_counts[p] = _wrap_i32(pair_counts.get(p, 0) + change * counts[iw])
                if change > 0:
                    where.setdefault(p, set()).add(iw)
        for p, wpos in where.items():
            cnt = pair_counts[p]
            if cnt > 0:
                heapq.heappush(heap, (-cnt, p, seq, wpos))
                seq += 1
        where = {}

    return HFTrace(dict(w2id), id2w, learned, learned_counts, reused)


def hf_train(
    word_counts: dict[str, int],
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens: Iterable[str] = (),
    initial_alphabet: Iterable[str] = (),
    max_token_length: int | None = None,
    **options: Any,
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """HF's saved vocab (token -> id) and merges (string pairs, in tokenizer.json order).

    `options` are passed to `hf_train_trace` (limit_alphabet, continuing_subword_prefix,
    end_of_word_suffix).
    """
    trace = hf_train_trace(
        word_counts,
        vocab_size,
        min_frequency,
        special_tokens,
        initial_alphabet,
        max_token_length,
        **options,
    )
    return trace.vocab, trace.saved_merges()
