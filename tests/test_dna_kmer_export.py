"""The Hugging Face export of `dna-kmers`: non-overlapping k-mers (stride == k, the Nucleotide
Transformer's) give our ids in `tokenizers` and `transformers` on sequences not trained on, tails
and N runs and lower case included; overlapping k-mers and the lossy options are refused.

Tokenizers are trained on the lambda genome and compared on E. coli.
"""

import json
import random
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_runner import assert_clean_error, run_bpe
from helpers.dna import DNABERT_6MER_CONFIG, NT_6MER_CONFIG, fastq_reads, single_sequence
from helpers.paths import ECOLI_PATH, LAMBDA_PATH
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe_core
from bpe_core import BpeError
from bpe_core.plugins import registry

EXTRA_MERGES = 300
# (options, merges beyond the alphabet): the Nucleotide Transformer's 6-mers, and 3-mers with
# the other remainder and N policies
VARIANTS: dict[str, dict[str, Any]] = {
    "nt-6mer": {},
    "3mer-drop": {"k": 3, "stride": 3, "remainder": "drop"},
    "3mer-n-symbol": {"k": 3, "stride": 3, "n": "symbol"},
    "1mer": {"k": 1, "stride": 1},
}


def alphabet_size(**options: Any) -> int:
    return len(registry().pretokenizer("dna-kmers", {"k": 6, **options}).alphabet())


@pytest.fixture(scope="module")
def ecoli() -> str:
    return single_sequence(ECOLI_PATH)


@pytest.fixture(scope="module", params=list(VARIANTS))
def trained(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[bpe_core.Tokenizer, Path]:
    """A k-mer tokenizer with merges over k-mers, trained on lambda, and its export (a folder)."""
    options = VARIANTS[request.param]
    overrides: dict[str, Any] = {f"pretokenizer.{key}": value for key, value in options.items()}
    overrides["trainer.vocab_size"] = alphabet_size(**options) + 2 + EXTRA_MERGES  # 2 special tokens
    tokenizer = bpe_core.train(NT_6MER_CONFIG, [LAMBDA_PATH], overrides)
    assert len(tokenizer.merges) == EXTRA_MERGES
    folder = tmp_path_factory.mktemp("hf") / request.param
    tokenizer.to_hf(folder)
    return tokenizer, folder / "tokenizer.json"


def ecoli_lines(ecoli: str, count: int, seed: int) -> list[str]:
    """Pieces of E. coli of every length modulo k (tails), some with N runs, IUPAC letters or in
    part lower case (soft-masking)."""
    chooser = random.Random(seed)
    lines = []
    for index in range(count):
        start = chooser.randrange(len(ecoli) - 3000)
        letters = list(ecoli[start : start + chooser.randrange(1, 3000)])
        if index % 3 == 1:
            for _ in range(chooser.randrange(1, 5)):
                at = chooser.randrange(len(letters))
                letters[at : at + chooser.randrange(1, 9)] = "N" * chooser.randrange(1, 9)
        if index % 4 == 2:
            at, length = chooser.randrange(len(letters)), chooser.randrange(1, 400)
            letters[at : at + length] = [letter.lower() for letter in letters[at : at + length]]
        if index % 7 == 3:
            letters[chooser.randrange(len(letters))] = chooser.choice("RYKMSWBDHV")
        lines.append("".join(letters))
    return lines


def test_export_gives_our_ids_in_tokenizers_and_transformers_on_ecoli_lines(
    trained: tuple[bpe_core.Tokenizer, Path], ecoli: str
) -> None:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    tokenizer, path = trained
    # E. coli was not trained on; lambda pieces, which were, make our merges over k-mers apply often
    lines = ecoli_lines(ecoli, 1500, seed=15) + ecoli_lines(single_sequence(LAMBDA_PATH), 300, seed=17)
    assert {len(line) % 6 for line in lines} == set(range(6))
    ours = [tokenizer.encode(line) for line in lines]
    peer = Tokenizer.from_file(str(path))
    assert [encoding.ids for encoding in peer.encode_batch(lines, add_special_tokens=False)] == ours
    fast = PreTrainedTokenizerFast(tokenizer_file=str(path))
    assert fast(lines, add_special_tokens=False)["input_ids"] == ours
    merged = set(tokenizer.merged_ids())
    assert sum(token in merged for ids in ours for token in ids) > 100


def test_export_gives_our_ids_on_a_long_ecoli_stretch_and_on_reads_with_n(
    trained: tuple[bpe_core.Tokenizer, Path], ecoli: str
) -> None:
    from tokenizers import Tokenizer

    tokenizer, path = trained
    peer = Tokenizer.from_file(str(path))
    stretch = ecoli[1_000_003:1_200_000]  # 199,997 letters: a tail of 5 after 6-mers
    assert peer.encode(stretch, add_special_tokens=False).ids == tokenizer.encode(stretch)
    reads = [read for _, read in fastq_reads()[:2000]]
    assert sum("N" in read for read in reads) > 0
    ours = [tokenizer.encode(read) for read in reads]
    assert [encoding.ids for encoding in peer.encode_batch(reads, add_special_tokens=False)] == ours


def test_export_decodes_our_ids_to_our_sequence(trained: tuple[bpe_core.Tokenizer, Path], ecoli: str) -> None:
    from tokenizers import Tokenizer

    tokenizer, path = trained
    peer = Tokenizer.from_file(str(path))
    for line in ecoli_lines(ecoli, 200, seed=16):
        ids = tokenizer.encode(line)
        assert peer.decode(ids) == tokenizer.decode(ids)


def test_export_keeps_every_id_and_numbers_the_building_tokens_after_ours(
    trained: tuple[bpe_core.Tokenizer, Path],
) -> None:
    from tokenizers import Tokenizer

    tokenizer, path = trained
    peer = Tokenizer.from_file(str(path))
    vocab = peer.get_vocab()
    ours = {*tokenizer.regular_ids(), *tokenizer.special_ids.values()}
    assert {vocab[token]: token for token in tokenizer.special_ids} == {
        token_id: token for token, token_id in tokenizer.special_ids.items()
    }
    options = tokenizer.pretokenizer.options()
    k, bases = options["k"], set("ACGTN" if options["n"] == "symbol" else "ACGT")
    for token_id in tokenizer.regular_ids():
        # a k-mer's token ends with the mark the normalizer writes after it (ACGTAC|); tails and
        # letters that stand alone are themselves
        labels = tokenizer.token_symbols(token_id)
        expected = "".join(label + "|" if len(label) == k and set(label) <= bases else label for label in labels)
        assert peer.id_to_token(token_id) == expected
    building = sorted(set(vocab.values()) - ours)
    assert building == list(range(max(ours) + 1, max(ours) + 1 + len(building)))
    assert all(len(peer.id_to_token(token_id)) <= k for token_id in building)


@pytest.mark.both_modes
@settings(max_examples=200, deadline=None)
@given(sequence=st.text(alphabet="ACGTNacgtnRry", max_size=60))
def test_nt_6mer_export_matches_on_any_sequence(sequence: str) -> None:
    from tokenizers import Tokenizer

    tokenizer, exported = nt_6mer_export()
    peer = Tokenizer.from_str(exported)
    assert peer.encode(sequence, add_special_tokens=False).ids == tokenizer.encode(sequence)


@cache
def nt_6mer_export() -> tuple[bpe_core.Tokenizer, str]:
    """nt-6mer with merges over 6-mers trained on lambda, and its tokenizer.json's text, made once
    (hypothesis takes no fixtures)."""
    tokenizer = bpe_core.train(NT_6MER_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": alphabet_size() + 2 + 100})
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "tokenizer.json"
        tokenizer.to_hf(path)
        return tokenizer, path.read_text(encoding="utf-8")


def test_a_plain_nt_6mer_tokenizer_exports_its_kmers_as_single_tokens(tmp_path: Path, ecoli: str) -> None:
    from transformers import PreTrainedTokenizerFast

    tokenizer = bpe_core.train(NT_6MER_CONFIG, [LAMBDA_PATH])  # vocab_size = the alphabet: no merges
    assert tokenizer.merges == []
    tokenizer.to_hf(tmp_path)
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    line = ecoli[5000:5063]  # ten 6-mers and a tail of 3
    ids = fast(line, add_special_tokens=False)["input_ids"]
    assert ids == tokenizer.encode(line)
    assert fast.convert_ids_to_tokens(ids) == [line[start : start + 6] + "|" for start in range(0, 60, 6)] + list(
        line[60:]
    )


def test_a_mark_in_the_input_is_an_error_in_hugging_face_as_in_ours() -> None:
    from tokenizers import Tokenizer

    tokenizer, exported = nt_6mer_export()
    with pytest.raises(BpeError):
        tokenizer.encode("ACGTAC|GT")
    with pytest.raises(Exception, match="Unk token"):
        Tokenizer.from_str(exported).encode("ACGTAC|GT")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"k": 3, "stride": 1}, "pretokenizer.stride"),
        ({"k": 3, "stride": 2}, "pretokenizer.stride"),
        ({"k": 3, "canonical": True}, "pretokenizer.canonical"),
        ({"k": 3, "remainder": "pad"}, "pretokenizer.remainder"),
    ],
)
def test_to_hf_refuses_what_hugging_face_cannot_reproduce(options: dict[str, Any], named: str, tmp_path: Path) -> None:
    config = {
        "name": "kmers",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-kmers", **options},
        "trainer": {"vocab_size": alphabet_size(**options) + 10},
    }
    tokenizer = bpe_core.train(config, [LAMBDA_PATH])
    with pytest.raises(BpeError, match=named):
        tokenizer.to_hf(tmp_path / "tokenizer.json")
    assert list(tmp_path.iterdir()) == []


def test_bpe_export_refuses_overlapping_kmers_with_one_error_line(tmp_path: Path) -> None:
    saved = tmp_path / "dnabert-6mer.json"
    bpe_core.train(DNABERT_6MER_CONFIG, [LAMBDA_PATH]).save(saved)
    output = tmp_path / "out" / "tokenizer.json"
    result = run_bpe("export", "-t", saved, "--format", "hf", "-o", output, cwd=tmp_path)
    assert_clean_error(result, "stride", "overlapping", "Hugging Face pre-tokenizers cannot emit overlapping pieces")
    assert not output.exists() and not output.parent.exists()
    assert json.loads(saved.read_text())  # the tokenizer file is untouched
