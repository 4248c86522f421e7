"""Encoding chunks given as byte ranges (`Encoder.encode_range`, `encode_uncached`: the merge
loops, sealed units read as tokens, the cache of ranges) and the text plugin's compiled packing
loop (`PacksChunks`).

Every claim is an equality with the engine's own per-chunk path (`encode_symbols`, itself
checked against the naive reference in test_engine.py) or with the reference: for any merges,
merges that reuse ids, output layouts that drop tokens, chunks from one symbol to thousands
(past every length at which the engine changes its loop), and caches small enough to be emptied
mid-document. On the Python docs and on arbitrary Unicode text the text loop gives what splitting
and encoding chunk by chunk gives, and the scanners it walks with split as the published patterns
do under `regex`. Only `bpe_core.engine`'s public names are used, and no engine object's state is
read.
"""

import gzip
import random
from dataclasses import replace

import pytest
import regex
from helpers.dna import fasta_records, fastq_reads
from helpers.paths import BENCHMARK_TEXTS, CHR17_PATH, ECOLI_PATH, LAMBDA_PATH, require
from helpers.patterns import PUBLISHED_PATTERNS
from helpers.reference import encode_reference
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe_core
from bpe_core import contract, engine
from bpe_core.engine import PADDING
from bpe_core.plugins import registry
from bpe_core.spec import ComponentConfig
from bpe_text.packing import wide_runs

pytestmark = pytest.mark.both_modes

# chunk lengths from a symbol to a genome's piece, spread so that any length at which the engine
# changes its loop has lengths on both sides
CHUNK_LENGTHS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1_597, 2_584, 4_181, 6_765, 20_000)
# more units than any round in which the engine weighs how many of them were sealed
MANY_UNITS = 20_000


@st.composite
def packed_cases(draw):
    """(alphabet_size, merges, results, output_ids, chunks): any valid merges over up to 256
    symbols; results that sometimes name an existing merged token; an output layout that may
    renumber and drop tokens; chunks short and long, often repeated."""
    alphabet_size = draw(st.sampled_from([2, 3, 5, 256]))
    used = draw(st.lists(st.integers(0, alphabet_size - 1), min_size=1, max_size=4, unique=True))
    symbol = st.sampled_from(used)
    merges: list[tuple[int, int]] = []
    results: list[int] = []
    created = 0
    for _ in range(draw(st.integers(0, 30))):
        ids = used + list(range(alphabet_size, alphabet_size + created))
        pair = (draw(st.sampled_from(ids)), draw(st.sampled_from(ids)))
        if pair in merges:
            continue
        merges.append(pair)
        if created and draw(st.integers(0, 4)) == 0:
            results.append(alphabet_size + draw(st.integers(0, created - 1)))
        else:
            results.append(alphabet_size + created)
            created += 1
    token_count = alphabet_size + created
    output_ids: list[int] = []
    if draw(st.booleans()):
        output_ids = [draw(st.sampled_from([-1, token, token + 1000])) for token in range(token_count)]
    short = st.lists(symbol, max_size=12)
    long = st.builds(lambda unit, n: unit * n, st.lists(symbol, min_size=1, max_size=4), st.integers(20, 80))
    chunks = draw(st.lists(st.one_of(short, short, long), min_size=1, max_size=12))
    chunks += draw(st.lists(st.sampled_from(chunks), max_size=6))
    return alphabet_size, merges, results, output_ids, chunks


def build_encoder(alphabet_size, merges, results, output_ids, cache_size=1 << 18):
    encoder = engine.Encoder(alphabet_size, merges, cache_size, results=results)
    if output_ids:
        encoder.set_output_ids(output_ids)
    return encoder


def packed(chunks):
    """The chunks one after the other as bytes (padded), and each one's (start, end)."""
    data = b"".join(bytes(chunk) for chunk in chunks) + PADDING
    ranges, start = [], 0
    for chunk in chunks:
        ranges.append((start, start + len(chunk)))
        start += len(chunk)
    return data, ranges


@settings(max_examples=300)
@given(case=packed_cases(), cache_size=st.sampled_from([1, 2, 3, 1 << 18]), cache_long=st.booleans())
def test_encode_range_gives_the_ids_of_encode_symbols_through_any_cache(case, cache_size, cache_long):
    alphabet_size, merges, results, output_ids, chunks = case
    expected_encoder = build_encoder(alphabet_size, merges, results, output_ids)
    expected = [
        token for chunk in chunks for token in expected_encoder.to_output(expected_encoder.encode_symbols(chunk))
    ]
    encoder = build_encoder(alphabet_size, merges, results, output_ids, cache_size)
    data, ranges = packed(chunks)
    for _ in range(2):  # the second pass finds what the first one cached
        ids: list[int] = []
        for start, end in ranges:
            encoder.encode_range(data, start, end, ids, cache_long)
        assert ids == expected


def unit_encoder(alphabet_size: int, merges: list[tuple[int, int]], roles: bytes = b"") -> engine.Encoder:
    """An encoder of merges made in order, reading units of these roles."""
    encoder = engine.Encoder(alphabet_size, merges)
    encoder.set_units(roles)
    return encoder


def uncached(encoder: engine.Encoder, chunk: list[int]) -> list[int]:
    return encoder.encode_uncached(bytes(chunk) + PADDING, 0, len(chunk))


@settings(max_examples=300)
@given(case=packed_cases())
def test_byte_ranges_merge_like_the_rank_order_reference(case):
    alphabet_size, merges, _, _, chunks = case
    encoder = unit_encoder(alphabet_size, merges)
    for chunk in chunks:
        assert uncached(encoder, chunk) == encode_reference(alphabet_size, merges, chunk)


@settings(max_examples=500)
@given(case=packed_cases(), roles=st.lists(st.sampled_from([0, 1, 2]), min_size=256, max_size=256))
def test_reading_sealed_units_as_tokens_gives_the_reference_ids(case, roles):
    """Any merges made in order, any roles of the symbols in units (plain, continues, starts):
    a unit read as one token changes no id."""
    alphabet_size, merges, _, _, chunks = case
    encoder = unit_encoder(alphabet_size, merges, bytes(roles) if alphabet_size == 256 else b"")
    for chunk in chunks:
        assert uncached(encoder, chunk) == encode_reference(alphabet_size, merges, chunk)


def test_a_sealed_unit_is_read_as_one_token_and_an_open_one_as_symbols():
    """Symbol 1 starts a unit, 2 and 3 continue one. With merges (1, 2) then (0, 1), the unit 1 2
    becomes 256 first (rank 0) and no merge at rank 0 or below can take its 1: it is sealed. With
    (0, 1) first, a 0 before it takes the 1 (0 1 2 ends as 256 2): it is not sealed after a plain
    symbol, and is after a 3 (no merge takes a 1 after a symbol that continues a unit)."""
    roles = bytes(2 if symbol == 1 else 1 if symbol in (2, 3) else 0 for symbol in range(256))
    sealed = unit_encoder(256, [(1, 2), (0, 1)], roles)
    assert uncached(sealed, [0, 1, 2]) == [0, 256] == encode_reference(256, [(1, 2), (0, 1)], [0, 1, 2])
    open_unit = unit_encoder(256, [(0, 1), (1, 2)], roles)
    assert uncached(open_unit, [0, 1, 2]) == [256, 2] == encode_reference(256, [(0, 1), (1, 2)], [0, 1, 2])
    assert uncached(open_unit, [3, 1, 2]) == [3, 257] == encode_reference(256, [(0, 1), (1, 2)], [3, 1, 2])


@pytest.mark.parametrize(
    "chunk", [[0, 1, 3, 0, 1, 2, 1, 3, 1, 3, 1, 3], [1, 2, 0, 1, 2, 1, 3]], ids=["mostly-open", "mostly-sealed"]
)
def test_ids_stay_the_references_however_few_or_many_units_are_sealed(chunk):
    """Units 1 2 and 1 3: merge (1, 2) seals the first, nothing makes the second one token. Over
    many units of which few are sealed (the engine may stop reading units) or most (it keeps on),
    every chunk gets the reference's ids."""
    roles = bytes(2 if symbol == 1 else 1 if symbol in (2, 3) else 0 for symbol in range(256))
    merges = [(1, 2), (0, 256)]
    encoder = unit_encoder(256, merges, roles)
    expected = encode_reference(256, merges, chunk)
    for _ in range(MANY_UNITS // 3):
        assert uncached(encoder, chunk) == expected


@pytest.mark.parametrize("cache_long", [True, False])
def test_byte_ranges_of_every_length_get_the_ids_of_encode_symbols_and_the_reference(cache_long):
    """Short and long ranges of a text's bytes, one encoder for all of them (the long ones it has
    met add up as it goes), each encoded twice (the second time from the cache, if it keeps them)."""
    encoder = engine.Encoder(256, [(97, 98), (256, 256), (257, 99), (99, 97), (259, 98)])
    for length in CHUNK_LENGTHS:
        chunk = list(b"ab" * (length // 2) + b"c" * (length % 2))
        for _ in range(2):
            ids: list[int] = []
            encoder.encode_range(bytes(chunk) + PADDING, 0, len(chunk), ids, cache_long)
            assert ids == encoder.encode_symbols(chunk) == encode_reference(256, encoder.merge_pairs(), chunk)


def test_cached_ranges_that_share_their_first_eight_bytes_keep_their_own_ids_in_a_cache_of_two():
    """Three chunks alike in their first eight bytes through a cache of two entries: each one's ids,
    however often the cache fills and empties."""
    merges = [(97, 98), (99, 100), (256, 257), (49, 50)]
    data = b"abcdefgh1abcdefgh2abcdefgh" + PADDING
    ranges = [(0, 9), (9, 18), (18, 26), (0, 8)]
    encoder = engine.Encoder(256, merges, cache_size=2)
    for _ in range(3):
        for start, end in ranges:
            ids: list[int] = []
            encoder.encode_range(data, start, end, ids)
            assert ids == encode_reference(256, merges, list(data[start:end]))


@settings(max_examples=100)
@given(keys=st.lists(st.binary(max_size=30), max_size=300, unique=True))
def test_every_range_encoded_once_comes_back_with_its_ids_from_a_cache_that_grew(keys):
    merges = [(0, 0), (97, 98), (256, 97), (255, 1)]
    data = b"".join(keys) + PADDING
    ranges, start = [], 0
    for key in keys:
        ranges.append((start, start + len(key)))
        start += len(key)
    encoder = engine.Encoder(256, merges)
    for _ in range(2):
        for start, end in ranges:
            ids: list[int] = []
            encoder.encode_range(data, start, end, ids)
            assert ids == encode_reference(256, merges, list(data[start:end]))


def test_encode_range_refuses_an_alphabet_wider_than_a_byte():
    with pytest.raises(ValueError, match="one byte per symbol"):
        engine.Encoder(300, []).prepare_ranges()


# ---------------------------------------------------------------- the text plugin's loop


@pytest.fixture(scope="module")
def docs_tokenizers(docs_slice_path) -> dict[str, bpe_core.Tokenizer]:
    return {
        name: bpe_core.train(
            {"pretokenizer": {"name": name}, "trainer": {"vocab_size": 1024}}, [docs_slice_path], progress=False
        )
        for name in ("gpt2", "cl100k", "o200k")
    }


def chunk_by_chunk(tokenizer: bpe_core.Tokenizer, text: str) -> list[int]:
    """Split, then each chunk's UTF-8 bytes through the engine: the ids the packed loop must give."""
    encoder = engine.Encoder(tokenizer.alphabet_size, tokenizer.spec.internal_merges)
    return [
        token
        for chunk in tokenizer.pretokenizer.split(text)
        for token in encoder.encode_symbols(list(chunk.encode("utf-8", "surrogatepass")))
    ]


def test_built_in_text_pretokenizers_pack_their_chunks(docs_tokenizers):
    for tokenizer in docs_tokenizers.values():
        assert isinstance(tokenizer.pretokenizer, contract.PacksChunks)
        assert isinstance(tokenizer.pretokenizer, contract.CountsPacked)


def test_packed_text_encoding_gives_the_chunk_by_chunk_ids_on_the_python_docs(docs_tokenizers, docs_text):
    text = docs_text[:300_000]
    for tokenizer in docs_tokenizers.values():
        assert tokenizer.encode_ordinary(text) == chunk_by_chunk(tokenizer, text)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=60)
    | st.sampled_from(["", " ", "ü" * 200, "\ud800x", "naïve café, 日本語 and\ud800 ok: ü" * 3 + "end"])
)
def test_packed_text_encoding_gives_the_chunk_by_chunk_ids_on_any_unicode_text(docs_tokenizers, text):
    for tokenizer in docs_tokenizers.values():
        assert tokenizer.encode_ordinary(text) == chunk_by_chunk(tokenizer, text)


@pytest.mark.parametrize("path", BENCHMARK_TEXTS, ids=lambda path: path.name.split(".")[1])
def test_packed_text_encoding_gives_the_chunk_by_chunk_ids_on_japanese_and_german(docs_tokenizers, path):
    text = gzip.open(require(path), "rt", encoding="utf-8").read()[:100_000]
    for tokenizer in docs_tokenizers.values():
        assert tokenizer.encode_ordinary(text) == chunk_by_chunk(tokenizer, text)


BOUNDARY_PIECES = ["don", "'t", "a  ", "  b", "x\r", "\n", "\ud83d", "\ude00", "", "日本", "語 ", "\u3000", "1234", "5"]


@pytest.mark.parametrize("path", BENCHMARK_TEXTS, ids=lambda path: path.name.split(".")[1])
def test_a_batch_of_strings_gives_each_its_own_ids_however_the_text_is_cut(docs_tokenizers, path):
    """`encode_ordinary_batch` in one process hands the whole list to the pretokenizer, which joins
    the documents: no chunk may cross two of them (a contraction, a run of spaces, a surrogate pair,
    text that ends in whitespace), on Japanese and German cut anywhere."""
    text = gzip.open(require(path), "rt", encoding="utf-8").read()[:60_000]
    cuts = sorted(random.Random(5).sample(range(len(text)), 400))
    documents = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])] + BOUNDARY_PIECES
    for tokenizer in docs_tokenizers.values():
        expected = [chunk_by_chunk(tokenizer, document) for document in documents]
        assert tokenizer.encode_ordinary_batch(documents, workers=1) == expected


def test_a_batch_under_a_pattern_with_no_compiled_scanner_gives_each_its_own_ids(docs_tokenizers):
    """A pattern of the user's own has no compiled scanner: its batch is packed from `split`."""
    spec = replace(
        docs_tokenizers["gpt2"].spec, pretokenizer=ComponentConfig("regex", {"pattern": r"\w+|\s+|[^\w\s]+"})
    )
    tokenizer = bpe_core.Tokenizer(spec)
    assert tokenizer.pretokenizer.scanner is None
    text = gzip.open(require(BENCHMARK_TEXTS[1]), "rt", encoding="utf-8").read()[:30_000]
    documents = [text[start : start + 300] for start in range(0, 30_000, 300)]
    assert tokenizer.encode_ordinary_batch(documents, workers=1) == [chunk_by_chunk(tokenizer, d) for d in documents]


def test_a_batch_is_joined_in_groups_of_bounded_text(docs_tokenizers, monkeypatch):
    """However large an in-process batch, the pretokenizer is asked to pack (`PacksChunks.pack`)
    at most STRINGS_PER_CALL characters of it at once (or one longer document), and the ids are
    each document's own."""
    monkeypatch.setattr(bpe_core.batching, "STRINGS_PER_CALL", 5_000)
    text = gzip.open(require(BENCHMARK_TEXTS[0]), "rt", encoding="utf-8").read()[:60_000]
    documents = [text[start : start + size] for start, size in zip(range(0, 60_000, 1_500), [700, 6_000, 10] * 20)]
    tokenizer = docs_tokenizers["o200k"]
    calls: list[int] = []
    pack = tokenizer.pretokenizer.pack

    def counted(group: list[str]) -> contract.PackedChunks:
        calls.append(sum(map(len, group)))
        return pack(group)

    monkeypatch.setattr(tokenizer.pretokenizer, "pack", counted)
    assert tokenizer.encode_ordinary_batch(documents, workers=1) == [chunk_by_chunk(tokenizer, d) for d in documents]
    assert len(calls) > 10 and sum(calls) == sum(map(len, documents))
    assert all(size <= 5_000 or size == 6_000 for size in calls)


@settings(max_examples=100, deadline=None)
@given(documents=st.lists(st.text(max_size=12) | st.sampled_from(BOUNDARY_PIECES), max_size=80))
def test_a_batch_of_any_strings_gives_each_its_own_ids(docs_tokenizers, documents):
    for tokenizer in docs_tokenizers.values():
        expected = [chunk_by_chunk(tokenizer, document) for document in documents]
        assert tokenizer.encode_ordinary_batch(documents, workers=1) == expected


def test_a_new_tokenizer_trained_on_english_gives_the_chunk_by_chunk_ids_on_japanese_throughout(docs_tokenizers):
    """Few Japanese characters are whole tokens of a vocabulary trained on the English docs, so the
    engine may stop reading them as units partway: a new tokenizer's ids on a Japanese text are the
    chunk-by-chunk ids from its first character to its last, and the same again on a second pass."""
    text = gzip.open(require(BENCHMARK_TEXTS[0]), "rt", encoding="utf-8").read()[:100_000]
    for trained in docs_tokenizers.values():
        tokenizer = bpe_core.Tokenizer(trained.spec)
        expected = chunk_by_chunk(tokenizer, text)
        assert tokenizer.encode_ordinary(text) == expected
        assert tokenizer.encode_ordinary(text) == expected


WIDTH_RUNS = regex.compile(r"[\x80-\u07ff]+|[\u0800-\uffff]+|[\U00010000-\U0010ffff]+")


@settings(max_examples=300)
@given(
    text=st.text(alphabet=st.sampled_from("ab \n\t0é€日本😀\ud800\x7f\x80"), max_size=120)
    | st.text(max_size=60)
    | st.sampled_from(["", "é", "abcdefgh" * 5 + "ü", "ü" + "abcdefgh" * 5, "日本語" * 30])
)
def test_wide_runs_are_the_runs_a_regex_finds_of_characters_of_one_utf8_width(text):
    data = text.encode("utf-8", "surrogatepass")
    expected = [
        value
        for run in WIDTH_RUNS.finditer(text)
        for value in (*run.span(), len(run.group()[0].encode("utf-8", "surrogatepass")))
    ]
    assert list(wide_runs(data + PADDING, len(data))) == expected


# ---------------------------------------------------------------- the DNA plugin's packed path

DNA_POLICIES = ({}, {"case": "keep"}, {"n": "symbol"}, {"iupac": "error"}, {"max_chunk": 40})


@pytest.fixture(scope="module")
def dna_tokenizers() -> list[bpe_core.Tokenizer]:
    """A lambda-trained vocabulary per policy (soft-masked chr17 too, so `case: keep` learns lower case)."""
    return [
        bpe_core.train(
            {
                "input": {"reader": "fasta"},
                "pretokenizer": {"name": "dna-nucleotides", **policy},
                "trainer": {"vocab_size": 600},
            },
            [LAMBDA_PATH, CHR17_PATH],
            progress=False,
        )
        for policy in DNA_POLICIES
    ]


def dna_chunk_by_chunk(tokenizer: bpe_core.Tokenizer, sequence: str) -> list[int]:
    encoder = engine.Encoder(tokenizer.alphabet_size, tokenizer.spec.internal_merges)
    pretokenizer = tokenizer.pretokenizer
    return [
        token for chunk in pretokenizer.split(sequence) for token in encoder.encode_symbols(pretokenizer.symbols(chunk))
    ]


def test_packed_dna_encoding_gives_the_chunk_by_chunk_ids_on_reads_and_genomes(dna_tokenizers):
    reads = [sequence for _, sequence in fastq_reads()[:500]]
    (ecoli,) = fasta_records(ECOLI_PATH)
    (chr17,) = fasta_records(CHR17_PATH)
    sequences = [*reads, ecoli[1][:200_000], chr17[1], chr17[1].lower()]
    for tokenizer in dna_tokenizers:
        assert isinstance(tokenizer.pretokenizer, contract.PacksChunks)
        for sequence in sequences:
            assert tokenizer.encode(sequence) == dna_chunk_by_chunk(tokenizer, sequence)


@settings(max_examples=150, deadline=None)
@given(sequence=st.text(alphabet="ACGTacgtNnRYKMSWBDHVrx\u00e9", max_size=80) | st.sampled_from(["", "N", "ACGT" * 60]))
def test_packed_dna_encoding_gives_the_chunk_by_chunk_ids_or_the_same_error_on_any_letters(dna_tokenizers, sequence):
    for tokenizer in dna_tokenizers:
        try:
            expected = dna_chunk_by_chunk(tokenizer, sequence)
        except bpe_core.BpeError as error:
            with pytest.raises(bpe_core.BpeError) as raised:
                tokenizer.encode(sequence)
            assert str(raised.value) == str(error)
            continue
        assert tokenizer.encode(sequence) == expected


# ---------------------------------------------------------------- the scanners the loop walks with

O200K_EDGES = [
    "\u0301abc",  # a mark first: Upperish and Lowerish, and no letter
    ".\u0301x 12ab !Word\r\nword\n\rABC's x'LL",
    "(Über) «ñandú» 3x x3 \u00aa\u02b0 𝐀𝐁c",
]


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_scanner_splits_the_python_docs_like_the_published_pattern(name, docs_text):
    pretokenizer = registry().pretokenizer(name, {})
    text = docs_text[:400_000]
    assert pretokenizer.scanner.split(text) == regex.findall(PUBLISHED_PATTERNS[name], text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_scanner_splits_any_unicode_text_like_the_published_pattern(name):
    pretokenizer = registry().pretokenizer(name, {})

    @settings(max_examples=300, deadline=None)
    @given(text=st.text(max_size=40) | st.sampled_from(O200K_EDGES))
    def same_chunks(text):
        assert pretokenizer.scanner.split(text) == regex.findall(PUBLISHED_PATTERNS[name], text)

    same_chunks()
