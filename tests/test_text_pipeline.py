"""The text pipeline: pretokenizers, streaming, training and the round trip, on real text.

Specified against outside sources only: the seed article's worked example and naive trainer,
the GPT-2 regex as published, rustbpe trained on the same text, and whole-text regex splitting
for the streamed counting. Nothing expected here was produced by bpe_core itself.
"""

import gzip
import random
from collections import Counter

import pytest
import regex
import rustbpe
from helpers.patterns import GPT2_PATTERN, PUBLISHED_PATTERNS
from helpers.reference import encode_reference, seed_train_naive, train_reference
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bpe_core
import bpe_text.readers
from bpe_core import engine
from bpe_core.chunking import count_chunks, pieces
from bpe_core.contract import StreamedText
from bpe_core.corpus.streaming import encode_pieces, text_cutter
from bpe_core.plugins import registry

REGEX_PRETOKENIZERS = sorted(PUBLISHED_PATTERNS)

SEED_CORPUS = "low lower lowest newer newest wider widest low low lower newest newest " * 50
SEED_PROBE = "the lowest newer widest, ünïcode 42"


def pretokenizer(name):
    return registry().pretokenizer(name, {})


def text_config(pretokenizer_name, vocab_size, tie_break="smallest", **trainer):
    return {
        "name": f"test-{pretokenizer_name}",
        "input": {"reader": "text"},
        "pretokenizer": {"name": pretokenizer_name},
        "trainer": {"vocab_size": vocab_size, "tie_break": tie_break, **trainer},
        "special_tokens": {"tokens": [], "position": "end"},
    }


def rustbpe_vocabulary(text, vocab_size, pattern):
    trained = rustbpe.Tokenizer()
    trained.train_from_iterator(iter([text]), vocab_size, pattern=pattern)
    return [token for token, _ in sorted(trained.get_mergeable_ranks(), key=lambda item: item[1])]


def vocabulary(tokenizer):
    return [tokenizer.token_bytes(token) for token in range(tokenizer.vocab_size)]


@pytest.fixture(scope="module")
def docs_tokenizers(docs_slice_path):
    """One small tokenizer per published pattern, trained on a slice of the Python docs."""
    return {
        name: bpe_core.train(text_config(name, 800), [str(docs_slice_path)], workers=1) for name in REGEX_PRETOKENIZERS
    }


@pytest.fixture()
def seed_corpus_path(tmp_path):
    path = tmp_path / "seed-corpus.txt"
    path.write_text(SEED_CORPUS, encoding="utf-8")
    return path


# ---------------------------------------------------------------- pretokenizers


@pytest.mark.parametrize("name", REGEX_PRETOKENIZERS)
def test_builtin_patterns_are_the_published_ones(name):
    assert pretokenizer(name).pattern == PUBLISHED_PATTERNS[name]


def test_gpt2_splits_the_seed_examples_like_the_seed_pretokenizer():
    split = pretokenizer("gpt2").split
    assert split("a   b,\n\n 42") == ["a", "  ", " b", ",", "\n\n", " 42"]
    assert split("low lower lowest") == ["low", " lower", " lowest"]


def test_cl100k_keeps_at_most_three_digits_together_and_newlines_after_punctuation():
    assert pretokenizer("cl100k").split("a   b,\n\n 12345") == ["a", "  ", " b", ",\n\n", " ", "123", "45"]


def test_whitespace_pretokenizer_is_str_split():
    text = "a  b\tc\n\nd\u00a0e\u2003f\x1cg "
    assert pretokenizer("whitespace").split(text) == text.split()


def test_custom_regex_pretokenizer_uses_the_given_pattern():
    custom = registry().pretokenizer("regex", {"pattern": r"\d|\D+"})
    assert custom.split("ab12c") == ["ab", "1", "2", "c"]


# ---------------------------------------------------------------- the seed's worked example


def test_seed_tiny_example_learns_lo_low_space_low_first(tmp_path):
    # chunks "low", " lower", " lowest": (l,o) and (o,w) tie at 3, the smallest pair (l,o) goes
    # first; then (lo,w) = 3; then (" ",low) and (low,e) tie at 2 and the smaller (" ",low) wins
    path = tmp_path / "tiny.txt"
    path.write_text("low lower lowest", encoding="utf-8")
    tokenizer = bpe_core.train(text_config("gpt2", 259), [str(path)], workers=1)
    assert vocabulary(tokenizer)[256:] == [b"lo", b"low", b" low"]


@pytest.mark.parametrize("tie_break", ["smallest", "largest"])
def test_seed_corpus_first_merges_follow_the_pair_counts(seed_corpus_path, tie_break):
    # counts by hand (50 repetitions): (w,e) 350 > (l,o) 300; then (l,o) 300 > (" ",lo) 299 >
    # (s,t) 250; then (" ",lo) 299; then (s,t) 250. No ties up to there.
    tokenizer = bpe_core.train(text_config("gpt2", 276, tie_break), [str(seed_corpus_path)], workers=1)
    assert vocabulary(tokenizer)[256:260] == [b"we", b"lo", b" lo", b"st"]
    assert tokenizer.merge_counts[:4] == [350, 300, 299, 250]


def test_seed_corpus_with_whitespace_and_largest_gives_the_seed_naive_merges(seed_corpus_path):
    tokenizer = bpe_core.train(text_config("whitespace", 276, "largest"), [str(seed_corpus_path)], workers=1)
    words = [list(word.encode("utf-8")) for word in SEED_CORPUS.split()]
    assert tokenizer.merges == seed_train_naive(words, 20)


@pytest.mark.parametrize("name", ["whitespace", "gpt2", "cl100k", "o200k"])
@pytest.mark.parametrize("tie_break", ["smallest", "largest"])
def test_seed_corpus_merges_equal_the_reference_trainer(seed_corpus_path, name, tie_break):
    tokenizer = bpe_core.train(text_config(name, 276, tie_break), [str(seed_corpus_path)], workers=1)
    chunk_counts = Counter(pretokenizer(name).split(SEED_CORPUS))
    chunks = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
    reference = train_reference(256, chunks, list(chunk_counts.values()), 20, tie_break=tie_break)
    assert tokenizer.merges == reference.merges
    assert tokenizer.merge_counts == reference.merge_counts
    expected_ids = [
        token
        for chunk in pretokenizer(name).split(SEED_PROBE)
        for token in encode_reference(256, reference.merges, list(chunk.encode("utf-8")))
    ]
    assert tokenizer.encode(SEED_PROBE) == expected_ids


@pytest.mark.parametrize(("min_frequency", "max_token_length"), [(60, None), (1, 3), (120, 4)])
def test_pipeline_applies_min_frequency_and_max_token_length(seed_corpus_path, min_frequency, max_token_length):
    config = text_config("gpt2", 300, min_frequency=min_frequency, max_token_length=max_token_length)
    tokenizer = bpe_core.train(config, [str(seed_corpus_path)], workers=1)
    chunk_counts = Counter(pretokenizer("gpt2").split(SEED_CORPUS))
    chunks = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
    reference = train_reference(256, chunks, list(chunk_counts.values()), 44, min_frequency, max_token_length or 0)
    assert tokenizer.merges == reference.merges
    assert len(tokenizer.merges) < 44  # the limits stopped training early
    assert all(count >= min_frequency for count in tokenizer.merge_counts)
    if max_token_length:
        assert (
            max(len(tokenizer.token_bytes(token)) for token in range(256, 256 + len(tokenizer.merges)))
            <= max_token_length
        )
    assert tokenizer.decode(tokenizer.encode(SEED_PROBE)) == SEED_PROBE


def test_seed_corpus_with_gpt2_gives_rustbpe_vocabulary(seed_corpus_path):
    tokenizer = bpe_core.train(text_config("gpt2", 276), [str(seed_corpus_path)], workers=1)
    assert vocabulary(tokenizer) == rustbpe_vocabulary(SEED_CORPUS, 276, GPT2_PATTERN)


def test_seed_probe_round_trips(seed_corpus_path):
    tokenizer = bpe_core.train(text_config("gpt2", 276), [str(seed_corpus_path)], workers=1)
    ids = tokenizer.encode(SEED_PROBE)
    assert tokenizer.decode(ids) == SEED_PROBE
    assert len(ids) < len(SEED_PROBE.encode("utf-8"))
    # " lowest" and " newer" were seen 50 times each; "ünïcode" never: its bytes stay apart
    assert b"".join(tokenizer.token_bytes(token) for token in ids) == SEED_PROBE.encode("utf-8")


def test_seed_probe_through_whitespace_loses_only_the_whitespace(seed_corpus_path):
    tokenizer = bpe_core.train(text_config("whitespace", 276), [str(seed_corpus_path)], workers=1)
    assert tokenizer.decode(tokenizer.encode(SEED_PROBE)) == "".join(SEED_PROBE.split())


# ---------------------------------------------------------------- round trip


any_character = st.one_of(
    st.characters(codec=None, exclude_categories=[]),  # every code point, surrogates included
    st.characters(categories=["Cs"]),  # lone surrogates, which are otherwise rare
    st.sampled_from(list(" \t\n\r\x0b\x0c\x85\u00a0\u2028\u200d\u0301'")),
)
any_text = st.text(alphabet=any_character, max_size=80)

SCRIPTS = [
    "",
    "hello world",
    "  leading and trailing  \n",
    "emoji 😀👍🏽 family 👨‍👩‍👧‍👦 flag 🇺🇦 keycap 1️⃣",
    "combining e\u0301 a\u0308 \u0915\u094d\u0937 Zalgo z\u0336\u0334\u0335a\u0337",
    "中文字符，日本語のテキスト、한국어 문장입니다.",
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom",
    "RTL \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 \u202eoverride\u202c",
    "lone surrogates \ud800 \udfff \ud83d\ude00 a\udc80b",
    "control \x00\x01\x1b[0m\x7f\x85",
    "digits 1234567890 ١٢٣ ½ Ⅻ 3.14159e-10",
    "contractions don't I'm they'll we've she'd it's O'NEIL'S",
    "a" * 3000,
    " " * 500 + "x" + "\n" * 300,
    "\r\n" * 100 + "end",
    "ab" * 1500,
    "😀" * 400,
    "\U0010ffff\U000e0001\uffff\ufffe",
]


def repaired(text: str) -> str:
    """The text as tiktoken reads a str, and so encode: a surrogate pair joined into its
    character, a lone surrogate U+FFFD (the text itself when it holds none)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@pytest.mark.parametrize("name", REGEX_PRETOKENIZERS)
@pytest.mark.parametrize("text", SCRIPTS, ids=range(len(SCRIPTS)))
def test_decode_encode_is_identity_on_every_script_up_to_repaired_surrogates(docs_tokenizers, name, text):
    tokenizer = docs_tokenizers[name]
    assert tokenizer.decode(tokenizer.encode(text)) == repaired(text)


@pytest.mark.both_modes
@pytest.mark.parametrize("name", REGEX_PRETOKENIZERS)
def test_decode_encode_is_identity_for_any_string_up_to_repaired_surrogates(docs_tokenizers, name):
    tokenizer = docs_tokenizers[name]

    @settings(max_examples=150)
    @given(text=any_text)
    @example(text="\ud800")
    @example(text="\udc00\ud800")
    @example(text="\ud83d\ude00")
    def round_trip(text):
        ids = tokenizer.encode(text)
        assert all(0 <= token < tokenizer.vocab_size for token in ids)
        assert tokenizer.decode(ids) == repaired(text)

    round_trip()


@pytest.mark.parametrize("name", REGEX_PRETOKENIZERS)
def test_token_bytes_of_an_encoding_concatenate_to_the_utf8_of_the_repaired_text(docs_tokenizers, name, docs_text):
    tokenizer = docs_tokenizers[name]
    sample = docs_text[5_000_000:5_020_000] + SCRIPTS[3] + SCRIPTS[8]
    ids = tokenizer.encode(sample)
    assert b"".join(tokenizer.token_bytes(token) for token in ids) == repaired(sample).encode("utf-8")


def test_trained_tokenizer_compresses_text_it_was_trained_on(docs_tokenizers, docs_text):
    sample = docs_text[:20_000]
    assert len(docs_tokenizers["gpt2"].encode(sample)) < 0.6 * len(sample.encode("utf-8"))


def test_merged_token_bytes_are_the_concatenation_of_their_parts(docs_tokenizers):
    tokenizer = docs_tokenizers["gpt2"]
    assert tokenizer.vocab_size == 800
    assert len(tokenizer.merges) == 800 - 256
    for token in range(256):
        assert tokenizer.token_bytes(token) == bytes([token])
    for rank, (left, right) in enumerate(tokenizer.merges):
        assert tokenizer.token_bytes(256 + rank) == tokenizer.token_bytes(left) + tokenizer.token_bytes(right)


def test_decoding_invalid_utf8_replaces_the_bad_bytes(docs_tokenizers):
    tokenizer = docs_tokenizers["gpt2"]
    assert tokenizer.decode([0xFF]) == "\ufffd"
    assert tokenizer.decode([ord("a"), 0xE2, 0x82]).startswith("a")
    assert "\ufffd" in tokenizer.decode([ord("a"), 0xE2, 0x82])


def test_encode_batch_equals_encoding_one_by_one(docs_tokenizers, docs_text, monkeypatch):
    monkeypatch.setattr(bpe_core.batching, "MIN_CHARACTERS_PER_WORKER", 1)  # forked workers, however small
    monkeypatch.setattr(bpe_core.batching, "MIN_TEXT_PROCESSES", 2)
    tokenizer = docs_tokenizers["cl100k"]
    documents = [docs_text[start : start + 700] for start in range(0, 140_000, 700)] + SCRIPTS
    expected = [tokenizer.encode(document) for document in documents]
    assert tokenizer.encode_batch(documents, workers=1) == expected
    assert tokenizer.encode_batch(documents, workers=2) == expected


def test_saved_and_loaded_tokenizer_encodes_the_same(docs_tokenizers, tmp_path):
    tokenizer = docs_tokenizers["o200k"]
    path = tmp_path / "o200k.json"
    tokenizer.save(path)
    loaded = bpe_core.load(path)
    assert loaded.merges == tokenizer.merges
    assert loaded.vocab_size == tokenizer.vocab_size
    for text in SCRIPTS:
        assert loaded.encode(text) == tokenizer.encode(text)
        assert loaded.decode(loaded.encode(text)) == repaired(text)


# ---------------------------------------------------------------- streaming exactness


TEXT_FRAGMENTS = list("aAbzZéßΩжя中字 \t\n\r.,;:!?-_/()'\"0123456789\u00a0\u2028\x85\x0b\x0c\u0301😀") + [
    "\r\n",
    "\n\n",
    "'s",
    "'ll",
    "'Re",
    " the",
    "Word",
    "\nword",
    ".\nNext",
    "  \n",
    "12345",
    " 42",
    "    ",
]
stream_text = st.lists(st.sampled_from(TEXT_FRAGMENTS), max_size=120).map("".join)


def streamed(text, cut_points):
    cuts = sorted({cut for cut in cut_points if 0 < cut < len(text)})
    bounds = [0, *cuts, len(text)]
    blocks = [text[start:end] for start, end in zip(bounds, bounds[1:]) if end > start]
    return StreamedText("<test>", lambda: iter(blocks))


@pytest.mark.both_modes
@pytest.mark.parametrize("name", [*REGEX_PRETOKENIZERS, "whitespace"])
def test_streamed_pieces_split_exactly_like_the_whole_text(name):
    splitter = pretokenizer(name)

    @settings(max_examples=250)
    @given(text=stream_text, cut_points=st.lists(st.integers(0, 2000), max_size=40))
    @example(text="a\nb\nc", cut_points=[1, 2, 3, 4])
    @example(text="x.\nThe end\n\nAnd\r\nmore", cut_points=list(range(25)))
    @example(text="a  \n\tb c\n d", cut_points=list(range(12)))
    def check(text, cut_points):
        document = streamed(text, cut_points)
        parts = list(pieces([document], splitter))
        assert "".join(parts) == text
        assert [chunk for part in parts for chunk in splitter.split(part)] == splitter.split(text)
        assert count_chunks([streamed(text, cut_points)], splitter, workers=1) == Counter(splitter.split(text))

    check()


STREAM_SPECIALS = ["<|endoftext|>", "<|fim_middle|>", "<|a\nb|>"]  # one holds a newline


@pytest.fixture(scope="module")
def streamed_special_tokenizer(docs_slice_path):
    config = text_config("gpt2", 400)
    config["special_tokens"]["tokens"] = STREAM_SPECIALS
    return bpe_core.train(config, [str(docs_slice_path)], workers=1)


@pytest.mark.both_modes
def test_streamed_text_never_cuts_through_a_special_token(streamed_special_tokenizer):
    """Streaming cuts after a letter before a non-letter, which falls inside `<|endoftext|>`; the
    tokenizer's cut keeps special tokens whole, also across blocks and at a block's end."""
    tok = streamed_special_tokenizer
    fragments = [*TEXT_FRAGMENTS, *STREAM_SPECIALS, "<|", "|>", "text", "<|endof"]

    @settings(max_examples=300)
    @given(
        text=st.lists(st.sampled_from(fragments), max_size=80).map("".join),
        cut_points=st.lists(st.integers(0, 1000), max_size=40),
    )
    @example(text="word<|custom|><|endoftext|>", cut_points=list(range(30)))
    @example(text="x<|a\nb|>y", cut_points=[3, 4, 5])
    def check(text, cut_points):
        streamed_ids = [
            token for ids, _ in encode_pieces(tok, [streamed(text, cut_points)], 1, "all", ()) for token in ids
        ]
        assert streamed_ids == tok.encode(text, allowed_special="all")
        parts = list(pieces([streamed(text, cut_points)], tok.pretokenizer, text_cutter(tok), context=16))
        assert "".join(parts) == text
        boundaries = {sum(map(len, parts[:count])) for count in range(1, len(parts))}
        for token in STREAM_SPECIALS:
            for start in (index for index in range(len(text)) if text.startswith(token, index)):
                assert not any(start < boundary < start + len(token) for boundary in boundaries), (token, parts)

    check()


@pytest.mark.both_modes
@pytest.mark.parametrize("name", REGEX_PRETOKENIZERS)
def test_a_safe_cut_keeps_every_chunk_whatever_text_follows(name):
    """The cut rule (a letter then a non-letter, non-mark, non-apostrophe; or a letter after a
    newline after a non-space) holds for any continuation, not only the one that came."""
    splitter = pretokenizer(name)

    @settings(max_examples=500)
    @given(text=stream_text, rest=stream_text)
    @example(text="word.", rest="'s")  # the cut is after "word", before "."
    @example(text="don't stop", rest="'ll")  # o200k: a contraction continues a word
    @example(text="cafe x", rest="\u0301")  # a combining mark continues a word, a space does not
    @example(text="Ωmega 42", rest="43")
    @example(text="a\u00a0b\u2028c\x85d", rest="\r\n")
    def check(text, rest):
        cut = splitter.safe_cut(text)
        assert 0 <= cut <= len(text)
        if cut > 0:
            whole = text + rest
            assert splitter.split(whole[:cut]) + splitter.split(whole[cut:]) == splitter.split(whole)

    check()


# The safe cut's rule, spelled out here rather than taken from the plugin: the last newline after
# a non-space and before a letter, or the last letter followed by neither a letter, a mark nor an
# apostrophe (searched from the end of the text).
CUT_BEFORE_LETTER = regex.compile(r"(?<=\S)\n\p{L}", flags=regex.REVERSE)
CUT_AFTER_LETTER = regex.compile(r"\p{L}[^\p{L}\p{M}']", flags=regex.REVERSE)


def whole_text_cut(text: str) -> int:
    """The cut rule searched over the whole text, both patterns (what `safe_cut` gives faster)."""
    line = CUT_BEFORE_LETTER.search(text)
    letter = CUT_AFTER_LETTER.search(text)
    return max(line.end() - 1 if line is not None else 0, letter.start() + 1 if letter is not None else 0)


@pytest.mark.both_modes
def test_the_safe_cut_is_the_latest_cut_of_either_rule_on_the_docs_and_any_text(docs_text):
    splitter = pretokenizer("gpt2")
    for start in range(0, len(docs_text), 65521):
        block = docs_text[start : start + 65536]
        assert splitter.safe_cut(block) == whole_text_cut(block)

    @settings(max_examples=500)
    @given(text=stream_text)
    @example(text="word\nLetter")  # the line's cut is one after the letter's
    @example(text="x \nLetter")
    def check(text):
        assert splitter.safe_cut(text) == whole_text_cut(text)

    check()


@pytest.mark.both_modes
@pytest.mark.parametrize("name", REGEX_PRETOKENIZERS)
def test_a_line_without_newlines_is_streamed_in_pieces_of_about_a_block(name):
    splitter = pretokenizer(name)
    text = "The quick brown fox, 42 times: jumps over the lazy dog! " * 400
    parts = list(pieces([streamed(text, list(range(0, len(text), 97)))], splitter))
    assert "".join(parts) == text
    assert max(len(part) for part in parts) <= 2 * 97
    assert [chunk for part in parts for chunk in splitter.split(part)] == splitter.split(text)


def test_streamed_text_with_no_place_to_cut_is_an_error_after_the_limit(monkeypatch):
    monkeypatch.setattr(bpe_core.chunking, "MAX_UNCUT_CHARS", 1000)
    word = streamed("a" * 5000, list(range(0, 5000, 100)))
    with pytest.raises(bpe_core.BpeError, match="<test>: more than 1000 characters"):
        list(pieces([word], pretokenizer("gpt2")))


@pytest.mark.parametrize("name", [*REGEX_PRETOKENIZERS, "whitespace"])
def test_streamed_pieces_of_random_docs_excerpts_split_like_the_whole(name, docs_text):
    splitter = pretokenizer(name)
    rng = random.Random(name)
    for _ in range(20):
        start = rng.randrange(len(docs_text) - 20_000)
        text = docs_text[start : start + rng.randrange(1, 20_000)]
        cut_points = [rng.randrange(len(text) + 1) for _ in range(rng.randrange(1, 200))]
        parts = list(pieces([streamed(text, cut_points)], splitter))
        assert "".join(parts) == text
        assert [chunk for part in parts for chunk in splitter.split(part)] == splitter.split(text)


def test_non_streamed_documents_pass_through_whole():
    splitter = pretokenizer("gpt2")
    assert list(pieces(["one doc\nLine", "two"], splitter)) == ["one doc\nLine", "two"]


@pytest.mark.parametrize("name", [*REGEX_PRETOKENIZERS, "whitespace"])
def test_text_reader_counts_each_file_as_its_own_document_with_newlines_untouched(name, tmp_path, monkeypatch):
    monkeypatch.setattr(bpe_text.readers, "BLOCK_CHARS", 7)
    texts = [
        "\ufeffline one\r\nline two\r\nthird\rline\n\nWord.\nNext",
        "ünïcode\nÜber 中文\n😀x\nend'll\n",
        "no newline at the end",
    ]
    paths = [tmp_path / "a.txt", tmp_path / "b.txt.gz", tmp_path / "c.txt"]
    paths[0].write_text(texts[0], encoding="utf-8", newline="")
    with gzip.open(paths[1], "wt", encoding="utf-8", newline="") as handle:
        handle.write(texts[1])
    paths[2].write_text(texts[2], encoding="utf-8", newline="")
    splitter = pretokenizer(name)
    expected = sum((Counter(splitter.split(text)) for text in texts), Counter())
    documents = registry().reader("text", {}).documents([str(path) for path in paths])
    assert count_chunks(documents, splitter, workers=1) == expected


@pytest.fixture(scope="module")
def docs_chunk_counts(docs_text):
    """Whole-text chunk counts of the documentation, per pretokenizer (independent of streaming)."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = Counter(pretokenizer(name).split(docs_text))
        return cache[name]

    return get


@pytest.mark.parametrize("name", [*REGEX_PRETOKENIZERS, "whitespace"])
def test_counting_the_docs_in_small_blocks_equals_whole_text_counts(name, docs_path, docs_chunk_counts, monkeypatch):
    monkeypatch.setattr(bpe_text.readers, "BLOCK_CHARS", 4096)
    reader = registry().reader("text", {})
    counts = count_chunks(reader.documents([str(docs_path)]), pretokenizer(name), workers=2)
    assert counts == docs_chunk_counts(name)


# ---------------------------------------------------------------- parity with rustbpe


@pytest.fixture(scope="module")
def rustbpe_docs_vocabularies(docs_text):
    cache = {}

    def get(vocab_size, name="gpt2"):
        if (vocab_size, name) not in cache:
            cache[vocab_size, name] = rustbpe_vocabulary(docs_text, vocab_size, PUBLISHED_PATTERNS[name])
        return cache[vocab_size, name]

    return get


@pytest.mark.both_modes
@pytest.mark.slow
def test_gpt2_smallest_on_the_docs_gives_exactly_rustbpe_vocabulary(docs_path, rustbpe_docs_vocabularies):
    tokenizer = bpe_core.train(text_config("gpt2", 8192), [str(docs_path)])
    ours = vocabulary(tokenizer)
    assert len(ours) == 8192
    assert ours == rustbpe_docs_vocabularies(8192)
    # training is greedy, so a smaller vocabulary is a prefix: rustbpe trained for 4096 says so too
    assert ours[:4096] == rustbpe_docs_vocabularies(4096)


@pytest.mark.both_modes
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_tiktoken_patterns_on_the_docs_give_exactly_rustbpe_vocabulary(docs_path, rustbpe_docs_vocabularies, name):
    tokenizer = bpe_core.train(text_config(name, 4096), [str(docs_path)])
    assert vocabulary(tokenizer) == rustbpe_docs_vocabularies(4096, name)


@pytest.mark.slow
def test_small_read_blocks_do_not_change_the_merges(docs_path, rustbpe_docs_vocabularies, monkeypatch):
    monkeypatch.setattr(bpe_text.readers, "BLOCK_CHARS", 4096)
    tokenizer = bpe_core.train(text_config("gpt2", 4096), [str(docs_path)], workers=2)
    assert vocabulary(tokenizer) == rustbpe_docs_vocabularies(4096)


# ---------------------------------------------------------------- engine on real text chunks


@pytest.mark.parametrize("tie_break", [engine.TIE_SMALLEST, engine.TIE_LARGEST])
def test_encoding_each_docs_chunk_gives_the_trainers_final_segmentation(docs_chunk_counts, tie_break):
    chunk_counts = docs_chunk_counts("gpt2")
    chunks = [list(chunk.encode("utf-8")) for chunk in chunk_counts]
    # rst underlines and indentation give chunks far longer than words (the longest over 150
    # bytes), which the engine may encode with another loop than words
    assert sum(len(chunk) >= 100 for chunk in chunks) >= 20
    trainer = engine.train(256, chunks, list(chunk_counts.values()), 1500, tie_break=tie_break)
    assert len(trainer.merges) == 1500
    encoder = engine.Encoder(256, trainer.merges)
    assert [encoder.encode_symbols(chunk) for chunk in chunks] == trainer.segments()
    decoder = engine.Decoder(256, trainer.merges)
    assert [decoder.symbols(segment) for segment in trainer.segments()] == chunks
