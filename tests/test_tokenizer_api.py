"""The Tokenizer API: special tokens, tokenizer files, batch and streaming use, BPE-dropout and
normalizers, on tokenizers trained on the Python documentation.

Ids: 256 bytes, then merges in order, then special tokens (position end); with position start the
special tokens take ids 0..S-1 and everything else moves up by S. Text that contains a special
token's string is an error unless allowed; untrusted text (encode_ordinary) never yields a
special id.
"""

import base64
import gc
import hashlib
import importlib.metadata
import json
import re
from array import array
from pathlib import Path

import pytest
import regex
from helpers.interop import published_vocabulary_path
from helpers.outputs import stray_temporary_files
from helpers.patterns import GPT2_PATTERN
from helpers.processes import child_processes, wait_until_gone
from helpers.text import (
    EOT,
    PAD,
    SPECIALS,
    gpt2_byte_characters,
    multilingual_excerpt,
    non_ascii_paragraphs,
    paragraphs,
    training_text,
)
from hypothesis import given
from hypothesis import strategies as st

import bpe_core
from bpe_core import BpeError

VOCAB = 600

# Fragments that look like special tokens, for text that must never yield a special id.
SPECIAL_LOOKALIKES = [
    EOT,
    PAD,
    "<|",
    "|>",
    "<|endoftext",
    "endoftext|>",
    "<|pad",
    "<<|endoftext|>>",
    "<|endoftext|",
    "\n\n",
]
untrusted_text = st.lists(
    st.one_of(st.text(max_size=16), st.sampled_from(SPECIAL_LOOKALIKES)),
    max_size=10,
).map("".join)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Paragraphs of the documentation separated by <|endoftext|>, as GPT-2's training data was:
    the special token's string is frequent in the training text itself."""
    path = tmp_path_factory.mktemp("api") / "docs-with-eot.txt"
    path.write_text(EOT.join(paragraphs(training_text())), encoding="utf-8", newline="")
    return path


def train_text(corpus: Path, position: str = "end", **trainer: object) -> bpe_core.Tokenizer:
    config = {
        "name": f"docs-{position}",
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": VOCAB, **trainer},
        "special_tokens": {"tokens": SPECIALS, "position": position},
    }
    return bpe_core.train(config, [corpus], workers=1, progress=False)


@pytest.fixture(scope="module")
def tokenizer(corpus: Path) -> bpe_core.Tokenizer:
    return train_text(corpus, "end")


@pytest.fixture(scope="module")
def start_tokenizer(corpus: Path) -> bpe_core.Tokenizer:
    return train_text(corpus, "start")


@pytest.fixture(scope="module", params=["end", "start"])
def either(
    request: pytest.FixtureRequest, tokenizer: bpe_core.Tokenizer, start_tokenizer: bpe_core.Tokenizer
) -> bpe_core.Tokenizer:
    return tokenizer if request.param == "end" else start_tokenizer


def special_id_set(tokenizer: bpe_core.Tokenizer) -> set[int]:
    return set(tokenizer.special_ids.values())


# ---------------------------------------------------------------- special tokens


def test_special_tokens_at_end_follow_the_bytes_and_all_merges(tokenizer: bpe_core.Tokenizer) -> None:
    merges = len(tokenizer.merges)
    assert merges == VOCAB - 256 - len(SPECIALS)
    assert tokenizer.special_ids == {EOT: 256 + merges, PAD: 257 + merges}
    assert tokenizer.vocab_size == VOCAB
    assert [tokenizer.token_bytes(byte) for byte in range(256)] == [bytes([byte]) for byte in range(256)]


def test_special_tokens_at_start_take_the_first_ids_and_shift_everything_else(
    tokenizer: bpe_core.Tokenizer, start_tokenizer: bpe_core.Tokenizer
) -> None:
    shift = len(SPECIALS)
    assert start_tokenizer.special_ids == {EOT: 0, PAD: 1}
    assert start_tokenizer.vocab_size == VOCAB
    assert [start_tokenizer.token_bytes(shift + byte) for byte in range(256)] == [bytes([byte]) for byte in range(256)]
    assert start_tokenizer.merges == [(left + shift, right + shift) for left, right in tokenizer.merges]
    text = multilingual_excerpt()
    assert start_tokenizer.encode(text) == [token + shift for token in tokenizer.encode(text)]
    assert start_tokenizer.decode(start_tokenizer.encode(text)) == text


def test_merges_never_produce_a_special_token(either: bpe_core.Tokenizer, corpus: Path) -> None:
    specials = special_id_set(either)
    assert not any(left in specials or right in specials for left, right in either.merges)
    training = corpus.read_bytes().decode("utf-8")
    assert training.count(EOT) > 500  # the string is frequent in training, yet never becomes the special id
    ids = either.encode_ordinary(training)
    assert not specials & set(ids)
    assert either.decode(ids) == training


def test_encode_rejects_text_containing_a_special_tokens_string(either: bpe_core.Tokenizer) -> None:
    for text in (f"user says {EOT} here", f"{PAD}", f"a{EOT}{PAD}b"):
        with pytest.raises(BpeError, match=re.escape("<|")):
            either.encode(text)


def test_encode_ordinary_treats_special_strings_as_text(either: bpe_core.Tokenizer) -> None:
    text = f"before {EOT} middle {PAD}after"
    ids = either.encode_ordinary(text)
    assert not special_id_set(either) & set(ids)
    assert either.decode(ids) == text
    assert either.encode(text, disallowed_special=()) == ids


def test_allowed_special_encodes_the_special_id_in_place(either: bpe_core.Tokenizer) -> None:
    eot, pad = either.special_ids[EOT], either.special_ids[PAD]
    first, second = "The docs say: ", " and then some."
    expected = either.encode_ordinary(first) + [eot] + either.encode_ordinary(second) + [pad]
    assert either.encode(first + EOT + second + PAD, allowed_special="all") == expected
    assert either.encode(first + EOT + second + PAD, allowed_special={EOT, PAD}) == expected
    assert either.encode(EOT + EOT, allowed_special={EOT}) == [eot, eot]


def test_allowing_one_special_token_still_rejects_the_others(either: bpe_core.Tokenizer) -> None:
    with pytest.raises(BpeError, match=re.escape(PAD)):
        either.encode(f"x{EOT}y{PAD}", allowed_special={EOT})
    ids = either.encode(f"x{EOT}y{PAD}", allowed_special={EOT}, disallowed_special=())
    assert ids.count(either.special_ids[EOT]) == 1 and either.special_ids[PAD] not in ids


def test_allowed_special_naming_an_unknown_token_is_an_error(either: bpe_core.Tokenizer) -> None:
    with pytest.raises(BpeError, match=re.escape("<|im_start|>")):
        either.encode("hello", allowed_special={"<|im_start|>"})


def test_special_rules_remembered_per_arguments_check_every_text(either: bpe_core.Tokenizer) -> None:
    """The rules for hashable arguments (frozenset, tuple, "all") are worked out once and
    remembered, a set's each time: either way each text is searched, and both give the same."""
    text = f"x{EOT}y"
    for _ in range(2):
        assert either.encode("plain text") == either.encode_ordinary("plain text")
        with pytest.raises(BpeError, match=re.escape(EOT)):
            either.encode(text)
        for allowed in ({EOT}, frozenset({EOT}), (EOT,)):
            assert either.encode(text, allowed_special=allowed) == either.encode(text, allowed_special="all")
            with pytest.raises(BpeError, match=re.escape(PAD)):
                either.encode(text + PAD, allowed_special=allowed)
        with pytest.raises(BpeError, match=re.escape("<|im_start|>")):
            either.encode("hello", allowed_special=frozenset({"<|im_start|>"}))


def test_decode_renders_special_tokens_as_their_text(either: bpe_core.Tokenizer) -> None:
    text = non_ascii_paragraphs(1)[0]
    ids = [either.special_ids[PAD]] + either.encode(text) + [either.special_ids[EOT]]
    assert either.decode(ids) == PAD + text + EOT
    assert either.token_bytes(either.special_ids[EOT]) == EOT.encode("utf-8")
    assert either.token_symbols(either.special_ids[PAD]) == (PAD,)


@pytest.mark.both_modes
@given(text=untrusted_text)
def test_untrusted_text_never_yields_a_special_id(either: bpe_core.Tokenizer, text: str) -> None:
    ids = either.encode_ordinary(text)
    assert not special_id_set(either) & set(ids)
    assert all(0 <= token < either.vocab_size for token in ids)
    assert either.decode(ids) == text


@pytest.mark.both_modes
@given(text=untrusted_text)
def test_allowed_special_yields_one_special_id_per_occurrence(either: bpe_core.Tokenizer, text: str) -> None:
    ids = either.encode(text, allowed_special="all")
    occurrences = len(re.findall(f"{re.escape(EOT)}|{re.escape(PAD)}", text))
    assert sum(token in special_id_set(either) for token in ids) == occurrences
    assert either.decode(ids) == text


# ---------------------------------------------------------------- tokenizer files


def test_save_and_load_give_the_same_ids_merges_and_specials(either: bpe_core.Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    either.save(path)
    loaded = bpe_core.load(path)
    assert loaded.merges == either.merges
    assert loaded.merge_counts == either.merge_counts
    assert loaded.vocab_size == either.vocab_size
    assert loaded.special_ids == either.special_ids
    assert loaded.alphabet == either.alphabet
    assert loaded.name == either.name
    text = multilingual_excerpt() + EOT + non_ascii_paragraphs(3)[2]
    assert loaded.encode(text, allowed_special="all") == either.encode(text, allowed_special="all")
    assert loaded.decode(loaded.encode(text, allowed_special="all")) == text
    loaded.save(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == json.loads(
        path.read_text(encoding="utf-8")
    )


def test_load_accepts_a_str_path(tokenizer: bpe_core.Tokenizer, tmp_path: Path) -> None:
    tokenizer.save(str(tmp_path / "tok.json"))
    assert bpe_core.load(str(tmp_path / "tok.json")).merges == tokenizer.merges


def test_tokenizer_file_holds_everything_needed_and_the_provenance(
    tokenizer: bpe_core.Tokenizer, corpus: Path, tmp_path: Path
) -> None:
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "bpe-core"
    assert data["version"] == 3
    assert data["config"]["trainer"]["vocab_size"] == VOCAB
    assert data["config"]["special_tokens"] == {"tokens": SPECIALS, "position": "end"}
    assert data["config"]["pretokenizer"]["name"] == "gpt2"
    assert data["pretokenizer"]["name"] == "gpt2"
    assert data["plugins"] == {"text": importlib.metadata.version("bpe-core")}
    byte_of = gpt2_byte_characters()
    assert [byte_of[label] for label in data["alphabet"]] == list(range(256))
    packed = array("i", base64.b64decode(data["merges"])).tolist()  # little-endian 32-bit ids, two per merge
    assert list(zip(packed[0::2], packed[1::2])) == tokenizer.merges
    counts = array("q", base64.b64decode(data["merge_counts"])).tolist()  # little-endian 64-bit, one per merge
    assert counts == tokenizer.merge_counts
    assert data["special_tokens"] == {"tokens": SPECIALS, "position": "end"}

    provenance = data["provenance"]
    raw = corpus.read_bytes()
    (source,) = provenance["inputs"]
    assert source["path"] == str(corpus)
    assert source["size"] == len(raw)
    assert source["sha256"] == hashlib.sha256(raw).hexdigest()
    chunks = regex.findall(GPT2_PATTERN, raw.decode("utf-8"))
    assert provenance["chunks"] == len(chunks)
    assert provenance["unique_chunks"] == len(set(chunks))
    assert provenance["symbols"] == len(raw)
    assert provenance["merges_learned"] == len(tokenizer.merges)
    assert isinstance(provenance["seconds"], (int, float)) and provenance["seconds"] >= 0


def test_provenance_lists_every_input_file(tmp_path: Path) -> None:
    texts = non_ascii_paragraphs(3)
    paths = []
    for index, text in enumerate(texts):
        paths.append(tmp_path / f"part-{index}.txt")
        paths[-1].write_text(text, encoding="utf-8", newline="")
    trained = bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 270}}, paths, workers=1, progress=False
    )
    inputs = trained.provenance["inputs"]
    assert [source["path"] for source in inputs] == [str(path) for path in paths]
    assert [source["sha256"] for source in inputs] == [hashlib.sha256(path.read_bytes()).hexdigest() for path in paths]
    assert [source["size"] for source in inputs] == [len(text.encode("utf-8")) for text in texts]


@pytest.mark.parametrize("failure", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_save_is_atomic_when_writing_fails(
    tokenizer: bpe_core.Tokenizer,
    start_tokenizer: bpe_core.Tokenizer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    failure: BaseException,
) -> None:
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    before = path.read_bytes()

    def failing_dumps(*args: object, **kwargs: object) -> str:
        raise failure

    monkeypatch.setattr(json, "dumps", failing_dumps)
    with pytest.raises(type(failure)):
        start_tokenizer.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert stray_temporary_files(tmp_path) == []
    assert bpe_core.load(path).special_ids == tokenizer.special_ids


def test_save_into_a_missing_directory_is_an_error_naming_the_path(
    tokenizer: bpe_core.Tokenizer, tmp_path: Path
) -> None:
    with pytest.raises(BpeError, match="no-such-dir"):
        tokenizer.save(tmp_path / "no-such-dir" / "tok.json")


def damaged(data: dict, how: str) -> object:
    """A tokenizer file's JSON damaged in one way (a str: raw file text)."""
    return {
        "truncated": json.dumps(data)[:1000],
        "empty": "",
        "not-json": "this is not a tokenizer\n",
        "json-array": [1, 2, 3],
        "wrong-format": {**data, "format": "tiktoken"},
        "no-merges": {key: value for key, value in data.items() if key != "merges"},
        "no-alphabet": {key: value for key, value in data.items() if key != "alphabet"},
        "merge-with-three-ids": {**data, "merges": [[1, 2, 3]]},
        "merge-of-unknown-id": {**data, "merges": [[100000, 1]]},
        "merges-not-a-list": {**data, "merges": 5},
        "alphabet-cut-short": {**data, "alphabet": data["alphabet"][:-1]},
        "pretokenizer-not-a-mapping": {**data, "pretokenizer": "gpt2"},
        "unknown-pretokenizer-option": {**data, "pretokenizer": {"name": "gpt2", "options": {"lowercase": True}}},
        "unknown-normalizer-option": {**data, "normalizers": [{"name": "nfkc", "options": {"form": "x"}}]},
        "plugins-not-a-mapping": {**data, "pretokenizer": {"name": "protein", "options": {}}, "plugins": ["protein"]},
        "special-position-middle": {**data, "special_tokens": {"tokens": SPECIALS, "position": "middle"}},
        "padding-not-a-number": {**data, "padding": "lots"},
        "version-not-a-number": {**data, "version": "one"},
    }[how]


DAMAGE = [
    "truncated", "empty", "not-json", "json-array", "wrong-format", "no-merges", "no-alphabet", "merge-with-three-ids",
    "merge-of-unknown-id", "merges-not-a-list", "alphabet-cut-short", "pretokenizer-not-a-mapping",
    "unknown-pretokenizer-option", "unknown-normalizer-option", "plugins-not-a-mapping", "special-position-middle",
    "padding-not-a-number", "version-not-a-number",
]  # fmt: skip


@pytest.mark.parametrize("how", DAMAGE)
def test_load_of_a_damaged_tokenizer_file_is_an_error_naming_it(
    tokenizer: bpe_core.Tokenizer, tmp_path: Path, how: str
) -> None:
    tokenizer.save(tmp_path / "good.json")
    content = damaged(json.loads((tmp_path / "good.json").read_text(encoding="utf-8")), how)
    path = tmp_path / f"{how}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    with pytest.raises(BpeError) as error:  # a BpeError, never another exception
        bpe_core.load(path)
    assert str(path) in str(error.value)


def test_load_of_binary_garbage_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "garbage.json"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(BpeError, match="garbage.json"):
        bpe_core.load(path)


def test_load_of_a_newer_format_version_says_to_upgrade(tokenizer: bpe_core.Tokenizer, tmp_path: Path) -> None:
    tokenizer.save(tmp_path / "tok.json")
    data = json.loads((tmp_path / "tok.json").read_text(encoding="utf-8"))
    (tmp_path / "tok.json").write_text(json.dumps({**data, "version": 4}), encoding="utf-8")
    with pytest.raises(BpeError, match="version 4.*upgrade"):
        bpe_core.load(tmp_path / "tok.json")


def test_a_version_1_file_with_lists_of_ids_loads_as_the_same_tokenizer(tmp_path: Path, docs_text: str) -> None:
    """Version 1 wrote the merges as [left, right] lists and an import's ids as a list; version 2
    packs both. o200k_base, the published file, as both versions."""
    imported = bpe_core.from_tiktoken(published_vocabulary_path("o200k"))
    imported.save(tmp_path / "o200k.json")
    data = json.loads((tmp_path / "o200k.json").read_text(encoding="utf-8"))
    merges = array("i", base64.b64decode(data["merges"])).tolist()
    ids = array("i", base64.b64decode(data["ids"])).tolist()
    old = {**data, "version": 1, "merges": [merges[at : at + 2] for at in range(0, len(merges), 2)], "ids": ids}
    (tmp_path / "o200k-v1.json").write_text(json.dumps(old), encoding="utf-8")
    reloaded = bpe_core.load(tmp_path / "o200k-v1.json")
    sample = docs_text[:100_000]
    assert reloaded.spec == imported.spec and reloaded.encode(sample) == imported.encode(sample)


def test_a_version_2_file_with_lists_of_counts_loads_as_the_same_tokenizer(
    tokenizer: bpe_core.Tokenizer, tmp_path: Path
) -> None:
    """Version 2 wrote the merge counts and token usage as lists; version 3 packs them."""
    tokenizer.save(tmp_path / "tok.json")
    data = json.loads((tmp_path / "tok.json").read_text(encoding="utf-8"))
    old = {**data, "version": 2, "merge_counts": tokenizer.merge_counts, "token_usage": tokenizer.token_usage}
    (tmp_path / "tok-v2.json").write_text(json.dumps(old), encoding="utf-8")
    reloaded = bpe_core.load(tmp_path / "tok-v2.json")
    assert tokenizer.merge_counts and reloaded.spec == bpe_core.load(tmp_path / "tok.json").spec


def test_load_of_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(BpeError, match="absent.json"):
        bpe_core.load(tmp_path / "absent.json")


# ---------------------------------------------------------------- ids and tokens


def test_every_merged_token_is_the_concatenation_of_its_pair(tokenizer: bpe_core.Tokenizer) -> None:
    byte_of = gpt2_byte_characters()
    for rank, (left, right) in enumerate(tokenizer.merges):
        token = 256 + rank
        assert left < token and right < token  # merges only use ids that already exist
        assert tokenizer.token_bytes(token) == tokenizer.token_bytes(left) + tokenizer.token_bytes(right)
        assert tokenizer.token_symbols(token) == tokenizer.token_symbols(left) + tokenizer.token_symbols(right)
        assert bytes(byte_of[label] for label in tokenizer.token_symbols(token)) == tokenizer.token_bytes(token)


@pytest.mark.parametrize("bad", [-1, VOCAB, VOCAB + 1000])
def test_decode_of_an_id_outside_the_vocabulary_is_an_error_naming_it(tokenizer: bpe_core.Tokenizer, bad: int) -> None:
    with pytest.raises(BpeError, match=str(bad)):
        tokenizer.decode([72, bad, 105])


# ---------------------------------------------------------------- encode_batch


@pytest.fixture
def any_batch_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text batches of any size go to forked workers (by default a small one stays in this process)."""
    monkeypatch.setattr(bpe_core.batching, "MIN_CHARACTERS_PER_WORKER", 1)
    monkeypatch.setattr(bpe_core.batching, "MIN_TEXT_PROCESSES", 2)


def test_encode_batch_keeps_order_and_equals_encode(tokenizer: bpe_core.Tokenizer, any_batch_forks: None) -> None:
    documents = paragraphs(training_text())[:300] + non_ascii_paragraphs(40) + ["", " ", multilingual_excerpt()]
    expected = [tokenizer.encode(document) for document in documents]
    tokenizer.close()
    before = child_processes()
    assert tokenizer.encode_batch(documents, workers=2) == expected
    workers = child_processes() - before
    assert workers, "no worker process serves a batch with workers=2"
    assert tokenizer.encode_batch(documents, workers=2) == expected
    assert workers <= child_processes(), "the workers did not stay up for the next batch"
    assert tokenizer.encode_batch(documents, workers=1) == expected
    tokenizer.close()
    assert not wait_until_gone(workers), "close() left worker processes running"
    assert tokenizer.encode_batch([], workers=2) == []


def test_a_text_batch_too_small_to_keep_two_workers_busy_forks_none(tokenizer: bpe_core.Tokenizer) -> None:
    documents = paragraphs(training_text())[:300]
    assert sum(map(len, documents)) < 2 * bpe_core.batching.MIN_CHARACTERS_PER_WORKER
    tokenizer.close()
    before = child_processes()
    assert tokenizer.encode_batch(documents, workers=2) == [tokenizer.encode(document) for document in documents]
    assert child_processes() <= before


def test_encode_batch_rejects_a_special_string_in_any_document(
    tokenizer: bpe_core.Tokenizer, any_batch_forks: None
) -> None:
    documents = paragraphs(training_text())[:200]
    documents[150] += EOT
    with pytest.raises(BpeError, match=re.escape(f"document 150: line 1 contains the special token '{EOT}'")):
        tokenizer.encode_batch(documents, workers=2)


def test_encode_batch_takes_the_special_token_rules_of_encode(
    tokenizer: bpe_core.Tokenizer, any_batch_forks: None
) -> None:
    documents = paragraphs(training_text())[:200]
    documents[10] += EOT
    documents[120] = PAD + documents[120] + EOT
    for workers in (2, 1):
        for rules in ({"allowed_special": {EOT, PAD}}, {"allowed_special": "all"}, {"disallowed_special": ()}):
            expected = [tokenizer.encode(document, **rules) for document in documents]
            assert tokenizer.encode_batch(documents, workers=workers, **rules) == expected
        assert expected == [tokenizer.encode_ordinary(document) for document in documents]  # disallowed_special=()
        with pytest.raises(BpeError, match=re.escape(f"document 120: line 1 contains the special token '{PAD}'")):
            tokenizer.encode_batch(documents, workers=workers, allowed_special={EOT})


def test_a_tokenizer_garbage_collected_stops_its_batch_workers(
    tokenizer: bpe_core.Tokenizer, any_batch_forks: None
) -> None:
    own = bpe_core.Tokenizer(tokenizer.spec)
    documents = paragraphs(training_text())[:200]
    expected = tokenizer.encode_ordinary_batch(documents, workers=1)
    before = child_processes()
    assert own.encode_ordinary_batch(documents, workers=2) == expected
    workers = child_processes() - before
    assert workers
    del own
    gc.collect()
    assert not wait_until_gone(workers)


def test_encode_ordinary_batch_treats_special_strings_as_text(
    tokenizer: bpe_core.Tokenizer, any_batch_forks: None
) -> None:
    documents = paragraphs(training_text())[:200] + [EOT, f"a{PAD}b", ""]
    expected = [tokenizer.encode_ordinary(document) for document in documents]
    tokenizer.close()
    before = child_processes()
    assert tokenizer.encode_ordinary_batch(documents, workers=2) == expected
    assert child_processes() - before, "no worker process serves a batch with workers=2"
    assert tokenizer.encode_ordinary_batch(documents, workers=1) == expected
    assert not special_id_set(tokenizer) & {token for ids in expected for token in ids}


# ---------------------------------------------------------------- decode_stream


def stream_pieces(tokenizer: bpe_core.Tokenizer, ids: list[int]) -> list[str]:
    stream = tokenizer.decode_stream()
    return [stream.push([token]) for token in ids] + [stream.flush()]


def test_decode_stream_holds_back_a_character_split_across_tokens(tokenizer: bpe_core.Tokenizer) -> None:
    ids = tokenizer.encode_ordinary("😀")
    # the training text is ASCII, so no merge joins the emoji's four bytes
    assert [tokenizer.token_bytes(token) for token in ids] == [bytes([byte]) for byte in "😀".encode()]
    assert stream_pieces(tokenizer, ids) == ["", "", "", "😀", ""]


def test_decode_stream_yields_the_text_of_emoji_cjk_and_accents(either: bpe_core.Tokenizer) -> None:
    text = "naïve café — 日本語のテキスト 😀👍🏽 𝑥² and Łódź\n" + non_ascii_paragraphs(1)[0]
    pieces = stream_pieces(either, either.encode_ordinary(text))
    assert "".join(pieces) == text
    assert not any("\ufffd" in piece for piece in pieces)


def test_decode_stream_renders_special_tokens(either: bpe_core.Tokenizer) -> None:
    ids = either.encode("日本" + EOT, allowed_special="all")
    assert "".join(stream_pieces(either, ids)) == "日本" + EOT


@pytest.mark.both_modes
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufffd")))
def test_decode_stream_never_yields_a_partial_character(tokenizer: bpe_core.Tokenizer, text: str) -> None:
    pieces = stream_pieces(tokenizer, tokenizer.encode_ordinary(text))
    assert "".join(pieces) == text
    assert not any("\ufffd" in piece for piece in pieces)


# ---------------------------------------------------------------- BPE-dropout


DROPOUT_TEXT = "The tokenizer module provides a lexical scanner for Python source code, implemented in Python."


def test_dropout_is_off_by_default(tokenizer: bpe_core.Tokenizer) -> None:
    text = multilingual_excerpt()
    plain = tokenizer.encode(text)
    assert tokenizer.encode(text) == plain
    assert tokenizer.encode(text, dropout=0.0) == plain
    assert tokenizer.encode(text, dropout=0.0, seed=12) == plain
    assert tokenizer.encode_ordinary(text, dropout=0.0, seed=3) == tokenizer.encode_ordinary(text)


def test_dropout_with_the_same_seed_is_reproducible(tokenizer: bpe_core.Tokenizer) -> None:
    first = tokenizer.encode(DROPOUT_TEXT, dropout=0.3, seed=42)
    assert tokenizer.encode(DROPOUT_TEXT, dropout=0.3, seed=42) == first
    assert tokenizer.encode_ordinary(DROPOUT_TEXT, dropout=0.3, seed=42) == first


def test_dropout_with_other_seeds_usually_differs(tokenizer: bpe_core.Tokenizer) -> None:
    reference = tokenizer.encode(DROPOUT_TEXT, dropout=0.3, seed=0)
    others = [tokenizer.encode(DROPOUT_TEXT, dropout=0.3, seed=seed) for seed in range(1, 6)]
    assert any(other != reference for other in others)


def test_dropout_output_decodes_to_the_same_text_with_at_least_as_many_tokens(either: bpe_core.Tokenizer) -> None:
    text = multilingual_excerpt()
    plain = either.encode(text)
    for seed in range(3):
        dropped = either.encode(text, dropout=0.2, seed=seed)
        assert either.decode(dropped) == text
        assert len(dropped) > len(plain)


def test_dropout_keeps_special_tokens(either: bpe_core.Tokenizer) -> None:
    ids = either.encode(DROPOUT_TEXT + EOT, allowed_special="all", dropout=0.5, seed=1)
    assert ids[-1] == either.special_ids[EOT]
    assert either.decode(ids) == DROPOUT_TEXT + EOT


@pytest.mark.parametrize("dropout", [-0.1, 1.0, 1.5])
def test_dropout_outside_zero_to_one_is_an_error(tokenizer: bpe_core.Tokenizer, dropout: float) -> None:
    with pytest.raises(BpeError, match="dropout"):
        tokenizer.encode("text", dropout=dropout, seed=1)


# ---------------------------------------------------------------- normalizers


@pytest.fixture(scope="module")
def nfkc_tokenizer(corpus: Path) -> bpe_core.Tokenizer:
    config = {"pretokenizer": {"name": "gpt2"}, "normalizer": "nfkc", "trainer": {"vocab_size": 400}}
    return bpe_core.train(config, [corpus], workers=1, progress=False)


def test_nfkc_normalizer_encodes_compatibility_characters_as_their_plain_form(
    nfkc_tokenizer: bpe_core.Tokenizer,
) -> None:
    assert nfkc_tokenizer.encode("ﬁ") == nfkc_tokenizer.encode("fi")
    assert nfkc_tokenizer.encode("ｐｙｔｈｏｎ ①") == nfkc_tokenizer.encode("python 1")
    assert nfkc_tokenizer.decode(nfkc_tokenizer.encode("ﬁle")) == "file"


def test_nfkc_normalizer_is_recorded_in_the_file_and_applied_after_loading(
    nfkc_tokenizer: bpe_core.Tokenizer, tmp_path: Path
) -> None:
    path = tmp_path / "nfkc.json"
    nfkc_tokenizer.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [item["name"] for item in data["normalizers"]] == ["nfkc"]
    loaded = bpe_core.load(path)
    assert loaded.encode("ﬁ") == loaded.encode("fi") == nfkc_tokenizer.encode("fi")
    assert loaded.normalize("ﬁ ①") == "fi 1"


def test_without_a_normalizer_compatibility_characters_stay_distinct(tokenizer: bpe_core.Tokenizer) -> None:
    assert tokenizer.encode("ﬁ") != tokenizer.encode("fi")
    assert tokenizer.decode(tokenizer.encode("ﬁ")) == "ﬁ"
