"""Continued training (`bpe train --from BASE`, `bpe_core.train(..., base=tok)`), extension on other
data, and SuperBPE's superword stage, on the shared corpora.

The specification: training to V1 and continuing to V2 gives exactly the merges (and their
counts) of training to V2 in one go, for every tie rule and for text, DNA and MIDI; every id of
the base keeps its meaning; a coarser pretokenizer learns tokens across spaces that the exports
to Hugging Face and tiktoken encode with the same ids.
"""

from pathlib import Path
from typing import Any

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG as DNA
from helpers.interop import assert_same_ids, read_ranks, tiktoken_encoding
from helpers.midi import REMI_BPE_CONFIG as MIDI
from helpers.midi import pop909_paths
from helpers.paths import CONFIGS_DIR, ECOLI_PATH, LAMBDA_PATH
from helpers.text import GPT2_CONFIG as GPT2
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer

import bpe_core
from bpe_core.corpus.streaming import corpus_reader, encode_pieces
from bpe_core.engine import TIE_RULES, Trainer
from bpe_core.engine import train as engine_train
from bpe_core.training import make_plan

STAGE2 = CONFIGS_DIR / "superbpe-stage2.yaml"


@st.composite
def corpora(draw: st.DrawFn) -> tuple[int, list[list[int]], list[int]]:
    """A small alphabet and weighted chunks over it (long runs of one symbol included)."""
    alphabet_size = draw(st.integers(2, 5))
    symbol = st.integers(0, alphabet_size - 1)
    chunks = draw(st.lists(st.lists(symbol, min_size=0, max_size=30), min_size=1, max_size=12))
    weights = draw(st.lists(st.integers(0, 9), min_size=len(chunks), max_size=len(chunks)))
    return alphabet_size, chunks, weights


@pytest.mark.both_modes
@given(corpus=corpora(), data=st.data())
def test_replaying_a_runs_first_merges_then_running_on_gives_that_runs_merges(
    corpus: tuple[int, list[list[int]], list[int]], data: st.DataObject
) -> None:
    alphabet_size, chunks, weights = corpus
    num_merges = data.draw(st.integers(0, 25), label="merges")
    tie_break = data.draw(st.integers(0, len(TIE_RULES) - 1), label="tie_break")
    max_token_length = data.draw(st.integers(0, 6), label="max_token_length")
    min_frequency = data.draw(st.integers(1, 3), label="min_frequency")
    order = data.draw(st.permutations(range(alphabet_size)), label="symbol_order")
    one_run = engine_train(
        alphabet_size, chunks, weights, num_merges, min_frequency, max_token_length, tie_break, symbol_order=order
    )
    first = data.draw(st.integers(0, len(one_run.merges)), label="replayed")
    continued = Trainer(alphabet_size, chunks, weights, alphabet_size + num_merges, max_token_length, tie_break, order)
    continued.replay(one_run.merges[:first])
    continued.run(num_merges - first, min_frequency)
    assert continued.merges == one_run.merges
    assert continued.merge_counts == one_run.merge_counts
    assert continued.segments() == one_run.segments()
    assert continued.token_usage() == one_run.token_usage()


def test_replay_refuses_a_merge_of_an_id_no_earlier_merge_made() -> None:
    trainer = Trainer(3, [[0, 1, 2]], [1], 10)
    with pytest.raises(ValueError, match="merge 1"):
        trainer.replay([(0, 1), (4, 2)])


def domain_case(domain: str, docs_slice_path: Path) -> tuple[Path, list[Path], int, int]:
    """(config, input files, V1, V2) for a domain, on the shared data."""
    if domain == "text":
        return GPT2, [docs_slice_path], 256 + 1 + 150, 256 + 1 + 400
    if domain == "dna":
        return DNA, [LAMBDA_PATH], 5 + 15 + 100, 5 + 15 + 300
    songs = pop909_paths()[:12]
    alphabet = make_plan(MIDI, songs).alphabet_size
    return MIDI, songs, alphabet + 4 + 80, alphabet + 4 + 240


def first_document_tokens(tokenizer: bpe_core.Tokenizer, path: Path) -> list[tuple[str, ...]]:
    """The first document of a file, read and encoded as `bpe encode` does, as token symbols."""
    tokens: list[tuple[str, ...]] = []
    documents = corpus_reader(tokenizer).documents([str(path)], strict=True)
    for ids, ends in encode_pieces(tokenizer, documents, workers=1):
        if ends:
            return tokens
        tokens += [tokenizer.token_symbols(token) for token in ids]
    return tokens


@pytest.mark.parametrize("tie_break", TIE_RULES)
@pytest.mark.parametrize("domain", [pytest.param("text", marks=pytest.mark.both_modes), "dna", "midi"])
def test_training_to_v1_then_continuing_to_v2_gives_the_merges_of_one_run_to_v2(
    domain: str, tie_break: str, docs_slice_path: Path
) -> None:
    config, files, small, large = domain_case(domain, docs_slice_path)
    overrides: dict[str, Any] = {"trainer.tie_break": tie_break, "trainer.min_frequency": 1}
    one_run = bpe_core.train(config, files, {**overrides, "trainer.vocab_size": large}, progress=False)
    base = bpe_core.train(config, files, {**overrides, "trainer.vocab_size": small}, progress=False)
    continued = bpe_core.train(config, files, {**overrides, "trainer.vocab_size": large}, progress=False, base=base)

    assert continued.spec.internal_merges == one_run.spec.internal_merges
    assert continued.merge_counts == one_run.merge_counts
    assert len(continued.spec.internal_merges) > len(base.spec.internal_merges)
    # every id of the base keeps its meaning; the new merged tokens come after the base's last id
    assert continued.special_ids == base.special_ids
    assert all(continued.token_symbols(token) == base.token_symbols(token) for token in range(base.vocab_size))
    assert min(continued.merged_ids()[len(base.spec.internal_merges) :]) >= base.vocab_size
    # and it encodes as the one run does, token for token
    assert first_document_tokens(continued, files[0]) == first_document_tokens(one_run, files[0])
    assert continued.provenance["base"]["vocab_size"] == base.vocab_size
    assert [len(stage["inputs"]) for stage in continued.provenance["lineage"]] == [len(files), len(files)]


def test_continuing_from_counts_and_on_the_command_line_gives_the_same_tokenizer(
    tmp_path: Path, docs_slice_path: Path
) -> None:
    docs = docs_slice_path
    base = bpe_core.train(GPT2, [docs], {"trainer.vocab_size": 600}, progress=False)
    base.save(tmp_path / "base.json")
    expected = bpe_core.train(GPT2, [docs], {"trainer.vocab_size": 900}, progress=False, base=base)
    assert_ok(run_bpe("count", GPT2, docs, "-o", "docs.counts", "-q", cwd=tmp_path))
    assert_ok(
        run_bpe(
            "train", GPT2, "--from-counts", "docs.counts", "--from", "base.json",
            "--set", "trainer.vocab_size=900", "-o", "continued.json", "-q", cwd=tmp_path,
        )
    )  # fmt: skip
    from_counts = bpe_core.load(tmp_path / "continued.json")
    assert from_counts.spec.internal_merges == expected.spec.internal_merges
    assert from_counts.provenance["base"]["sha256"] == expected.provenance["base"]["sha256"]
    assert_ok(
        run_bpe(
            "train", GPT2, docs, "--from", "base.json", "--set", "trainer.vocab_size=900", "-o", "cli.json", "-q",
            cwd=tmp_path,
        )
    )  # fmt: skip
    assert bpe_core.load(tmp_path / "cli.json").spec.internal_merges == expected.spec.internal_merges


def test_continuing_on_a_dask_cluster_gives_the_merges_of_a_local_run(docs_slice_path: Path) -> None:
    docs = docs_slice_path
    base = bpe_core.train(GPT2, [docs], {"trainer.vocab_size": 600}, progress=False)
    local = bpe_core.train(GPT2, [docs], {"trainer.vocab_size": 800}, progress=False, base=base)
    on_dask = bpe_core.train(
        GPT2, [docs], {"trainer.vocab_size": 800}, progress=False, base=base, runner={"kind": "dask", "workers": 1}
    )
    assert on_dask.spec.internal_merges == local.spec.internal_merges


def test_what_continued_training_may_not_change_is_one_error_naming_the_key(
    tmp_path: Path, docs_slice_path: Path
) -> None:
    docs = docs_slice_path
    base = bpe_core.train(GPT2, [docs], {"trainer.vocab_size": 600}, progress=False)
    base.save(tmp_path / "base.json")
    cases = [
        (["--set", "pretokenizer.name=dna-nucleotides"], ["pretokenizer", "alphabet"]),
        (["--set", "normalizer=nfc"], ["normalizer", "keep that"]),
        (["--set", "special_tokens.tokens=[]"], ["special_tokens", "<|endoftext|>"]),
        (["--set", "trainer.vocab_size=500"], ["trainer.vocab_size", "fewer than"]),
        (["--set", "trainer.max_token_length=2"], ["trainer.max_token_length", "allow at least"]),
    ]
    for extra, fragments in cases:
        result = run_bpe("train", GPT2, docs, "--from", "base.json", *extra, "-o", "out.json", cwd=tmp_path)
        assert_clean_error(result, *fragments)
        assert not (tmp_path / "out.json").exists()
    assert_clean_error(run_bpe("train", GPT2, docs, "--from", "missing.json", cwd=tmp_path), "missing.json")


def test_a_genome_vocabulary_extended_on_another_species_keeps_its_ids_and_compresses_it_better(
    ecoli_genome: str,
) -> None:
    config = {"trainer.vocab_size": 5 + 15 + 300}
    lambda_only = bpe_core.train(DNA, [LAMBDA_PATH], config, progress=False)
    extended = bpe_core.train(DNA, [ECOLI_PATH], {"trainer.vocab_size": 5 + 15 + 600}, progress=False, base=lambda_only)
    assert all(extended.token_symbols(token) == lambda_only.token_symbols(token) for token in range(320))
    held_back = ecoli_genome[-200_000:]
    assert len(extended.encode(held_back)) < len(lambda_only.encode(held_back))
    assert extended.provenance["lineage"][0]["inputs"][0]["path"] == str(LAMBDA_PATH)


@pytest.fixture(scope="module")
def superword(docs_slice_path: Path) -> tuple[bpe_core.Tokenizer, bpe_core.Tokenizer]:
    """(stage 1 at 80%, stage 2) on the docs slice, with the shipped stage-2 config."""
    docs = docs_slice_path
    stage1 = bpe_core.train(GPT2, [docs], {"trainer.vocab_size": 1200}, progress=False)
    stage2 = bpe_core.train(STAGE2, [docs], {"trainer.vocab_size": 1500}, progress=False, base=stage1)
    return stage1, stage2


def test_the_superword_stage_learns_tokens_across_spaces_and_keeps_stage_1_ids(
    superword: tuple[bpe_core.Tokenizer, bpe_core.Tokenizer],
) -> None:
    stage1, stage2 = superword
    assert stage2.pretokenizer.name == "regex"
    assert all(stage2.token_bytes(token) == stage1.token_bytes(token) for token in stage1.regular_ids())
    superwords = [token for token in stage2.merged_ids() if b" " in stage2.token_bytes(token).strip(b" ")]
    assert superwords and all(token >= stage1.vocab_size for token in superwords)


def test_inspect_shows_the_lineage_and_validate_checks_a_config_against_its_base(
    tmp_path: Path, docs_slice_path: Path
) -> None:
    base = bpe_core.train(GPT2, [docs_slice_path], {"trainer.vocab_size": 600}, progress=False)
    base.save(tmp_path / "base.json")
    continued = bpe_core.train(STAGE2, [docs_slice_path], {"trainer.vocab_size": 700}, progress=False, base=base)
    continued.save(tmp_path / "continued.json")
    report = assert_ok(run_bpe("inspect", "continued.json", cwd=tmp_path))
    # named after the sizes trained, not the 32k the configs' names say
    assert "1. train text-gpt2-600: pretokenizer gpt2, vocab 600, 1 input file(s)" in report
    assert "2. train text-superbpe-700: pretokenizer regex, vocab 700, 1 input file(s)" in report
    assert f"continued from text-gpt2-600 (vocab 600, sha256 {continued.provenance['base']['sha256'][:16]}" in report
    assert "continuing text-gpt2-600 (343 merges)" in assert_ok(
        run_bpe("validate", STAGE2, "--from", "base.json", cwd=tmp_path)
    )
    assert_clean_error(
        run_bpe("validate", DNA, "--from", "base.json", cwd=tmp_path), "pretokenizer", "alphabet", "text-gpt2-600"
    )


def test_a_second_midi_stage_without_bar_splits_learns_tokens_across_bar_lines() -> None:
    songs = pop909_paths()[:20]
    within_bars = bpe_core.train(MIDI, songs, {"trainer.vocab_size": 700}, progress=False)
    across = bpe_core.train(
        MIDI, songs, {"trainer.vocab_size": 2000, "pretokenizer.split": "none"}, progress=False, base=within_bars
    )
    assert all(across.token_symbols(token) == within_bars.token_symbols(token) for token in range(700))
    crossing = [token for token in across.merged_ids() if "Bar" in across.token_symbols(token)[1:]]
    assert crossing and min(crossing) >= within_bars.vocab_size
    assert len(across.encode(songs[0])) < len(within_bars.encode(songs[0]))


@pytest.mark.parametrize("stage", ["continued", "superword"])
def test_exports_of_continued_tokenizers_give_our_ids_in_tokenizers_transformers_and_tiktoken(
    stage: str, superword: tuple[bpe_core.Tokenizer, bpe_core.Tokenizer], tmp_path: Path, docs_text: str
) -> None:
    from transformers import PreTrainedTokenizerFast

    stage1, stage2 = superword
    config = STAGE2 if stage == "superword" else GPT2
    tokenizer = stage2 if stage == "superword" else bpe_core.train(
        config, [], {"trainer.vocab_size": 1500}, progress=False, counts=[bpe_core.count(GPT2, [_first_input(stage1)])],
        base=stage1,
    )  # fmt: skip
    text = docs_text[-40_000:] + "<|endoftext|>" + docs_text[-80_000:-40_000]  # not trained on, a special between
    ours = tokenizer.encode(text, allowed_special="all")
    assert tokenizer.special_ids["<|endoftext|>"] in ours
    tokenizer.to_hf(tmp_path / "tokenizer.json")
    hf = HfTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert_same_ids(ours, hf.encode(text, add_special_tokens=False).ids, "tokenizers", tokenizer.token_bytes)
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    assert_same_ids(ours, fast(text, add_special_tokens=False)["input_ids"], "transformers", tokenizer.token_bytes)
    tokenizer.to_tiktoken(tmp_path / "grown.tiktoken")
    pattern = tokenizer.pretokenizer.pattern  # type: ignore[attr-defined]
    encoding = tiktoken_encoding("grown", read_ranks(tmp_path / "grown.tiktoken"), pattern, tokenizer.special_ids)
    assert_same_ids(ours, encoding.encode(text, allowed_special="all"), "tiktoken", tokenizer.token_bytes)


def _first_input(tokenizer: bpe_core.Tokenizer) -> str:
    return str(tokenizer.provenance["inputs"][0]["path"])
