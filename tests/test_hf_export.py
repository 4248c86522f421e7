"""A complete Hugging Face export: `to_hf` / `bpe export` create missing folders and write
`tokenizer_config.json` and `special_tokens_map.json` beside `tokenizer.json`, so
`AutoTokenizer.from_pretrained(folder)` gives a tokenizer with its unk, pad, mask, cls and sep
tokens; `[CLS] ... [SEP]` (BERT) or `<s> ... </s>` (RoBERTa) are added by a template
post-processor; a letter outside a DNA alphabet is [UNK] in Hugging Face (an error in bpe-core); GPT-2-style text
tokenizers export exactly as before.

Data: a dnabert2-style tokenizer trained on the lambda genome, checked on the soft-masked chr17
part and the 10,000 lambda reads; text tokenizers trained on the first 400,000 characters of
the Python docs. Expected ids are our own `encode` in this process; the peers must agree.
"""

import json
from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import BERT_SPECIALS, DNABERT2_CONFIG, fasta_records, fastq_reads
from helpers.paths import CHR17_PATH, LAMBDA_PATH
from tokenizers import Tokenizer
from transformers import AutoTokenizer, PreTrainedTokenizerFast

import bpe_core

ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
ROLES = {"unk_token": 0, "pad_token": 3, "mask_token": 4, "cls_token": 1, "sep_token": 2}  # index in BERT_SPECIALS


@pytest.fixture(scope="module")
def dna(tmp_path_factory: pytest.TempPathFactory) -> tuple[bpe_core.Tokenizer, Path]:
    """(tokenizer, folder it was exported to with to_hf): dnabert2-style, vocab 1024, on lambda.
    The folder is two levels below one that exists, as `to_hf("models/dnabert2")` would make it."""
    tokenizer = bpe_core.train(DNABERT2_CONFIG, [str(LAMBDA_PATH)], {"trainer.vocab_size": 1024}, progress=False)
    folder = tmp_path_factory.mktemp("dna-export") / "models" / "dnabert2"
    tokenizer.to_hf(folder)
    return tokenizer, folder


@pytest.fixture(scope="module")
def chr17() -> str:
    ((_, sequence),) = fasta_records(CHR17_PATH)
    return sequence


def test_to_hf_into_a_missing_folder_creates_it_with_the_three_files(dna: tuple[bpe_core.Tokenizer, Path]) -> None:
    _, folder = dna
    assert sorted(path.name for path in folder.iterdir()) == [
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    roles = json.loads((folder / "special_tokens_map.json").read_text())
    assert roles == {role: BERT_SPECIALS[index] for role, index in ROLES.items()}
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert {role: config[role] for role in ROLES} == roles


def test_to_hf_of_a_tokenizer_json_path_in_a_missing_folder_creates_it_as_the_readme_shows(
    dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, folder = dna
    path = tmp_path / "dnabert2" / "tokenizer.json"
    tokenizer.to_hf(path)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        assert (path.parent / name).read_bytes() == (folder / name).read_bytes(), name


def test_to_hf_of_a_json_file_with_another_name_writes_that_file_only(
    dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, folder = dna
    tokenizer.to_hf(tmp_path / "new" / "dna-hf.json")
    assert [path.name for path in (tmp_path / "new").iterdir()] == ["dna-hf.json"]
    assert (tmp_path / "new" / "dna-hf.json").read_bytes() == (folder / "tokenizer.json").read_bytes()


@pytest.mark.parametrize("loader", ["AutoTokenizer", "PreTrainedTokenizerFast"])
def test_transformers_adds_cls_and_sep_around_our_ids_on_chr17_and_reads(
    dna: tuple[bpe_core.Tokenizer, Path], chr17: str, loader: str
) -> None:
    tokenizer, folder = dna
    loaded = (AutoTokenizer if loader == "AutoTokenizer" else PreTrainedTokenizerFast).from_pretrained(str(folder))
    cls, sep = tokenizer.special_ids["[CLS]"], tokenizer.special_ids["[SEP]"]
    ours = tokenizer.encode(chr17)
    assert loaded(chr17)["input_ids"] == [cls, *ours, sep]
    assert loaded(chr17, add_special_tokens=False)["input_ids"] == ours
    reads = [sequence for _, sequence in fastq_reads()[:2000]]
    assert loaded(reads)["input_ids"] == [[cls, *tokenizer.encode(read), sep] for read in reads]
    assert loaded.decode(loaded(chr17)["input_ids"], skip_special_tokens=True) == chr17.upper()


@pytest.mark.parametrize("loader", ["AutoTokenizer", "PreTrainedTokenizerFast"])
def test_transformers_knows_unk_pad_mask_cls_and_sep_with_our_ids(
    dna: tuple[bpe_core.Tokenizer, Path], loader: str
) -> None:
    tokenizer, folder = dna
    loaded = (AutoTokenizer if loader == "AutoTokenizer" else PreTrainedTokenizerFast).from_pretrained(str(folder))
    for role, index in ROLES.items():
        token = BERT_SPECIALS[index]
        assert getattr(loaded, role) == token, role
        assert getattr(loaded, f"{role}_id") == tokenizer.special_ids[token], role
    reads = [sequence for _, sequence in fastq_reads()[:8]]
    batch = loaded(reads, padding=True)
    longest = max(len(ids) for ids in batch["input_ids"])
    for read, ids, mask in zip(reads, batch["input_ids"], batch["attention_mask"]):
        expected = [tokenizer.special_ids["[CLS]"], *tokenizer.encode(read), tokenizer.special_ids["[SEP]"]]
        assert ids == expected + [tokenizer.special_ids["[PAD]"]] * (longest - len(expected))
        assert mask == [1] * len(expected) + [0] * (longest - len(expected))


def test_a_pair_of_sequences_gets_bert_type_ids(dna: tuple[bpe_core.Tokenizer, Path]) -> None:
    tokenizer, folder = dna
    first, second = (sequence for _, sequence in fastq_reads()[:2])
    encoding = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(first, second)
    cls, sep = tokenizer.special_ids["[CLS]"], tokenizer.special_ids["[SEP]"]
    left, right = tokenizer.encode(first), tokenizer.encode(second)
    assert encoding.ids == [cls, *left, sep, *right, sep]
    assert encoding.type_ids == [0] * (len(left) + 2) + [1] * (len(right) + 1)


@pytest.mark.parametrize("letter", ["X", "U", "-", "*", " ", "x"])
def test_a_letter_outside_the_alphabet_is_unk_in_tokenizers_and_transformers_and_an_error_in_bpe_core(
    dna: tuple[bpe_core.Tokenizer, Path], letter: str
) -> None:
    tokenizer, folder = dna
    sequence = "ACGTTGCA" + letter + "ACGT"
    with pytest.raises(bpe_core.BpeError, match="position 9"):
        tokenizer.encode(sequence)
    unk = tokenizer.special_ids["[UNK]"]
    expected = [1, *tokenizer.encode("ACGTTGCA"), unk, *tokenizer.encode("ACGT"), 2]
    assert Tokenizer.from_file(str(folder / "tokenizer.json")).encode(sequence).ids == expected
    assert AutoTokenizer.from_pretrained(str(folder))(sequence)["input_ids"] == expected
    assert Tokenizer.from_file(str(folder / "tokenizer.json")).encode("ACGTTGCAACGT").ids == [
        1,
        *tokenizer.encode("ACGTTGCAACGT"),
        2,
    ]


@pytest.fixture(scope="module")
def text_tokenizers(
    docs_slice_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[bpe_core.Tokenizer, Path]]:
    """GPT-2 style (<|endoftext|> at the end) and RoBERTa style (<s> <pad> </s> <unk> <mask> at
    0-4), vocab 1024 on the docs slice, each exported to a folder."""
    made = {}
    for style, specials, position in (("gpt2", ["<|endoftext|>"], "end"), ("roberta", ROBERTA_SPECIALS, "start")):
        tokenizer = bpe_core.train(
            {
                "pretokenizer": {"name": "gpt2"},
                "trainer": {"vocab_size": 1024},
                "special_tokens": {"tokens": specials, "position": position},
            },
            [str(docs_slice_path)],
            progress=False,
        )
        folder = tmp_path_factory.mktemp(f"text-{style}") / "export"
        tokenizer.to_hf(folder)
        made[style] = (tokenizer, folder)
    return made


def test_gpt2_style_text_exports_as_before_with_no_template_and_no_unknown_token(
    text_tokenizers: dict[str, tuple[bpe_core.Tokenizer, Path]], docs_text: str, tmp_path: Path
) -> None:
    tokenizer, folder = text_tokenizers["gpt2"]
    data = json.loads((folder / "tokenizer.json").read_text())
    assert data["post_processor"] is None and data["model"]["unk_token"] is None
    sample = docs_text[:50_000] + " héllo 🧬 wörld"
    loaded = AutoTokenizer.from_pretrained(str(folder))
    assert loaded(sample)["input_ids"] == tokenizer.encode(sample)  # nothing added
    assert loaded.eos_token == "<|endoftext|>" and loaded.eos_token_id == tokenizer.special_ids["<|endoftext|>"]
    assert bpe_core.from_hf(folder / "tokenizer.json").encode(sample) == tokenizer.encode(sample)


def test_roberta_style_text_gets_s_and_end_s_around_our_ids_and_still_imports(
    text_tokenizers: dict[str, tuple[bpe_core.Tokenizer, Path]], docs_text: str
) -> None:
    tokenizer, folder = text_tokenizers["roberta"]
    sample, other = docs_text[:20_000], docs_text[20_000:30_000]
    bos, eos = tokenizer.special_ids["<s>"], tokenizer.special_ids["</s>"]
    loaded = AutoTokenizer.from_pretrained(str(folder))
    assert loaded(sample)["input_ids"] == [bos, *tokenizer.encode(sample), eos]
    assert loaded(sample, other)["input_ids"] == [
        bos,
        *tokenizer.encode(sample),
        eos,
        eos,
        *tokenizer.encode(other),
        eos,
    ]
    assert (loaded.bos_token, loaded.eos_token, loaded.unk_token, loaded.pad_token, loaded.mask_token) == (
        "<s>", "</s>", "<unk>", "<pad>", "<mask>",
    )  # fmt: skip
    imported = bpe_core.from_hf(folder / "tokenizer.json")
    assert imported.encode(sample) == tokenizer.encode(sample)  # the template is not applied by encode
    assert imported.provenance["ignored_post_processor"] == "TemplateProcessing"


def test_bpe_export_creates_missing_folders_that_auto_tokenizer_loads(
    dna: tuple[bpe_core.Tokenizer, Path], chr17: str, tmp_path: Path
) -> None:
    tokenizer, _ = dna
    tokenizer.save(tmp_path / "dna.json")
    assert_ok(run_bpe("export", "-t", "dna.json", "--format", "hf", "-o", "out/a/dnabert2", cwd=tmp_path))
    assert_ok(run_bpe("export", "-t", "dna.json", "--format", "hf", "-o", "out/b/tokenizer.json", cwd=tmp_path))
    expected = [tokenizer.special_ids["[CLS]"], *tokenizer.encode(chr17), tokenizer.special_ids["[SEP]"]]
    for folder in ("out/a/dnabert2", "out/b"):
        assert AutoTokenizer.from_pretrained(str(tmp_path / folder))(chr17)["input_ids"] == expected, folder


def test_bpe_export_to_tiktoken_creates_a_missing_folder(
    text_tokenizers: dict[str, tuple[bpe_core.Tokenizer, Path]], tmp_path: Path
) -> None:
    tokenizer, _ = text_tokenizers["gpt2"]
    tokenizer.save(tmp_path / "text.json")
    assert_ok(run_bpe("export", "-t", "text.json", "--format", "tiktoken", "-o", "deep/er/text.tiktoken", cwd=tmp_path))
    lines = (tmp_path / "deep" / "er" / "text.tiktoken").read_text().splitlines()
    assert len(lines) == len(tokenizer.regular_ids())


def test_bpe_export_into_a_folder_that_cannot_be_made_is_one_error_line(
    dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, _ = dna
    tokenizer.save(tmp_path / "dna.json")
    (tmp_path / "a-file").write_text("not a folder\n")
    assert_clean_error(
        run_bpe("export", "-t", "dna.json", "--format", "hf", "-o", "a-file/sub/", cwd=tmp_path),
        "cannot create",
        "a-file",
    )
