"""`bpe trim` and `bpe_core.trim`: a smaller tokenizer with compact ids, on the Python docs.

- Trimming to N is training to N: a tokenizer trained (or trained, then continued) to V2 and
  trimmed to N has exactly the merges, counts, usage, ids and encodings of training to N in one
  go, for every tie rule, with special tokens at the end, at the start or none (hypothesis).
- `--drop` takes every merge built on a dropped token with it (checked against the merge trees
  of the real vocabulary); the `--map` file moves every kept id to the id of the same token; the
  result saves and loads losslessly, round-trips text, and its Hugging Face and tiktoken exports
  give its ids in `tokenizers` and tiktoken.
- `--min-count C --on FILES` drops the merged tokens that encoding FILES makes fewer than C
  times, counted independently here from the merge trees of the ids encoding gives.
- A published tiktoken vocabulary trimmed to N encodes like tiktoken with its first ranks.
- Every refusal is one `error:` line, exit status 2, and no file written.
"""

import hashlib
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from helpers.cli_runner import assert_fails_cleanly, assert_ok, run_bpe
from helpers.interop import assert_same_ids, published_vocabulary_path, read_ranks, tiktoken_encoding
from helpers.patterns import PUBLISHED_PATTERNS
from helpers.text import SPECIALS
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer

import bpe_core
from bpe_core.engine import TIE_RULES

SPECIAL_SETTINGS = ("none", "end", "start")
PROPERTY_CHARS = 40_000  # the property trains many times: a small slice of the docs
MERGES_V2 = 160
ASKED_TEXT = "in"  # a token with a deep family in the docs' vocabulary (ing, Ġin, Ġinstall, ...)


def config(tie_break: str, specials: str, vocab_size: int) -> dict:
    chosen = {"tokens": SPECIALS, "position": specials} if specials != "none" else {"tokens": []}
    return {
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": vocab_size, "tie_break": tie_break},
        "special_tokens": chosen,
    }


def special_count(specials: str) -> int:
    return 0 if specials == "none" else len(SPECIALS)


@pytest.fixture(scope="module")
def property_text(docs_text: str) -> str:
    return docs_text[:PROPERTY_CHARS]


@pytest.fixture(scope="module")
def held_out(docs_text: str) -> str:
    """Text none of the tokenizers here was trained on, with special tokens' strings in it."""
    paragraphs = [paragraph for paragraph in docs_text[600_000:640_000].split("\n\n") if paragraph.strip()]
    return "<|endoftext|>".join(paragraphs) + "<|pad|> tail"


@pytest.fixture(scope="module")
def trainer_of(property_text: str, tmp_path_factory: pytest.TempPathFactory):
    """train(tie_break, specials, vocab_size, continued_from=None): from the slice's counts, counted once;
    trainings to the largest size are kept (the property asks for them again and again)."""
    path = tmp_path_factory.mktemp("property") / "docs.txt"
    path.write_text(property_text, encoding="utf-8", newline="")
    counts = bpe_core.count(config("smallest", "none", 300), [path], workers=1, progress=False)

    @cache
    def train(tie_break: str, specials: str, vocab_size: int, continued_from: int | None = None) -> bpe_core.Tokenizer:
        base = train(tie_break, specials, continued_from) if continued_from is not None else None
        return bpe_core.train(config(tie_break, specials, vocab_size), counts=[counts], progress=False, base=base)

    return train


@pytest.mark.both_modes  # a property test, but its @given is inside (it uses module fixtures)
def test_trimming_to_n_gives_exactly_the_tokenizer_trained_to_n(trainer_of, held_out: str) -> None:
    @settings(max_examples=40)
    @given(
        tie_break=st.sampled_from(TIE_RULES),
        specials=st.sampled_from(SPECIAL_SETTINGS),
        continued=st.booleans(),
        merges=st.integers(0, MERGES_V2),
    )
    @example(tie_break="smallest", specials="end", continued=True, merges=MERGES_V2 // 4)  # specials between merges
    @example(tie_break="hf", specials="start", continued=True, merges=MERGES_V2)  # nothing dropped: only compacted
    @example(tie_break="largest", specials="none", continued=False, merges=0)  # no merges left
    def trimmed_is_trained(tie_break: str, specials: str, continued: bool, merges: int) -> None:
        minimum = 256 + special_count(specials)
        largest = minimum + MERGES_V2
        # continued: trained to V1, then on to V2 (the base's ids stay: specials at the end sit between the merges)
        trained = trainer_of(tie_break, specials, largest, minimum + MERGES_V2 // 2 if continued else None)
        trimmed, dropped, id_map = bpe_core.trim(trained, vocab_size=minimum + merges)
        one_go = trainer_of(tie_break, specials, minimum + merges)
        assert trimmed.spec.internal_merges == one_go.spec.internal_merges
        assert trimmed.merges == one_go.merges and trimmed.merged_ids() == one_go.merged_ids()
        assert trimmed.merge_counts == one_go.merge_counts
        assert trimmed.token_usage == one_go.token_usage
        assert trimmed.provenance["tokens"] == one_go.provenance["tokens"]
        assert trimmed.special_ids == one_go.special_ids and trimmed.vocab_size == one_go.vocab_size == minimum + merges
        assert trimmed.layout == one_go.layout
        assert trimmed.encode(held_out, allowed_special="all") == one_go.encode(held_out, allowed_special="all")
        assert len(dropped) == MERGES_V2 - merges and set(dropped.values()) <= {"beyond vocab_size"}
        # every kept id goes to the id of the same token
        assert len(id_map) == trimmed.vocab_size
        assert all(trained.token_symbols(old) == trimmed.token_symbols(new) for old, new in id_map.items())

    trimmed_is_trained()


# ---------------------------------------------------------------------------------------------
# --drop on a real vocabulary


@pytest.fixture(scope="module")
def base_and_unseen(workdir: Path, docs_slice_path: Path, docs_text: str) -> Path:
    """The module's directory holding tok.json (GPT-2 pattern, 1024 ids with two special tokens at
    the end, trained on the docs slice) and unseen.txt (200,000 characters of the docs after it)."""
    tokenizer = bpe_core.train(config("smallest", "end", 1024), [docs_slice_path], progress=False)
    tokenizer.save(workdir / "tok.json")
    (workdir / "unseen.txt").write_text(docs_text[400_000:600_000], encoding="utf-8", newline="")
    return workdir


@pytest.fixture(scope="module")
def base(base_and_unseen: Path) -> bpe_core.Tokenizer:
    return bpe_core.load(base_and_unseen / "tok.json")


def merge_trees(tokenizer: bpe_core.Tokenizer) -> dict[int, tuple[int, int]]:
    """merged id -> (left id, right id), from the public merges."""
    return dict(zip(tokenizer.merged_ids(), tokenizer.merges, strict=True))


def tree_tokens(token: int, parts: dict[int, tuple[int, int]]) -> list[int]:
    """The token and every token its merge tree holds, each as often as it occurs there."""
    if token not in parts:
        return [token]
    left, right = parts[token]
    return [token, *tree_tokens(left, parts), *tree_tokens(right, parts)]


@pytest.fixture(scope="module")
def dropped_by_cli(base_and_unseen: Path, base: bpe_core.Tokenizer) -> tuple[list[int], str]:
    """`bpe trim tok.json --drop in ID(Ġthe) -o trimmed.json --map map.tsv`: (asked ids, stderr)."""
    (the,) = base.encode(" the")
    (asked_in,) = base.encode(ASKED_TEXT)
    result = run_bpe(
        "trim", "tok.json", "--drop", ASKED_TEXT, the, "-o", "trimmed.json", "--map", "map.tsv", cwd=base_and_unseen
    )
    assert_ok(result)
    return [asked_in, the], result.stderr


def test_drop_takes_every_merge_built_on_a_dropped_token(
    dropped_by_cli: tuple[list[int], str], base: bpe_core.Tokenizer, base_and_unseen: Path
) -> None:
    asked, shown = dropped_by_cli
    parts = merge_trees(base)
    built_on = sorted(token for token in parts if set(tree_tokens(token, parts)) & set(asked))
    assert len(built_on) > 20  # "in" has a family: the closure is tested, not one token
    trimmed = bpe_core.load(base_and_unseen / "trimmed.json")
    kept = [token for token in base.regular_ids() if token not in built_on]
    assert [trimmed.token_bytes(token) for token in trimmed.regular_ids()] == [
        base.token_bytes(token) for token in kept
    ]
    assert trimmed.regular_ids() == list(range(len(kept)))  # compact: no gap where a token went
    assert [trimmed.special_ids[token] for token in SPECIALS] == [len(kept), len(kept) + 1]
    # what went is listed, one line each, the asked ones saying so
    lines = shown.splitlines()
    count = len(built_on)
    assert lines[0] == f"trimmed tok.json: dropped {count} merged tokens, vocab 1024 -> {1024 - count} -> trimmed.json"
    listed = [int(line.split()[0]) for line in lines[1:]]
    assert listed == built_on
    assert all(line.endswith("  asked") for line in lines[1:] if int(line.split()[0]) in asked)


def test_drop_map_file_moves_each_kept_id_to_the_same_token(
    dropped_by_cli: tuple[list[int], str], base: bpe_core.Tokenizer, base_and_unseen: Path
) -> None:
    trimmed = bpe_core.load(base_and_unseen / "trimmed.json")
    rows = [line.split("\t") for line in (base_and_unseen / "map.tsv").read_text(encoding="ascii").splitlines()]
    mapping = {int(old): int(new) for old, new in rows}
    assert len(mapping) == len(rows) == trimmed.vocab_size
    assert [int(new) for _, new in rows] == list(range(trimmed.vocab_size))  # one row per new id, in order
    assert all(base.token_symbols(old) == trimmed.token_symbols(new) for old, new in mapping.items())
    assert {mapping[base.special_ids[token]] for token in SPECIALS} == set(trimmed.special_ids.values())
    assert not set(mapping) & set(dropped_by_cli[0])


def test_drop_result_saves_and_loads_losslessly_and_round_trips_text(
    dropped_by_cli: tuple[list[int], str], base_and_unseen: Path, held_out: str
) -> None:
    trimmed = bpe_core.load(base_and_unseen / "trimmed.json")
    trimmed.save(base_and_unseen / "saved-again.json")
    assert (base_and_unseen / "saved-again.json").read_bytes() == (base_and_unseen / "trimmed.json").read_bytes()
    assert trimmed.decode(trimmed.encode(held_out, allowed_special="all")) == held_out
    unseen = (base_and_unseen / "unseen.txt").read_text(encoding="utf-8")
    assert trimmed.decode(trimmed.encode_ordinary(unseen)) == unseen


def test_drop_result_is_what_the_python_function_gives_and_records_its_lineage(
    dropped_by_cli: tuple[list[int], str], base: bpe_core.Tokenizer, base_and_unseen: Path
) -> None:
    asked, _ = dropped_by_cli
    trimmed, dropped, _ = bpe_core.trim(base, drop=[ASKED_TEXT, asked[1]])
    assert trimmed.spec == bpe_core.load(base_and_unseen / "trimmed.json").spec
    assert [dropped[token] for token in asked] == ["asked", "asked"]
    lineage = trimmed.provenance["lineage"]
    assert lineage[:-1] == base.provenance["lineage"]
    stage = lineage[-1]["trim"]
    assert stage["base"]["sha256"] == hashlib.sha256((base_and_unseen / "tok.json").read_bytes()).hexdigest()
    assert stage["asked"]["drop"] == [ASKED_TEXT, asked[1]] and stage["dropped"] == len(dropped)


def test_drop_result_exported_to_hf_gives_our_ids_in_tokenizers_and_transformers(
    dropped_by_cli: tuple[list[int], str], base_and_unseen: Path, held_out: str
) -> None:
    from transformers import PreTrainedTokenizerFast

    trimmed = bpe_core.load(base_and_unseen / "trimmed.json")
    trimmed.to_hf(base_and_unseen / "tokenizer.json")
    theirs = HfTokenizer.from_file(str(base_and_unseen / "tokenizer.json"))
    unseen = (base_and_unseen / "unseen.txt").read_text(encoding="utf-8")
    assert_same_ids(trimmed.encode_ordinary(unseen), theirs.encode(unseen, add_special_tokens=False).ids, "tokenizers")
    assert_same_ids(trimmed.encode(held_out, allowed_special="all"), theirs.encode(held_out).ids, "tokenizers")
    fast = PreTrainedTokenizerFast(tokenizer_file=str(base_and_unseen / "tokenizer.json"))
    ours = trimmed.encode(held_out, allowed_special="all")
    assert_same_ids(ours, fast(held_out, add_special_tokens=False)["input_ids"], "transformers")


def test_drop_result_exported_to_tiktoken_gives_our_ids_in_tiktoken(
    dropped_by_cli: tuple[list[int], str], base_and_unseen: Path, held_out: str
) -> None:
    trimmed = bpe_core.load(base_and_unseen / "trimmed.json")
    trimmed.to_tiktoken(base_and_unseen / "trimmed.tiktoken")
    theirs = tiktoken_encoding(
        "trimmed", read_ranks(base_and_unseen / "trimmed.tiktoken"), PUBLISHED_PATTERNS["gpt2"], trimmed.special_ids
    )
    unseen = (base_and_unseen / "unseen.txt").read_text(encoding="utf-8")
    assert_same_ids(trimmed.encode_ordinary(unseen), theirs.encode_ordinary(unseen), "tiktoken")
    ids = trimmed.encode(held_out, allowed_special="all")
    assert_same_ids(ids, theirs.encode(held_out, allowed_special="all"), "tiktoken")
    assert theirs.decode(ids) == held_out


# ---------------------------------------------------------------------------------------------
# --min-count on files


def test_min_count_drops_the_tokens_encoding_the_files_makes_fewer_than_c_times(
    base: bpe_core.Tokenizer, base_and_unseen: Path
) -> None:
    unseen = base_and_unseen / "unseen.txt"
    parts = merge_trees(base)
    made: Counter[int] = Counter()
    for token, times in Counter(base.encode_ordinary(unseen.read_text(encoding="utf-8"))).items():
        for inner in tree_tokens(token, parts):
            made[inner] += times
    expected = sorted(token for token in parts if made[token] < 3)
    assert 10 < len(expected) < len(parts) // 2
    trimmed, dropped, _ = bpe_core.trim(base, min_count=3, on=[str(unseen)], workers=1)
    assert list(dropped) == expected
    assert all(
        dropped[token] == f"made {made[token]} time{'' if made[token] == 1 else 's'} on the files" for token in expected
    )
    assert [trimmed.token_bytes(token) for token in trimmed.regular_ids()] == [
        base.token_bytes(token) for token in base.regular_ids() if token not in dropped
    ]
    # a token is made at least as often as what is built on it: the closure had nothing to add
    assert all(not set(tree_tokens(token, parts)) & set(expected) for token in parts if token not in dropped)
    on = trimmed.provenance["lineage"][-1]["trim"]["asked"]["on"]
    assert [item["sha256"] for item in on] == [hashlib.sha256(unseen.read_bytes()).hexdigest()]


def test_vocab_size_and_drop_together_keep_at_most_n_ids(base: bpe_core.Tokenizer) -> None:
    trimmed, dropped, _ = bpe_core.trim(base, drop=[ASKED_TEXT], vocab_size=700, pad_to_multiple_of=64)
    assert trimmed.vocab_size == 640 and len(trimmed.reserved_ids) == 0
    assert len(trimmed.merges) == 640 - 256 - len(SPECIALS)
    kept = [token for token in base.merged_ids() if token not in dropped]
    assert [trimmed.token_bytes(token) for token in trimmed.merged_ids()] == [base.token_bytes(token) for token in kept]
    padded, family, _ = bpe_core.trim(base, drop=[ASKED_TEXT], pad_to_multiple_of=64)
    unpadded = 1024 - len(family)
    assert padded.vocab_size == -(-unpadded // 64) * 64 and len(padded.reserved_ids) == padded.vocab_size - unpadded


# ---------------------------------------------------------------------------------------------
# imported vocabularies


def test_published_tiktoken_vocabulary_trimmed_to_n_encodes_like_tiktoken_with_its_first_ranks(
    base_and_unseen: Path,
) -> None:
    path = published_vocabulary_path("cl100k")
    ranks = read_ranks(path)
    assert sorted(rank for token, rank in ranks.items() if len(token) == 1) == list(range(256))
    imported = bpe_core.from_tiktoken(path)
    trimmed, _, id_map = bpe_core.trim(imported, vocab_size=20_000)
    specials = imported.special_ids
    first = {token: rank for token, rank in ranks.items() if rank < 20_000 - len(specials)}
    theirs = tiktoken_encoding("cl100k-20k", first, PUBLISHED_PATTERNS["cl100k"], specials)
    old_of = {new: old for old, new in id_map.items()}
    unseen = (base_and_unseen / "unseen.txt").read_text(encoding="utf-8")
    assert_same_ids(
        [old_of[token] for token in trimmed.encode_ordinary(unseen)], theirs.encode_ordinary(unseen), "tiktoken"
    )
    assert [old_of[trimmed.special_ids[token]] for token in specials] == list(specials.values())


def test_a_vocabulary_with_tokens_no_merge_makes_is_refused_naming_why(
    base: bpe_core.Tokenizer, tmp_path: Path
) -> None:
    base.to_tiktoken(tmp_path / "full.tiktoken")
    (asked,) = base.encode(ASKED_TEXT)
    lines = (tmp_path / "full.tiktoken").read_text(encoding="ascii").splitlines()
    kept = [line for line in lines if int(line.split()[1]) != asked]  # "ing" and the rest: made by no merge now
    (tmp_path / "holes.tiktoken").write_text("\n".join(kept) + "\n", encoding="ascii")
    imported = bpe_core.from_tiktoken(tmp_path / "holes.tiktoken", "gpt2")
    with pytest.raises(bpe_core.BpeError, match=r"imported vocabulary .* tokens are made by no merge"):
        bpe_core.trim(imported, vocab_size=800)


# ---------------------------------------------------------------------------------------------
# the command line's refusals


@pytest.mark.parametrize(
    "arguments, fragments",
    [
        (["--drop", "xyzzy"], ["'xyzzy'", "no token has this text"]),
        (["--drop", "in", "a"], ["'a' (id 97)", "base symbol"]),
        (["--drop", "97"], ["id 97", "base symbol"]),
        (["--drop", "<|endoftext|>"], ["special token"]),
        (["--vocab-size", "257"], ["below the minimum 258", "256 base symbols + 2 special tokens"]),
        (["--min-count", "3"], ["--min-count needs --on"]),
        (["--min-count", "3", "--on", "missing.txt"], ["missing.txt"]),
        ([], ["nothing to trim"]),
    ],
    ids=["unknown-token", "base-symbol-by-text", "base-symbol-by-id", "special-token", "vocab-size-too-small",
         "min-count-without-on", "missing-file", "nothing-asked"],
)  # fmt: skip
def test_trim_refuses_with_one_error_line_and_writes_nothing(
    arguments: list[str], fragments: list[str], base_and_unseen: Path, tmp_path: Path
) -> None:
    (tmp_path / "tok.json").write_bytes((base_and_unseen / "tok.json").read_bytes())
    assert_fails_cleanly(
        "trim", "tok.json", *arguments, "-o", "out.json", "--map", "map.tsv", cwd=tmp_path, fragments=tuple(fragments)
    )


def test_trim_of_a_missing_tokenizer_file_is_one_error_line(tmp_path: Path) -> None:
    assert_fails_cleanly(
        "trim", "missing.json", "--vocab-size", "300", "-o", "out.json", cwd=tmp_path, fragments=("missing.json",)
    )
