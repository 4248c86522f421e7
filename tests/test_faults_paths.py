"""Paths from files are data, not instructions (issue 36, item 4), and ids are read with the
tokenizer that made them.

- A shard index names its shards: a name that leaves the directory (`..`, an absolute path, a
  symbolic link out of it), or that is no file name at all, is one clean error naming the index
  and the entry, for `bpe decode` and for `bpe_core.data.TokenShards`.
- A shard holds exactly the ids its index counts: extra or missing ids are an error.
- A shard index and an ids file written with `--names` record the tokenizer's content SHA-256;
  decoding with another tokenizer is an error naming both, `--force` (`force=True`) reads anyway.
  The digest is of the content: the same tokenizer read from tokenizer.json or .tiktoken decodes.
  Files written before the digest was recorded still decode.
- A counts file records its counting config's SHA-256; training from it with another config is
  an error naming both.
- A config file's input paths and output stay inside its directory (the working directory for
  the output); files given on the command line are the user's own.

Every command runs the real installed `bpe` on the shared data (text, the lambda genome, POP909
songs) and must leave no file behind when it fails.
"""

import gzip
import json
import shutil
from array import array
from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG, NT_6MER_CONFIG
from helpers.midi import REMI_BPE_CONFIG
from helpers.outputs import snapshot
from helpers.paths import LAMBDA_PATH
from helpers.text import GPT2_CONFIG

import bpe_core
from bpe_core.counts import config_digest, load_counts
from bpe_core.data import TokenShards
from bpe_core.errors import BpeError, WrongTokenizer
from bpe_core.fingerprint import tokenizer_digest

# fixtures: three domains' tokenizers and shard sets, built once -----------------------------------


@pytest.fixture(scope="module")
def texts(workdir: Path, docs_text: str) -> tuple[Path, Path]:
    """Two slices of the Python docs: one to train and encode on, one to train another tokenizer."""
    first = workdir / "first.txt"
    second = workdir / "second.txt"
    first.write_text(docs_text[:40_000], encoding="utf-8", newline="")
    second.write_text(docs_text[200_000:240_000], encoding="utf-8", newline="")
    return first, second


@pytest.fixture(scope="module")
def text_tokenizers(workdir: Path, texts: tuple[Path, Path]) -> tuple[Path, Path]:
    """Two gpt2-style tokenizers with the same vocabulary size (300), trained on different text."""
    paths = []
    for number, text in enumerate(texts):
        tokenizer = bpe_core.train(GPT2_CONFIG, [text], {"trainer.vocab_size": 300}, progress=False)
        paths.append(workdir / f"text-{number}.json")
        tokenizer.save(paths[-1])
    return paths[0], paths[1]


@pytest.fixture(scope="module")
def dna_tokenizer(workdir: Path) -> Path:
    """dnabert2-style trained on the lambda genome, vocabulary 300."""
    path = workdir / "dna.json"
    bpe_core.train(DNABERT2_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": 300}, progress=False).save(path)
    return path


@pytest.fixture(scope="module")
def midi_tokenizer(workdir: Path, songs: list[Path]) -> Path:
    """midi-remi-bpe trained on five POP909 songs, vocabulary 600."""
    path = workdir / "midi.json"
    bpe_core.train(REMI_BPE_CONFIG, songs[:5], {"trainer.vocab_size": 600}, progress=False).save(path)
    return path


def encode_shards(tokenizer: Path, inputs: list[Path], directory: Path) -> Path:
    assert_ok(
        run_bpe(
            "encode", "-t", tokenizer, *inputs, "--format", "bin", "-o", f"{directory}/", "-q", cwd=directory.parent
        )
    )
    return directory


@pytest.fixture(scope="module")
def text_shards(workdir: Path, text_tokenizers: tuple[Path, Path], texts: tuple[Path, Path]) -> Path:
    return encode_shards(text_tokenizers[0], list(texts), workdir / "text-shards")


@pytest.fixture(scope="module")
def dna_shards(workdir: Path, dna_tokenizer: Path) -> Path:
    return encode_shards(dna_tokenizer, [LAMBDA_PATH], workdir / "dna-shards")


@pytest.fixture(scope="module")
def midi_shards(workdir: Path, midi_tokenizer: Path, songs: list[Path]) -> Path:
    return encode_shards(midi_tokenizer, songs[5:8], workdir / "midi-shards")


def index_of(directory: Path) -> dict:
    return json.loads((directory / "index.json").read_text(encoding="utf-8"))


def write_index(directory: Path, index: dict) -> None:
    (directory / "index.json").write_text(json.dumps(index), encoding="utf-8")


def copied(shards: Path, tmp_path: Path) -> Path:
    """A copy of a shard set to damage, in `tmp_path/set`."""
    return Path(shutil.copytree(shards, tmp_path / "set"))


def assert_decode_fails(tmp_path: Path, tokenizer: Path, source: str, *fragments: str, output: str = "out") -> str:
    """`bpe decode` fails with one clean error holding the fragments and leaves every file as it was."""
    before = snapshot(tmp_path)
    line = assert_clean_error(run_bpe("decode", "-t", tokenizer, source, "-o", output, cwd=tmp_path), *fragments)
    assert snapshot(tmp_path) == before, "a failed decode created or changed a file"
    return line


def digest_of(tokenizer: Path) -> str:
    return tokenizer_digest(bpe_core.load(tokenizer))


# shard names that leave the directory -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "symlinked-directory"])
def test_decode_and_token_shards_refuse_a_shard_outside_the_directory(
    kind: str, text_shards: Path, text_tokenizers: tuple[Path, Path], tmp_path: Path
) -> None:
    directory = copied(text_shards, tmp_path)
    index = index_of(directory)
    first = directory / index["shards"][0]["shard"]
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(first, outside / "stolen.bin")  # a valid shard, so only where it is can be wrong
    name = {
        "dotdot": "../outside/stolen.bin",
        "absolute": str(outside / "stolen.bin"),
        "symlink": "link.bin",
        "symlinked-directory": "sub/stolen.bin",
    }[kind]
    if kind == "symlink":
        (directory / "link.bin").symlink_to(outside / "stolen.bin")
    if kind == "symlinked-directory":
        (directory / "sub").symlink_to(outside)
    index["shards"][0]["shard"] = name
    write_index(directory, index)
    why = {"dotdot": "a .. part", "absolute": "an absolute path"}.get(kind, "a symbolic link")
    shown = name[-20:]  # a long name is shown by its start and end
    assert_decode_fails(tmp_path, text_tokenizers[0], "set/", "set/index.json", "shard 1 '", shown, why)
    with pytest.raises(BpeError, match="is outside") as raised:
        TokenShards(directory, 16)
    assert shown in str(raised.value) and "index.json" in str(raised.value)


@pytest.mark.parametrize(
    ("entry", "fragments"),
    [
        ("not an object", ("shard 1", "not an object")),
        ({"tokens": 3}, ("shard 1", "None is not a file name")),
        ({"shard": 7, "tokens": 3}, ("shard 1", "7 is not a file name")),
        ({"shard": "", "tokens": 0}, ("shard 1", "'' is not a file name")),
        ({"shard": "a\u0000b.bin", "tokens": 0}, ("shard 1", "is not a file name")),
        ({"shard": "..", "tokens": 0}, ("shard 1", "a .. part")),
        ({"shard": "a\\..\\..\\b.bin", "tokens": 0}, ("shard 1", "a .. part")),
    ],
    ids=["not-an-object", "no-name", "number", "empty", "nul", "parent", "backslashes"],
)
def test_a_shard_entry_that_names_no_file_inside_is_one_clean_error(
    entry: object, fragments: tuple[str, ...], text_shards: Path, text_tokenizers: tuple[Path, Path], tmp_path: Path
) -> None:
    directory = copied(text_shards, tmp_path)
    index = index_of(directory)
    index["shards"][0] = entry
    write_index(directory, index)
    assert_decode_fails(tmp_path, text_tokenizers[0], "set/", "index.json", *fragments)


# shard sizes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("change", [2, -2], ids=["two-extra-ids", "two-ids-missing"])
def test_a_shard_of_another_length_than_its_index_says_is_refused(
    change: int, text_shards: Path, text_tokenizers: tuple[Path, Path], tmp_path: Path
) -> None:
    directory = copied(text_shards, tmp_path)
    entry = index_of(directory)["shards"][1]
    shard = directory / entry["shard"]
    data = shard.read_bytes()
    shard.write_bytes(data + array("H", [65, 66]).tobytes() if change > 0 else data[:-4])
    line = assert_decode_fails(tmp_path, text_tokenizers[0], "set/", entry["shard"], f"{entry['tokens'] + change} ids")
    assert f"says {entry['tokens']} ids" in line
    with pytest.raises(BpeError, match=f"says {entry['tokens']} ids"):
        TokenShards(directory, 16)


def test_a_shard_index_without_token_counts_is_refused(
    text_shards: Path, text_tokenizers: tuple[Path, Path], tmp_path: Path
) -> None:
    directory = copied(text_shards, tmp_path)
    index = index_of(directory)
    del index["shards"][0]["tokens"]
    write_index(directory, index)
    assert_decode_fails(tmp_path, text_tokenizers[0], "set/", "index.json", "no token count")


# the tokenizer that made the ids -------------------------------------------------------------------


def test_the_shard_index_records_the_tokenizers_name_size_and_content_digest(
    text_shards: Path, text_tokenizers: tuple[Path, Path]
) -> None:
    tokenizer = bpe_core.load(text_tokenizers[0])
    assert index_of(text_shards)["tokenizer"] == {
        "name": tokenizer.name,
        "vocab_size": tokenizer.vocab_size,
        "sha256": tokenizer_digest(tokenizer),
    }


def test_midi_shards_decoded_with_a_dna_tokenizer_are_refused_naming_both(
    midi_shards: Path, midi_tokenizer: Path, dna_tokenizer: Path, tmp_path: Path
) -> None:
    shutil.copytree(midi_shards, tmp_path / "midi-shards")
    midi = bpe_core.load(midi_tokenizer)
    dna = bpe_core.load(dna_tokenizer)
    assert_decode_fails(
        tmp_path,
        dna_tokenizer,
        "midi-shards/",
        f"midi-shards/ was encoded with {midi.name} (sha256 {tokenizer_digest(midi)[:12]}..., 600 ids)",
        f"not {dna.name} (sha256 {tokenizer_digest(dna)[:12]}..., 300 ids)",
        "pass --force to decode anyway",
        output="songs.fa",
    )


def test_a_shard_decoded_alone_is_checked_against_the_index_beside_it(
    midi_shards: Path, midi_tokenizer: Path, dna_tokenizer: Path, tmp_path: Path
) -> None:
    directory = copied(midi_shards, tmp_path)
    entry = index_of(directory)["shards"][0]
    shard = f"set/{entry['shard']}"
    assert_decode_fails(tmp_path, dna_tokenizer, shard, f"{shard} was encoded with", "--force", output="song.fa")
    assert_ok(run_bpe("decode", "-t", midi_tokenizer, shard, "-o", "song.mid", cwd=tmp_path))
    with open(directory / entry["shard"], "ab") as extra:
        extra.write(array("H", [3]).tobytes())
    assert_decode_fails(tmp_path, midi_tokenizer, shard, f"says {entry['tokens']} ids", output="again.mid")


def test_dna_shards_decoded_with_a_midi_tokenizer_write_no_midi_files(
    dna_shards: Path, midi_tokenizer: Path, dna_tokenizer: Path, tmp_path: Path
) -> None:
    shutil.copytree(dna_shards, tmp_path / "dna-shards")
    assert_decode_fails(
        tmp_path, midi_tokenizer, "dna-shards/", bpe_core.load(dna_tokenizer).name, "--force", output="songs/"
    )
    assert not (tmp_path / "songs").exists()


def test_force_decodes_shards_of_another_tokenizer_of_the_same_size(
    text_shards: Path, text_tokenizers: tuple[Path, Path], tmp_path: Path
) -> None:
    made_with, other = text_tokenizers
    assert digest_of(made_with) != digest_of(other)
    assert_clean_error(run_bpe("decode", "-t", other, text_shards, cwd=tmp_path), "--force")
    forced = assert_ok(run_bpe("decode", "-t", other, text_shards, "--force", cwd=tmp_path))
    right = assert_ok(run_bpe("decode", "-t", made_with, text_shards, cwd=tmp_path))
    assert forced and forced != right  # the other tokenizer's meaning of the ids, as asked


def test_the_same_tokenizer_from_tokenizer_json_or_tiktoken_decodes_the_shards(
    text_shards: Path, text_tokenizers: tuple[Path, Path], texts: tuple[Path, Path], tmp_path: Path
) -> None:
    """The digest is of the content, not of a file's bytes: exported and read back, it is the same."""
    native = bpe_core.load(text_tokenizers[0])
    native.to_hf(tmp_path / "tokenizer.json")
    native.to_tiktoken(tmp_path / "text.tiktoken")
    hf = bpe_core.from_hf(tmp_path / "tokenizer.json")
    tiktoken = bpe_core.from_tiktoken(tmp_path / "text.tiktoken", pattern="gpt2", special_tokens=native.special_ids)
    assert tokenizer_digest(hf) == tokenizer_digest(tiktoken) == tokenizer_digest(native)
    hf.save(tmp_path / "from-hf.json")  # our format again, with the import's own name and provenance
    assert (tmp_path / "from-hf.json").read_bytes() != text_tokenizers[0].read_bytes()
    decoded = run_bpe("decode", "-t", "from-hf.json", text_shards, cwd=tmp_path)
    assert_ok(decoded, binary=True)
    assert decoded.output == b"".join(text.read_bytes() for text in texts)


def test_an_index_written_before_digests_still_decodes_and_checks_the_vocabulary_size(
    text_shards: Path,
    text_tokenizers: tuple[Path, Path],
    midi_tokenizer: Path,
    texts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    directory = copied(text_shards, tmp_path)
    index = index_of(directory)
    del index["tokenizer"]["sha256"]
    write_index(directory, index)
    decoded = run_bpe("decode", "-t", text_tokenizers[0], "set/", cwd=tmp_path)
    assert_ok(decoded, binary=True)
    assert decoded.output == b"".join(text.read_bytes() for text in texts)
    midi = bpe_core.load(midi_tokenizer)
    assert_decode_fails(tmp_path, midi_tokenizer, "set/", "a vocabulary of 300 ids", f"{midi.name} has 600", "--force")


def test_token_shards_refuse_another_tokenizer_unless_forced(
    midi_shards: Path, midi_tokenizer: Path, dna_tokenizer: Path
) -> None:
    midi = bpe_core.load(midi_tokenizer)
    dna = bpe_core.load(dna_tokenizer)
    with pytest.raises(WrongTokenizer, match="pass force=True") as raised:
        TokenShards(midi_shards, 64, pad_id=0, tokenizer=dna)
    assert midi.name in str(raised.value) and dna.name in str(raised.value)
    assert len(TokenShards(midi_shards, 64, pad_id=0, tokenizer=dna, force=True)) >= 1
    right = TokenShards(midi_shards, 64, pad_id=0, tokenizer=midi)
    assert right[0].tolist() == TokenShards(midi_shards, 64, pad_id=0)[0].tolist()


# ids files written with --names ------------------------------------------------------------------


def test_names_ids_file_records_the_tokenizer_and_another_one_is_refused(
    dna_tokenizer: Path, midi_tokenizer: Path, tmp_path: Path
) -> None:
    ids = tmp_path / "lambda.ids"
    assert_ok(run_bpe("encode", "-t", dna_tokenizer, LAMBDA_PATH, "--names", "-q", "-o", ids, cwd=tmp_path))
    header, _, rows = ids.read_text(encoding="utf-8").partition("\n")
    dna = bpe_core.load(dna_tokenizer)
    assert json.loads(header.removeprefix("#bpe-core ids "))["tokenizer"]["sha256"] == tokenizer_digest(dna)
    assert_decode_fails(tmp_path, midi_tokenizer, "lambda.ids", "lambda.ids was encoded with", dna.name, "--force")
    assert_ok(run_bpe("decode", "-t", dna_tokenizer, "lambda.ids", "-o", "back.fa", cwd=tmp_path))
    assert (tmp_path / "back.fa").read_text().startswith(">")
    (tmp_path / "old.ids").write_text(rows, encoding="utf-8")  # as written before the header
    assert_ok(run_bpe("decode", "-t", dna_tokenizer, "old.ids", "-o", "old.fa", cwd=tmp_path))
    assert (tmp_path / "old.fa").read_bytes() == (tmp_path / "back.fa").read_bytes()


# counts files ----------------------------------------------------------------------------------


def test_training_from_counts_of_another_config_is_refused_naming_both_digests(tmp_path: Path) -> None:
    assert_ok(run_bpe("count", DNABERT2_CONFIG, LAMBDA_PATH, "-o", "lambda.counts", "-q", cwd=tmp_path))
    counts = load_counts(tmp_path / "lambda.counts")
    other = bpe_core.count(NT_6MER_CONFIG, [LAMBDA_PATH], progress=False)
    before = snapshot(tmp_path)
    assert_clean_error(
        run_bpe("train", NT_6MER_CONFIG, "--from-counts", "lambda.counts", "-o", "t.json", "-q", cwd=tmp_path),
        "lambda.counts: counted with",
        f"config sha256 {config_digest(counts.config)[:12]}...",
        f"config sha256 {config_digest(other.config)[:12]}...",
    )
    assert snapshot(tmp_path) == before


def test_a_counts_header_whose_config_does_not_match_its_digest_is_damaged(tmp_path: Path) -> None:
    assert_ok(run_bpe("count", DNABERT2_CONFIG, LAMBDA_PATH, "-o", "lambda.counts", "-q", cwd=tmp_path))
    header, _, records = gzip.decompress((tmp_path / "lambda.counts").read_bytes()).partition(b"\n")
    fields = json.loads(header)
    assert fields["config_sha256"] == config_digest(fields["config"])
    fields["config"]["normalizer"] = "nfkc"
    (tmp_path / "bad.counts").write_bytes(gzip.compress(json.dumps(fields).encode() + b"\n" + records))
    assert_clean_error(
        run_bpe("train", DNABERT2_CONFIG, "--from-counts", "bad.counts", "-o", "t.json", "-q", cwd=tmp_path),
        "bad.counts",
        "config_sha256",
    )


# configs -----------------------------------------------------------------------------------------


def small_config(paths: list[str], output: str = "small.json") -> str:
    config = GPT2_CONFIG.read_text(encoding="utf-8").replace("vocab_size: 32768", "vocab_size: 270")
    config = config.replace('paths: ["corpus/*.txt"]', f"paths: {json.dumps(paths)}")
    return config.replace("output: text-gpt2-32k.json", f"output: {json.dumps(output)}")


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink-in-glob", "symlinked-directory"])
def test_config_input_paths_outside_its_directory_are_refused(
    kind: str, texts: tuple[Path, Path], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "corpus").mkdir(parents=True)
    outside = tmp_path / "private.txt"
    shutil.copy(texts[0], outside)
    paths = {
        "dotdot": ["../private.txt"],
        "absolute": [str(outside)],
        "symlink-in-glob": ["corpus/*.txt"],
        "symlinked-directory": ["elsewhere"],
    }[kind]
    if kind == "symlink-in-glob":
        (project / "corpus" / "a.txt").symlink_to(outside)
    if kind == "symlinked-directory":
        (project / "elsewhere").symlink_to(tmp_path)
    (project / "small.yaml").write_text(small_config(paths), encoding="utf-8")
    before = snapshot(tmp_path)
    assert_clean_error(
        run_bpe("train", "project/small.yaml", "-o", "t.json", "-q", cwd=tmp_path),
        "project/small.yaml",
        "input.paths[0]",
        "is outside project",
    )
    assert snapshot(tmp_path) == before
    # the same file given on the command line is the user's own choice, as a file or with --set
    assert_ok(run_bpe("train", "project/small.yaml", outside, "-o", "t.json", "-q", cwd=tmp_path))
    chosen = f"input.paths={json.dumps([str(outside)])}"
    assert_ok(run_bpe("train", "project/small.yaml", "--set", chosen, "-o", "t2.json", "-q", cwd=tmp_path))


def test_config_input_paths_inside_its_directory_are_read(texts: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "project" / "corpus" / "deep").mkdir(parents=True)
    shutil.copy(texts[0], tmp_path / "project" / "corpus" / "deep" / "a.txt")
    (tmp_path / "project" / "small.yaml").write_text(small_config(["corpus/**/*.txt", "./corpus"]), encoding="utf-8")
    assert_ok(run_bpe("train", "project/small.yaml", "-o", "t.json", "-q", cwd=tmp_path))


@pytest.mark.parametrize("output", ["/tmp/elsewhere/small.json", "../small.json"], ids=["absolute", "dotdot"])
def test_config_output_outside_the_working_directory_is_refused_before_training(
    output: str, texts: tuple[Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "small.yaml").write_text(small_config([], output), encoding="utf-8")
    before = snapshot(tmp_path)
    assert_clean_error(
        run_bpe("train", "small.yaml", texts[0], "-q", cwd=tmp_path / "work"),
        "small.yaml",
        "output",
        repr(output),
        "outside the working directory",
    )
    assert snapshot(tmp_path) == before
    assert_ok(run_bpe("train", "small.yaml", texts[0], "-q", "-o", "chosen.json", cwd=tmp_path / "work"))
    assert bpe_core.load(tmp_path / "work" / "chosen.json").vocab_size == 270
    chosen = f"output={tmp_path / 'set.json'}"
    assert_ok(run_bpe("train", "small.yaml", texts[0], "-q", "--set", chosen, cwd=tmp_path / "work"))
    assert bpe_core.load(tmp_path / "set.json").vocab_size == 270
