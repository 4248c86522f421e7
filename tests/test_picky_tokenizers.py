"""`trainer.residue` (Picky BPE training) from a config, on real text, and its refusals.

- On the Python docs the training removes tokens (a share of its merges, recorded in the
  provenance), the vocabulary is `vocab_size`, encoding round-trips held-back text, and the Hugging
  Face and tiktoken exports give our ids; `--from` keeps the base's tokens, and `trim` works on it.
- A bad `trainer.residue` is one error naming the key; with `trainer.parity` or a pretokenizer
  that learns DNA merges with their
  reverse-complement partners it is refused.
"""

from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, run_bpe
from helpers.interop import assert_same_ids, read_ranks, tiktoken_encoding
from helpers.modes import PURE
from helpers.paths import CONFIGS_DIR, LAMBDA_PATH, require
from helpers.patterns import PUBLISHED_PATTERNS
from helpers.text import docs_text
from tokenizers import Tokenizer as HfTokenizer

import bpe_core
from bpe_core.errors import BpeError
from bpe_core.training import check_config

GPT2_CONFIG = CONFIGS_DIR / "gpt2-style.yaml"
TRAINING_CHARS = 150_000 if PURE else 1_000_000
VOCAB_SIZE = 1500 if PURE else 4000


@pytest.fixture(scope="module")
def picky_docs(tmp_path_factory: pytest.TempPathFactory) -> tuple[bpe_core.Tokenizer, str, Path]:
    """(a Picky BPE tokenizer trained on the start of the docs at R 0.1, held-back text, its file)."""
    text = docs_text()
    directory = tmp_path_factory.mktemp("picky")
    training = directory / "train.txt"
    training.write_text(text[:TRAINING_CHARS], encoding="utf-8", newline="")
    tokenizer = bpe_core.train(
        GPT2_CONFIG, [training], {"trainer.vocab_size": VOCAB_SIZE, "trainer.residue": 0.1}, workers=1
    )
    return tokenizer, text[-60_000:], training


@pytest.mark.both_modes
def test_picky_training_on_the_docs_removes_tokens_and_exports_exactly(picky_docs, tmp_path: Path) -> None:
    tokenizer, held_out, _ = picky_docs
    picky = tokenizer.provenance["picky"]
    merges_made = len(tokenizer.merges) + picky["removals"]  # each removal let one more merge in
    assert 0.01 < picky["removals"] / merges_made < 0.5
    assert picky["put_back"] <= picky["removals"]
    assert tokenizer.vocab_size == VOCAB_SIZE
    assert tokenizer.config["trainer"]["residue"] == 0.1
    ours = tokenizer.encode(held_out)
    assert tokenizer.decode(ours) == held_out
    tokenizer.to_hf(tmp_path / "tokenizer.json")
    assert_same_ids(ours, HfTokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(held_out).ids, "tokenizers")
    tokenizer.to_tiktoken(tmp_path / "picky.tiktoken")
    special = {token: tokenizer.special_ids[token] for token in tokenizer.special_tokens}
    theirs = tiktoken_encoding("picky", read_ranks(tmp_path / "picky.tiktoken"), PUBLISHED_PATTERNS["gpt2"], special)
    assert_same_ids(ours, theirs.encode_ordinary(held_out), "tiktoken")
    back = bpe_core.from_tiktoken(tmp_path / "picky.tiktoken", PUBLISHED_PATTERNS["gpt2"])
    assert back.merges == tokenizer.merges


def test_picky_tokenizers_continue_training_and_trim(picky_docs, tmp_path: Path) -> None:
    tokenizer, held_out, training = picky_docs
    bigger = bpe_core.train(
        GPT2_CONFIG, [training], {"trainer.vocab_size": VOCAB_SIZE + 200, "trainer.residue": 0.1}, base=tokenizer
    )
    assert bigger.merges[: len(tokenizer.merges)] == tokenizer.merges
    assert bigger.vocab_size == VOCAB_SIZE + 200
    assert bigger.decode(bigger.encode(held_out)) == held_out
    trimmed = bpe_core.trim(tokenizer, vocab_size=VOCAB_SIZE - 100).tokenizer
    assert trimmed.merges == tokenizer.merges[: len(trimmed.merges)]
    assert trimmed.decode(trimmed.encode(held_out)) == held_out


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.1, "0.1", True])
def test_a_residue_outside_zero_to_one_is_an_error_naming_the_key(value: object) -> None:
    with pytest.raises(BpeError, match=r"trainer\.residue: expected a number above 0 and below 1"):
        bpe_core.train(GPT2_CONFIG, ["x.txt"], {"trainer.residue": value})


def test_residue_with_parity_is_refused(tmp_path: Path) -> None:
    overrides = {
        "trainer.residue": 0.1,
        "trainer.parity": {"groups": {"a": ["a.txt"], "b": ["b.txt"]}, "dev": {"a": ["c.txt"], "b": ["d.txt"]}},
    }
    with pytest.raises(BpeError, match=r"trainer\.residue: not with trainer\.parity"):
        bpe_core.train(GPT2_CONFIG, None, overrides)


def test_residue_with_mirrored_dna_merges_is_refused() -> None:
    config = CONFIGS_DIR / "dnabert2-style.yaml"
    overrides = {"trainer.residue": 0.1, "trainer.vocab_size": 64, "pretokenizer.reverse_complement": "symmetric"}
    with pytest.raises(BpeError, match=r"trainer\.residue: not with pretokenizer .* mirror partner"):
        bpe_core.train(config, [require(LAMBDA_PATH)], overrides)
    with pytest.raises(BpeError, match=r"trainer\.residue: not with pretokenizer .* mirror partner"):
        check_config(config, overrides, [require(LAMBDA_PATH)])  # before any counting
    sets = [argument for key, value in overrides.items() for argument in ("--set", f"{key}={value}")]
    assert_clean_error(run_bpe("validate", config, *sets, cwd=CONFIGS_DIR), "trainer.residue", "mirror partner")
