"""`trainer.forbid`: a pair whose merged token matches a pattern is never merged.

The engine takes a veto, (left id, right id) -> True if the pair must never merge, and must learn
exactly what the naive reference learns when it skips the same pairs (tests/helpers/reference.py),
for both tie rules and for hf's, asking the veto at most once per distinct pair. Continued
training takes the base's merges whatever the veto says, and the veto governs the new ones.

The framework turns the patterns into that veto: byte-level text is matched as the token's UTF-8
decoded with replacement, other alphabets as the base labels joined with no separator. On the
shared Python docs, the lambda phage genome and reads, and POP909 songs no learned token
matches, and training still fills the vocabulary. The patterns are recorded in the tokenizer's
config; one that is no regex is a config error naming `trainer.forbid[i]`.
"""

import dataclasses
from pathlib import Path

import pytest
import regex
from helpers.midi import pop909_paths
from helpers.paths import LAMBDA_PATH, READS_PATH
from helpers.reference import assert_trains_like_the_reference, decode_reference, train_reference
from helpers.strategies import TIE_RULES, WEIGHTS, chunk_shapes
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe_core
from bpe_core import BpeError, engine
from bpe_core.config import load_config
from bpe_core.veto import TokenVeto

LETTERS = "abcdefgh"
LETTER_NEXT_TO_DIGIT = r"\d[a-zA-Z]|[a-zA-Z]\d"
WORDS_PATTERN = r" ?\S+|\s+"


class LetterVeto:
    """The engine tests' veto: the merged token's base symbols as letters (symbol s is
    LETTERS[s]) matched against the patterns; it records every pair it is asked about."""

    def __init__(self, patterns: list[str], alphabet_size: int, merges: list) -> None:
        self.forbidden = forbidden_symbols(patterns, list(range(alphabet_size)))
        self.alphabet_size = alphabet_size
        self.merges = merges  # the trainer's list, growing as it learns
        self.asked: list[tuple[int, int]] = []

    def __call__(self, left: int, right: int) -> bool:
        self.asked.append((left, right))
        return self.forbidden(decode_reference(self.alphabet_size, self.merges, [left, right]))


def forbidden_symbols(patterns: list[str], labels: list[int]):
    """The reference's veto: True when the token's symbols, as letters (symbol s is
    LETTERS[labels[s]]), match a pattern."""

    def forbidden(symbols: list[int]) -> bool:
        text = "".join(LETTERS[labels[symbol]] for symbol in symbols)
        return any(regex.search(pattern, text) for pattern in patterns)

    return forbidden


def run_with_veto(alphabet_size, chunks, weights, num_merges, patterns, tie_break=engine.TIE_SMALLEST, base=()):
    """The engine: `base` replayed, then merges learned up to `num_merges` in all, with a LetterVeto."""
    trainer = engine.Trainer(
        alphabet_size, [list(chunk) for chunk in chunks], list(weights), alphabet_size + num_merges + 1, 0, tie_break
    )
    trainer.replay(list(base))
    veto = LetterVeto(patterns, alphabet_size, trainer.merges)
    trainer.run(num_merges - len(base), veto=veto)
    return trainer, veto


# ---------------------------------------------------------------- strategies


@st.composite
def corpora(draw):
    """(alphabet_size, chunks, weights) over 2-5 symbols: random chunks, runs and periodic ones,
    so that pairs repeat and forbidden tokens come up."""
    alphabet_size = draw(st.integers(2, 5))
    chunk = chunk_shapes(st.integers(0, alphabet_size - 1), max_length=20, max_run=20, max_repeats=8)
    chunks = draw(st.lists(chunk, min_size=1, max_size=8))
    weights = draw(st.lists(WEIGHTS, min_size=len(chunks), max_size=len(chunks)))
    return alphabet_size, chunks, weights


@st.composite
def patterns(draw, alphabet_size=5):
    """1 to 3 small regexes over the letters: literals, anchored literals, classes, repeats."""
    letters = LETTERS[:alphabet_size]
    literal = st.text(st.sampled_from(letters), min_size=1, max_size=3)
    pattern = st.one_of(
        literal,
        literal.map(lambda text: f"^{text}"),
        literal.map(lambda text: f"{text}$"),
        st.builds(lambda first, second: f"[{first}]{second}", literal, literal),
        st.builds(lambda letter, times: f"{letter}{{{times}}}", st.sampled_from(letters), st.integers(2, 4)),
        st.just(r"(.)\1"),
        st.builds(lambda first, second: f"{first}.*{second}", st.sampled_from(letters), st.sampled_from(letters)),
    )
    return draw(st.lists(pattern, min_size=1, max_size=3))


# ---------------------------------------------------------------- engine == reference, with a veto


@pytest.mark.both_modes
@settings(max_examples=300)
@given(corpus=corpora(), forbid=patterns(), num_merges=st.integers(0, 30), tie_break=TIE_RULES)
def test_trainer_with_a_veto_learns_the_merges_of_the_reference_that_skips_the_same_pairs(
    corpus, forbid, num_merges, tie_break
):
    alphabet_size, chunks, weights = corpus
    trainer, veto = run_with_veto(alphabet_size, chunks, weights, num_merges, forbid, engine.TIE_RULES.index(tie_break))
    reference = train_reference(
        alphabet_size, chunks, weights, num_merges, tie_break=tie_break,
        forbidden=forbidden_symbols(forbid, list(range(alphabet_size))),
    )  # fmt: skip
    assert_trains_like_the_reference(trainer, reference)
    assert len(set(veto.asked)) == len(veto.asked), "a pair was asked about twice"
    forbidden = forbidden_symbols(forbid, list(range(alphabet_size)))
    tokens = range(alphabet_size, alphabet_size + len(trainer.merges))
    assert not any(forbidden(decode_reference(alphabet_size, trainer.merges, [token])) for token in tokens)


@pytest.mark.both_modes
@settings(max_examples=150)
@given(corpus=corpora(), forbid=patterns(), num_merges=st.integers(0, 30), data=st.data())
def test_tie_break_hf_with_a_veto_is_smallest_in_the_hf_symbol_order(corpus, forbid, num_merges, data):
    # hf breaks ties by the base symbols' order in Hugging Face's alphabet: relabel each symbol by
    # its place in that order and it is `smallest`; the veto still sees the original symbols
    alphabet_size, chunks, weights = corpus
    order = data.draw(st.permutations(range(alphabet_size)))
    rank = {symbol: place for place, symbol in enumerate(order)}
    trainer = engine.Trainer(
        alphabet_size, [list(chunk) for chunk in chunks], list(weights), alphabet_size + num_merges + 1, 0,
        engine.TIE_HF, list(order),
    )  # fmt: skip
    trainer.run(num_merges, veto=LetterVeto(forbid, alphabet_size, trainer.merges))
    reference = train_reference(
        alphabet_size, [[rank[symbol] for symbol in chunk] for chunk in chunks], weights, num_merges,
        forbidden=forbidden_symbols(forbid, list(order)),
    )  # fmt: skip

    def relabel(token: int) -> int:
        return rank[token] if token < alphabet_size else token

    assert [(relabel(left), relabel(right)) for left, right in trainer.merges] == reference.merges
    assert list(trainer.merge_counts) == reference.merge_counts


@pytest.mark.both_modes
@settings(max_examples=200)
@given(
    corpus=corpora(),
    forbid=patterns(),
    base_merges=st.integers(0, 12),
    new_merges=st.integers(0, 20),
    tie_break=TIE_RULES,
)
def test_replay_takes_the_base_merges_the_veto_forbids_and_the_veto_governs_the_new_ones(
    corpus, forbid, base_merges, new_merges, tie_break
):
    alphabet_size, chunks, weights = corpus
    base = engine.train(
        alphabet_size,
        [list(c) for c in chunks],
        list(weights),
        base_merges,
        tie_break=engine.TIE_RULES.index(tie_break),
    )
    total = len(base.merges) + new_merges
    trainer, _ = run_with_veto(
        alphabet_size, chunks, weights, total, forbid, engine.TIE_RULES.index(tie_break), base=base.merges
    )
    reference = train_reference(
        alphabet_size, chunks, weights, total, tie_break=tie_break,
        forbidden=forbidden_symbols(forbid, list(range(alphabet_size))), base_merges=base.merges,
    )  # fmt: skip
    assert_trains_like_the_reference(trainer, reference)
    assert trainer.merges[: len(base.merges)] == base.merges


@pytest.mark.both_modes
@settings(max_examples=150)
@given(corpus=corpora(), forbid=patterns(), first=st.integers(0, 15), more=st.integers(0, 15), tie_break=TIE_RULES)
def test_continuing_with_the_same_veto_gives_the_merges_of_one_run(corpus, forbid, first, more, tie_break):
    alphabet_size, chunks, weights = corpus
    one_run, _ = run_with_veto(alphabet_size, chunks, weights, first + more, forbid, engine.TIE_RULES.index(tie_break))
    base, _ = run_with_veto(alphabet_size, chunks, weights, first, forbid, engine.TIE_RULES.index(tie_break))
    continued, _ = run_with_veto(
        alphabet_size,
        chunks,
        weights,
        len(base.merges) + more,
        forbid,
        engine.TIE_RULES.index(tie_break),
        base=list(base.merges),
    )
    # a base that ran out of allowed pairs early is where one run runs out too
    assert continued.merges == one_run.merges
    assert continued.merge_counts == one_run.merge_counts
    assert continued.segments() == one_run.segments()


@pytest.mark.both_modes
def test_a_vetoed_pair_is_asked_about_once_however_often_it_occurs():
    # (0, 1) occurs 2,000 times in chunks of every length; forbidden, it is asked about once
    chunks = [[0, 1] * size for size in range(1, 64)] + [[2, 0, 1, 2]] * 50
    asked: list[tuple[int, int]] = []

    def veto(left: int, right: int) -> bool:
        asked.append((left, right))
        return (left, right) == (0, 1)

    trainer = engine.train(3, chunks, [1] * len(chunks), 20, veto=veto)
    assert (0, 1) not in trainer.merges
    assert asked.count((0, 1)) == 1
    assert len(asked) == len(set(asked))


@pytest.mark.both_modes
def test_a_pair_that_merges_create_again_and_again_is_asked_about_once():
    # merging (0, 1) into 3 creates (3, 2) at each of 600 places; forbidden, it is asked once
    asked: list[tuple[int, int]] = []

    def veto(left: int, right: int) -> bool:
        asked.append((left, right))
        return (left, right) == (3, 2)

    trainer = engine.train(3, [[0, 1, 2] * 200] * 3, [1, 2, 3], 10, veto=veto)
    assert trainer.merges[0] == (0, 1)
    assert (3, 2) not in trainer.merges
    assert asked.count((3, 2)) == 1
    assert len(asked) == len(set(asked))


@pytest.mark.both_modes
def test_replay_takes_a_base_merge_the_veto_forbids_and_goes_on_around_the_forbidden_pairs():
    trainer = engine.Trainer(3, [[0, 1, 2, 0, 1]], [1], 3 + 4)
    trainer.replay([(0, 1)])  # 0 1 2 0 1 -> 3 2 3
    trainer.run(3, veto=lambda left, right: (left, right) in ((0, 1), (3, 2)))
    assert trainer.merges == [(0, 1), (2, 3), (3, 4)]
    assert trainer.merge_counts == [2, 1, 1]
    assert trainer.segments() == [[5]]


@pytest.mark.both_modes
def test_a_veto_that_forbids_everything_learns_nothing():
    trainer = engine.train(2, [[0, 1, 0, 1, 1]], [3], 10, veto=lambda left, right: True)
    assert trainer.merges == []
    assert trainer.segments() == [[0, 1, 0, 1, 1]]


# ---------------------------------------------------------------- what the patterns see


def words_config(vocab_size: int, forbid: list[str] | None = None) -> dict:
    """Byte-level words with their leading space: unlike gpt2's, a word holds letters and digits
    together (`sha256`), so letter-digit tokens are learned unless forbidden."""
    trainer: dict = {"vocab_size": vocab_size}
    if forbid is not None:
        trainer["forbid"] = forbid
    return {"name": "forbid", "pretokenizer": {"name": "regex", "pattern": WORDS_PATTERN}, "trainer": trainer}


def learned_texts(tokenizer: bpe_core.Tokenizer) -> list[str]:
    """Each merged token as text (UTF-8, decoded with replacement)."""
    return [tokenizer.token_bytes(token).decode("utf-8", "replace") for token in tokenizer.merged_ids()]


@pytest.fixture(scope="module")
def docs_unforbidden(docs_slice_path: Path) -> bpe_core.Tokenizer:
    return bpe_core.train(words_config(8000), [docs_slice_path], workers=1, progress=False)


@pytest.fixture(scope="module")
def docs_forbidden(docs_slice_path: Path) -> bpe_core.Tokenizer:
    config = words_config(8000, [LETTER_NEXT_TO_DIGIT])
    return bpe_core.train(config, [docs_slice_path], workers=1, progress=False)


@pytest.mark.both_modes
def test_on_the_docs_no_learned_token_has_a_letter_next_to_a_digit(docs_forbidden, docs_unforbidden):
    assert any(regex.search(LETTER_NEXT_TO_DIGIT, text) for text in learned_texts(docs_unforbidden))
    assert not any(regex.search(LETTER_NEXT_TO_DIGIT, text) for text in learned_texts(docs_forbidden))


def test_on_the_docs_training_with_forbid_still_reaches_the_vocabulary_size(docs_forbidden, docs_unforbidden):
    assert docs_forbidden.vocab_size == docs_unforbidden.vocab_size == 8000
    assert len(docs_forbidden.merges) == 8000 - 256


def test_on_the_docs_forbid_changes_only_what_it_must(docs_forbidden, docs_unforbidden):
    # until the first forbidden token the two runs learn the same merges
    texts = learned_texts(docs_unforbidden)
    first = next(rank for rank, text in enumerate(texts) if regex.search(LETTER_NEXT_TO_DIGIT, text))
    assert first > 0
    assert docs_forbidden.merges[:first] == docs_unforbidden.merges[:first]
    assert docs_forbidden.merges[first] != docs_unforbidden.merges[first]


def test_forbidden_text_is_still_encoded_and_decodes_back(docs_forbidden):
    text = "sha256 and utf8, x2 + 3D"
    ids = docs_forbidden.encode(text)
    assert docs_forbidden.decode(ids) == text
    assert not any(regex.search(LETTER_NEXT_TO_DIGIT, docs_forbidden.decode([token])) for token in ids)


@pytest.fixture(scope="module")
def non_ascii_docs(docs_text: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lines of the whole documentation that hold a character beyond ASCII (459 lines: names
    like Łukasz, é, box drawing, dashes)."""
    path = tmp_path_factory.mktemp("forbid") / "non-ascii.txt"
    lines = [line for line in docs_text.splitlines(keepends=True) if not line.isascii()]
    path.write_text("".join(lines), encoding="utf-8", newline="")
    return path


def test_byte_level_patterns_see_a_split_character_as_the_replacement_character(non_ascii_docs: Path):
    # U+FFFD marks a token that stops inside a multi-byte character: forbidding it leaves only
    # tokens of whole characters
    config = {"name": "whole", "pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 1000}}
    unforbidden = bpe_core.train(config, [non_ascii_docs], workers=1, progress=False)
    assert "\ufffd" in "".join(learned_texts(unforbidden))
    config["trainer"]["forbid"] = ["\ufffd"]
    forbidden = bpe_core.train(config, [non_ascii_docs], workers=1, progress=False)
    for token in forbidden.merged_ids():
        forbidden.token_bytes(token).decode("utf-8")  # strict: raises on a split character
    assert "é".encode() in [forbidden.token_bytes(token) for token in forbidden.merged_ids()]


def test_the_veto_decodes_the_merged_bytes_with_replacement():
    merges: list[tuple[int, int]] = [(0xC3, 0xA9)]  # token 256 is é
    veto = TokenVeto(["\ufffd"], [str(byte) for byte in range(256)], True, merges)
    assert veto.text(ord("x"), 0xC3) == "x\ufffd"
    assert veto.text(256, ord("!")) == "é!"
    assert veto(ord("x"), 0xC3) and not veto(256, ord("!"))


def test_the_veto_joins_labels_of_other_alphabets_with_no_separator():
    labels = ["Bar", "Position_0", "Pitch_60", "Pitch_6"]
    merges: list[tuple[int, int]] = [(0, 1)]  # token 4 is Bar Position_0
    veto = TokenVeto(["Pitch_6(?!\\d)"], labels, False, merges)
    assert veto.text(4, 2) == "BarPosition_0Pitch_60"
    assert not veto(4, 2)
    assert veto(4, 3)
    merges.append((4, 3))  # the trainer's list grows: token 5 is known from now on
    assert veto.text(5, 0) == "BarPosition_0Pitch_6Bar"


def nucleotide_config(vocab_size: int, forbid: list[str] | None = None, **options: object) -> dict:
    trainer: dict = {"vocab_size": vocab_size}
    if forbid is not None:
        trainer["forbid"] = forbid
    return {
        "name": "dna-forbid",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides", **options},
        "trainer": trainer,
    }


@pytest.mark.both_modes
def test_on_the_lambda_genome_no_learned_token_holds_ggg():
    forbidden = bpe_core.train(nucleotide_config(512, ["GGG"]), [LAMBDA_PATH], progress=False)
    unforbidden = bpe_core.train(nucleotide_config(512), [LAMBDA_PATH], progress=False)
    assert any("GGG" in unforbidden.token_text(token) for token in unforbidden.merged_ids())
    assert not any("GGG" in forbidden.token_text(token) for token in forbidden.merged_ids())
    assert len(forbidden.merges) == len(unforbidden.merges) == 512 - forbidden.alphabet_size
    assert forbidden.decode(forbidden.encode("AGGGGT")) == "AGGGGT"


def test_dna_labels_are_joined_so_a_pattern_sees_the_sequence():
    # labels are single letters: "^A.*T$" is a token that starts with A and ends with T
    forbidden = bpe_core.train(nucleotide_config(400, ["^A.*T$"]), [LAMBDA_PATH], progress=False)
    texts = [forbidden.token_text(token) for token in forbidden.merged_ids()]
    assert not any(text.startswith("A") and text.endswith("T") for text in texts)
    assert len(texts) == 400 - forbidden.alphabet_size


def test_forbidding_n_keeps_it_out_of_every_merged_token_of_the_reads():
    # with n: symbol, N is a fifth letter that merges like the others unless forbidden
    unforbidden = bpe_core.train(nucleotide_config(600, n="symbol"), [READS_PATH], progress=False)
    forbidden = bpe_core.train(nucleotide_config(600, ["N"], n="symbol"), [READS_PATH], progress=False)
    assert any("N" in unforbidden.token_text(token) for token in unforbidden.merged_ids())
    assert not any("N" in forbidden.token_text(token) for token in forbidden.merged_ids())


def midi_tokenizer(forbid: list[str] | None = None) -> bpe_core.Tokenizer:
    trainer: dict = {"vocab_size": 800}
    if forbid is not None:
        trainer["forbid"] = forbid
    config = {"name": "midi-forbid", "input": {"reader": "midi"}, "pretokenizer": {"name": "midi-events"}}
    return bpe_core.train({**config, "trainer": trainer}, pop909_paths()[:5], progress=False)


def test_midi_labels_are_joined_so_a_pattern_can_keep_two_notes_out_of_one_token():
    # a token's labels read `Pitch_60Velocity_79Duration_4Pitch_64...`: two pitches mean two notes
    def pitches(tokenizer: bpe_core.Tokenizer, token: int) -> int:
        return sum(label.startswith("Pitch_") for label in tokenizer.token_symbols(token))

    unforbidden = midi_tokenizer()
    forbidden = midi_tokenizer(["Pitch_.*Pitch_"])
    assert any(pitches(unforbidden, token) > 1 for token in unforbidden.merged_ids())
    assert all(pitches(forbidden, token) <= 1 for token in forbidden.merged_ids())
    assert len(forbidden.merges) == len(unforbidden.merges) == 800 - forbidden.alphabet_size


# ---------------------------------------------------------------- continued training


def test_continuing_keeps_the_base_merges_the_new_config_forbids(docs_slice_path: Path):
    base = bpe_core.train(words_config(4000), [docs_slice_path], workers=1, progress=False)
    continued = bpe_core.train(
        words_config(8000, [LETTER_NEXT_TO_DIGIT]), [docs_slice_path], workers=1, progress=False, base=base
    )
    assert continued.merges[: len(base.merges)] == base.merges
    base_texts = learned_texts(base)
    assert any(regex.search(LETTER_NEXT_TO_DIGIT, text) for text in base_texts)
    assert not any(regex.search(LETTER_NEXT_TO_DIGIT, text) for text in learned_texts(continued)[len(base_texts) :])
    assert len(continued.merges) == 8000 - 256


def test_continuing_with_the_same_forbid_gives_the_merges_of_one_run(docs_slice_path: Path, docs_forbidden):
    config = words_config(5000, [LETTER_NEXT_TO_DIGIT])
    base = bpe_core.train(config, [docs_slice_path], workers=1, progress=False)
    continued = bpe_core.train(
        words_config(8000, [LETTER_NEXT_TO_DIGIT]), [docs_slice_path], workers=1, progress=False, base=base
    )
    assert continued.merges == docs_forbidden.merges


# ---------------------------------------------------------------- the config


def test_forbid_is_recorded_in_the_tokenizer_and_survives_save_and_load(docs_forbidden, tmp_path: Path):
    path = tmp_path / "forbid.json"
    docs_forbidden.save(path)
    for recorded in (docs_forbidden.config, bpe_core.load(path).config):
        assert recorded["trainer"]["forbid"] == [LETTER_NEXT_TO_DIGIT]
        assert load_config(recorded).trainer.forbid == (LETTER_NEXT_TO_DIGIT,)


def test_forbid_defaults_to_no_pattern_and_round_trips_through_to_dict():
    config = load_config(words_config(300, ["\\n.", "[0-9]"]))
    assert config.trainer.forbid == ("\\n.", "[0-9]")
    assert load_config(config.to_dict()) == dataclasses.replace(config, origin="<dict>")
    assert load_config(words_config(300)).trainer.forbid == ()


def test_forbid_given_as_one_string_is_one_pattern():
    assert load_config(words_config(300, "\\d")).trainer.forbid == ("\\d",)


def test_an_invalid_regex_is_a_one_line_error_naming_its_place_in_the_list():
    with pytest.raises(BpeError) as error:
        load_config(words_config(300, ["\\d", "(unclosed", "x"]))
    message = str(error.value)
    assert message.startswith("<dict>: trainer.forbid[1]: '(unclosed' is not a valid regex: ")
    assert "missing )" in message
    assert "\n" not in message


def test_an_invalid_regex_in_a_yaml_file_names_the_file(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text("pretokenizer: {name: gpt2}\ntrainer:\n  forbid: ['[a-']\n", encoding="utf-8")
    with pytest.raises(BpeError, match=r"bad\.yaml: trainer\.forbid\[0\]: '\[a-' is not a valid regex: "):
        load_config(path)


@pytest.mark.parametrize("value", [5, [""], ["x", 3], {"a": 1}])
def test_forbid_must_be_a_list_of_non_empty_strings(value: object):
    with pytest.raises(BpeError, match=r"trainer\.forbid: expected a list of non-empty strings"):
        load_config({"pretokenizer": {"name": "gpt2"}, "trainer": {"forbid": value}})
