"""The `bpe` command line, run as the installed console script in a subprocess.

Every command works on real data (slices of the Python documentation). Every failure on bad
input is exit status 2 with one `error: ...` line on stderr that names the file, line or key, no
traceback, and leaves an existing output file untouched (outputs are written atomically).
"""

import hashlib
import importlib.metadata
import json
import re
import shutil
import struct
from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe, train_with_bpe
from helpers.outputs import stray_temporary_files
from helpers.paths import CONFIGS_DIR
from helpers.text import EOT, docs_text, gpt2_byte_characters, multilingual_excerpt, non_ascii_paragraphs, training_text

import bpe_core
from bpe_core import engine

VOCAB = 500
KEEP = b"previous contents, must survive a failed command\n"

# A document with everything an exact round trip must keep: accents, 4-byte characters, tabs,
# CRLF line ends, trailing spaces and no final newline.
TAIL = "A line ending in CRLF \r\n\tand a tab\r\n  trailing spaces   \r\nno final newline"


@pytest.fixture(scope="module")
def cli_texts(workdir: Path) -> Path:
    """The module's directory holding docs.txt (the training slice of the docs), document.txt (the
    multilingual excerpt and TAIL) and paragraph-0.txt to paragraph-5.txt (non-ASCII paragraphs)."""
    (workdir / "docs.txt").write_text(training_text(), encoding="utf-8", newline="")
    (workdir / "document.txt").write_text(multilingual_excerpt() + TAIL, encoding="utf-8", newline="")
    for index, paragraph in enumerate(non_ascii_paragraphs(6)):
        (workdir / f"paragraph-{index}.txt").write_text(paragraph, encoding="utf-8", newline="")
    return workdir


@pytest.fixture(scope="module")
def gpt2_tokenizer(cli_texts: Path) -> Path:
    """configs/gpt2-style.yaml trained on the documentation slice at vocabulary 500."""
    settings = {"trainer.vocab_size": VOCAB}
    return train_with_bpe(CONFIGS_DIR / "gpt2-style.yaml", ["docs.txt"], cli_texts / "gpt2.json", settings, cli_texts)


@pytest.fixture(scope="module")
def huge_tokenizer(cli_texts: Path) -> Path:
    """A tokenizer whose vocabulary (70,000, by padding) does not fit uint16."""
    settings = {"trainer.vocab_size": 300, "trainer.pad_to_multiple_of": 70000}
    return train_with_bpe(CONFIGS_DIR / "gpt2-style.yaml", ["docs.txt"], cli_texts / "huge.json", settings, cli_texts)


@pytest.fixture()
def kept_output(tmp_path: Path) -> Path:
    """An output file that already exists: a failing command must leave it as it is."""
    path = tmp_path / "out.txt"
    path.write_bytes(KEEP)
    return path


def assert_output_kept(path: Path) -> None:
    assert path.read_bytes() == KEEP, "a failed command changed the existing output file"
    assert stray_temporary_files(path.parent) == []


def read_id_lines(text: str) -> list[list[int]]:
    return [[int(token) for token in line.split()] for line in text.splitlines()]


def tokenizer_json(path: Path) -> dict:
    return json.loads(path.read_bytes().decode("utf-8"))


def write_tokenizer_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------- train


def test_train_gpt2_style_config_writes_tokenizer_of_requested_vocab_size(
    gpt2_tokenizer: Path, cli_texts: Path
) -> None:
    tokenizer = bpe_core.load(gpt2_tokenizer)
    assert tokenizer.vocab_size == VOCAB
    assert tokenizer.pretokenizer.name == "gpt2"
    assert tokenizer.special_tokens == [EOT]
    # position end: the special token comes after the 256 bytes and every merge
    assert tokenizer.special_ids[EOT] == 256 + len(tokenizer.merges) == VOCAB - 1
    assert tokenizer.provenance["inputs"][0]["size"] == (cli_texts / "docs.txt").stat().st_size


@pytest.mark.parametrize(
    ("config", "pretokenizer", "specials"),
    [
        (
            "cl100k-style.yaml",
            "cl100k",
            ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"],
        ),
        ("o200k-style.yaml", "o200k", ["<|endoftext|>", "<|endofprompt|>"]),
    ],
)
def test_train_tiktoken_style_configs_pad_vocabulary_to_multiple_of_128(
    cli_texts: Path, tmp_path: Path, config: str, pretokenizer: str, specials: list[str]
) -> None:
    output = tmp_path / "tok.json"
    assert_ok(
        run_bpe(
            "train",
            CONFIGS_DIR / config,
            cli_texts / "docs.txt",
            "-o",
            output,
            "--set",
            "trainer.vocab_size=400",
            cwd=tmp_path,
        )
    )
    tokenizer = bpe_core.load(output)
    assert tokenizer.pretokenizer.name == pretokenizer
    assert tokenizer.special_tokens == specials
    assert tokenizer.vocab_size == 512  # 400 rounded up to the config's pad_to_multiple_of 128
    assert len(tokenizer.merges) == 400 - 256 - len(specials)
    document = (cli_texts / "document.txt").read_bytes().decode("utf-8")
    assert tokenizer.decode(tokenizer.encode(document)) == document


def test_train_without_output_option_writes_the_configs_output_file(cli_texts: Path, tmp_path: Path) -> None:
    config = (
        (CONFIGS_DIR / "gpt2-style.yaml").read_text(encoding="utf-8").replace("vocab_size: 32768", "vocab_size: 300")
    )
    (tmp_path / "gpt2-style.yaml").write_text(config, encoding="utf-8")  # a small size in the file, not by --set
    result = run_bpe("train", "gpt2-style.yaml", cli_texts / "docs.txt", cwd=tmp_path)
    assert_ok(result)
    assert bpe_core.load(tmp_path / "text-gpt2-32k.json").vocab_size == 300
    assert "text-gpt2-32k.json" in result.stderr


def test_train_reads_config_input_paths_relative_to_the_config_file(cli_texts: Path, tmp_path: Path) -> None:
    (tmp_path / "project" / "corpus").mkdir(parents=True)
    shutil.copy(cli_texts / "docs.txt", tmp_path / "project" / "corpus" / "a.txt")
    shutil.copy(cli_texts / "document.txt", tmp_path / "project" / "corpus" / "b.txt")
    shutil.copy(CONFIGS_DIR / "gpt2-style.yaml", tmp_path / "project" / "gpt2-style.yaml")  # input.paths: corpus/*.txt
    (tmp_path / "elsewhere").mkdir()
    output = tmp_path / "tok.json"
    assert_ok(
        run_bpe(
            "train",
            "../project/gpt2-style.yaml",
            "-o",
            output,
            "--set",
            "trainer.vocab_size=300",
            cwd=tmp_path / "elsewhere",
        )
    )
    inputs = bpe_core.load(output).provenance["inputs"]
    assert [Path(source["path"]).name for source in inputs] == ["a.txt", "b.txt"]
    assert [source["size"] for source in inputs] == [
        (cli_texts / name).stat().st_size for name in ("docs.txt", "document.txt")
    ]


def test_train_set_overrides_several_keys(cli_texts: Path, tmp_path: Path) -> None:
    output = tmp_path / "tok.json"
    assert_ok(
        run_bpe(
            "train", CONFIGS_DIR / "gpt2-style.yaml", cli_texts / "docs.txt", "-o", output, "-q",
            "--set", "trainer.vocab_size=300", "--set", "special_tokens.position=start", "--set", "name=overridden",
            cwd=tmp_path,
        )
    )  # fmt: skip
    tokenizer = bpe_core.load(output)
    assert (tokenizer.name, tokenizer.vocab_size, tokenizer.special_ids) == ("overridden", 300, {EOT: 0})


# ---------------------------------------------------------------- encode and decode


def test_encode_then_decode_reproduces_the_document_byte_for_byte(
    gpt2_tokenizer: Path, cli_texts: Path, tmp_path: Path
) -> None:
    ids = tmp_path / "ids.txt"
    assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, cli_texts / "document.txt", "-o", ids, cwd=tmp_path))
    assert len(ids.read_text().splitlines()) == 1
    decoded = tmp_path / "decoded.txt"
    assert_ok(run_bpe("decode", "-t", gpt2_tokenizer, ids, "-o", decoded, cwd=tmp_path))
    assert decoded.read_bytes() == (cli_texts / "document.txt").read_bytes()


def test_encode_ids_equal_the_library_encoding(gpt2_tokenizer: Path, cli_texts: Path) -> None:
    stdout = assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "document.txt", cwd=cli_texts))
    document = (cli_texts / "document.txt").read_bytes().decode("utf-8")
    assert read_id_lines(stdout) == [bpe_core.load(gpt2_tokenizer).encode(document)]


def test_ids_are_written_alike_before_and_after_their_table_is_built(gpt2_tokenizer: Path) -> None:
    """`--format ids` writes the first ids with str() and the rest from a table of every id's text
    (built once about a vocabulary's worth of ids were written): the lines are the same."""
    from bpe_core.corpus.shards import DecimalIds

    tokenizer = bpe_core.load(gpt2_tokenizer)
    ids = tokenizer.encode(docs_text()[:60_000])
    assert len(ids) > 2 * tokenizer.vocab_size
    render = DecimalIds(tokenizer.vocab_size)
    pieces = [ids[start : start + 97] for start in range(0, len(ids), 97)]
    assert [render(piece) for piece in pieces] == [(" ".join(map(str, piece)), len(piece)) for piece in pieces]
    assert len(render.table) == tokenizer.vocab_size


def test_decode_reads_ids_from_standard_input(gpt2_tokenizer: Path, cli_texts: Path) -> None:
    ids = assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "document.txt", cwd=cli_texts))
    result = run_bpe("decode", "-t", gpt2_tokenizer, "-", cwd=cli_texts, stdin=ids.encode())
    assert_ok(result)
    assert result.output == (cli_texts / "document.txt").read_bytes()


def test_encode_reads_a_document_from_standard_input(gpt2_tokenizer: Path, cli_texts: Path) -> None:
    from_file = assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "document.txt", cwd=cli_texts))
    from_stdin = assert_ok(
        run_bpe("encode", "-t", gpt2_tokenizer, "-", cwd=cli_texts, stdin=(cli_texts / "document.txt").read_bytes())
    )
    assert from_stdin == from_file


def test_encode_writes_one_line_of_ids_per_input_file(gpt2_tokenizer: Path, cli_texts: Path) -> None:
    names = [f"paragraph-{index}.txt" for index in range(6)]
    lines = read_id_lines(assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, *names, cwd=cli_texts)))
    tokenizer = bpe_core.load(gpt2_tokenizer)
    assert lines == [tokenizer.encode((cli_texts / name).read_bytes().decode("utf-8")) for name in names]


@pytest.mark.parametrize(("dtype", "code"), [("uint16", "H"), ("uint32", "I")])
def test_encode_bin_is_little_endian_ids_of_all_documents_concatenated(
    gpt2_tokenizer: Path, cli_texts: Path, dtype: str, code: str
) -> None:
    names = ["document.txt", "paragraph-0.txt", "paragraph-1.txt"]
    lines = read_id_lines(assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, *names, cwd=cli_texts)))
    result = run_bpe("encode", "-t", gpt2_tokenizer, *names, "--format", "bin", "--dtype", dtype, cwd=cli_texts)
    assert_ok(result, binary=True)
    width = struct.calcsize("<" + code)
    assert len(result.output) % width == 0
    assert list(struct.unpack(f"<{len(result.output) // width}{code}", result.output)) == [
        token for line in lines for token in line
    ]


def test_encode_bin_to_file_decodes_back_with_decode_format_bin(
    gpt2_tokenizer: Path, cli_texts: Path, tmp_path: Path
) -> None:
    data = tmp_path / "ids.bin"
    assert_ok(
        run_bpe(
            "encode",
            "-t",
            gpt2_tokenizer,
            cli_texts / "document.txt",
            "--format",
            "bin",
            "--dtype",
            "uint32",
            "-o",
            data,
            cwd=tmp_path,
        )
    )
    result = run_bpe("decode", "-t", gpt2_tokenizer, data, "--format", "bin", "--dtype", "uint32", cwd=tmp_path)
    assert_ok(result)
    assert result.output == (cli_texts / "document.txt").read_bytes()


def test_encode_eos_appends_the_special_id_after_each_document(gpt2_tokenizer: Path, cli_texts: Path) -> None:
    names = ["paragraph-0.txt", "paragraph-1.txt", "paragraph-2.txt"]
    plain = read_id_lines(assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, *names, cwd=cli_texts)))
    with_eos = read_id_lines(assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, *names, "--eos", EOT, cwd=cli_texts)))
    eos_id = VOCAB - 1  # the one special token, after every merge
    assert with_eos == [line + [eos_id] for line in plain]
    result = run_bpe("encode", "-t", gpt2_tokenizer, *names, "--eos", EOT, "--format", "bin", cwd=cli_texts)
    assert_ok(result, binary=True)
    binary = result.output
    assert list(struct.unpack(f"<{len(binary) // 2}H", binary)) == [token for line in with_eos for token in line]


def test_decode_renders_the_eos_token_as_its_text(gpt2_tokenizer: Path, cli_texts: Path, tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    assert_ok(
        run_bpe("encode", "-t", gpt2_tokenizer, cli_texts / "paragraph-0.txt", "--eos", EOT, "-o", ids, cwd=tmp_path)
    )
    result = run_bpe("decode", "-t", gpt2_tokenizer, ids, cwd=tmp_path)
    assert assert_ok(result) == (cli_texts / "paragraph-0.txt").read_bytes().decode("utf-8") + EOT


def test_encode_tokens_format_shows_gpt2_byte_characters_of_each_token(gpt2_tokenizer: Path, cli_texts: Path) -> None:
    stdout = assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "document.txt", "--format", "tokens", cwd=cli_texts))
    ids = read_id_lines(assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "document.txt", cwd=cli_texts)))[0]
    (line,) = stdout.splitlines()
    tokens = line.split(" ")
    assert len(tokens) == len(ids)
    byte_of = gpt2_byte_characters()
    assert bytes(byte_of[character] for character in "".join(tokens)) == (cli_texts / "document.txt").read_bytes()


def test_encode_with_two_workers_gives_the_same_output_as_one(
    gpt2_tokenizer: Path, cli_texts: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"  # more than one streamed block (a million characters), so pieces go to both workers
    big.write_text(docs_text()[:1_300_000], encoding="utf-8", newline="")
    names = [big, cli_texts / "document.txt", *sorted(cli_texts.glob("paragraph-*.txt"))]
    one = run_bpe("encode", "-t", gpt2_tokenizer, *names, "--workers", "1", "--eos", EOT, cwd=tmp_path)
    two = run_bpe("encode", "-t", gpt2_tokenizer, *names, "--workers", "2", "--eos", EOT, cwd=tmp_path)
    assert assert_ok(one) == assert_ok(two)
    assert len(one.stdout.splitlines()) == len(names)


# ---------------------------------------------------------------- inspect, plugins, validate, version, demo


def test_inspect_shows_vocabulary_alphabet_specials_pretokenizer_provenance_and_token_lists(
    gpt2_tokenizer: Path, cli_texts: Path
) -> None:
    stdout = assert_ok(run_bpe("inspect", gpt2_tokenizer, cwd=cli_texts))
    assert re.search(r"vocab size:\s+500\b", stdout)
    assert re.search(r"alphabet:\s+256 base symbols", stdout)
    assert f"{EOT}={VOCAB - 1}" in stdout
    assert re.search(r"pretokenizer:\s+gpt2", stdout)
    assert "base symbols (bytes) per token" in stdout  # the pretokenizer's symbol_unit
    docs = (cli_texts / "docs.txt").read_bytes()
    assert hashlib.sha256(docs).hexdigest()[:16] in stdout
    assert f"{len(docs):,} bytes" in stdout
    for heading in ("longest tokens", "last learned", "rarest"):
        assert heading in stdout
    last_learned = stdout.split("last learned")[1].split("rarest")[0]
    assert re.search(rf"^\s+{VOCAB - 2}\s", last_learned, re.MULTILINE), "the last merge has id vocab - 2"


def test_plugins_lists_the_text_plugin_with_version_and_components(tmp_path: Path) -> None:
    stdout = assert_ok(run_bpe("plugins", cwd=tmp_path))
    header = next(line for line in stdout.splitlines() if line.startswith("text "))
    assert "bpe-core" in header and importlib.metadata.version("bpe-core") in header
    for component in ("gpt2", "cl100k", "o200k", "regex", "whitespace", "jsonl", "nfkc", "lowercase"):
        assert re.search(rf"\b{component}\b", stdout), component


@pytest.mark.parametrize("config", ["gpt2-style.yaml", "cl100k-style.yaml", "o200k-style.yaml"])
def test_validate_accepts_each_shipped_config(config: str, tmp_path: Path) -> None:
    stdout = assert_ok(run_bpe("validate", CONFIGS_DIR / config, cwd=tmp_path))
    assert stdout.startswith("ok")


@pytest.mark.parametrize(
    ("setting", "fragments"),
    [
        ("trainer.vocab_sise=300", ["trainer.vocab_sise", "vocab_size"]),
        ("trainer.vocab_size=100", ["trainer.vocab_size", "257"]),
        ("pretokenizer.name=gtp2", ["gtp2", "gpt2"]),
        ("special_tokens.position=middle", ["special_tokens.position", "start"]),
    ],
)
def test_validate_rejects_bad_config_naming_file_and_key(setting: str, fragments: list[str], tmp_path: Path) -> None:
    result = run_bpe("validate", CONFIGS_DIR / "gpt2-style.yaml", "--set", setting, cwd=tmp_path)
    assert_clean_error(result, "gpt2-style.yaml", *fragments)


def test_validate_rejects_unknown_normalizer(tmp_path: Path) -> None:
    result = run_bpe("validate", CONFIGS_DIR / "gpt2-style.yaml", "--set", "normalizer=nfkx", cwd=tmp_path)
    assert_clean_error(result, "gpt2-style.yaml", "normalizer", "nfkx", "nfkc")


def test_version_names_the_package_version_and_the_engine_mode(tmp_path: Path) -> None:
    stdout = assert_ok(run_bpe("--version", cwd=tmp_path))
    assert importlib.metadata.version("bpe-core") in stdout
    # the subprocess inherits BPE_CORE_PURE, so it runs the engine the way this process does
    if engine.is_compiled():
        assert "compiled" in stdout and "pure" not in stdout
    else:
        assert "pure" in stdout and "compiled" not in stdout


def test_demo_shows_merges_and_an_exact_round_trip(tmp_path: Path) -> None:
    stdout = assert_ok(run_bpe("demo", cwd=tmp_path))
    assert "merges" in stdout
    assert "round trip exact: True" in stdout
    assert list(tmp_path.iterdir()) == [], "the demo writes nothing to the working directory"


# ---------------------------------------------------------------- errors: train


def train_args(cli_texts: Path, output: Path, *settings: str) -> list:
    args: list = [
        "train",
        CONFIGS_DIR / "gpt2-style.yaml",
        cli_texts / "docs.txt",
        "-o",
        output,
        "--set",
        "trainer.vocab_size=300",
    ]
    for setting in settings:
        args += ["--set", setting]
    return args


def test_train_unknown_config_key_suggests_the_closest(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(*train_args(cli_texts, kept_output, "trainer.vocab_sise=300"), cwd=kept_output.parent)
    assert_clean_error(result, "gpt2-style.yaml", "trainer.vocab_sise", "did you mean 'vocab_size'")
    assert_output_kept(kept_output)


def test_train_yaml_syntax_error_names_the_line(cli_texts: Path, kept_output: Path) -> None:
    config = kept_output.parent / "broken.yaml"
    config.write_text("name: broken\npretokenizer:\n  name: gpt2\ntrainer:\n\tvocab_size: 300\n", encoding="utf-8")
    result = run_bpe("train", config, cli_texts / "docs.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "broken.yaml", "line 5")
    assert_output_kept(kept_output)


def test_train_vocab_size_below_the_minimum_says_the_minimum(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(*train_args(cli_texts, kept_output, "trainer.vocab_size=200"), cwd=kept_output.parent)
    assert_clean_error(result, "gpt2-style.yaml", "trainer.vocab_size", "257")  # 256 bytes + 1 special token
    assert_output_kept(kept_output)


def test_train_unknown_pretokenizer_lists_known_ones_and_the_closest(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(*train_args(cli_texts, kept_output, "pretokenizer.name=cl100kk"), cwd=kept_output.parent)
    line = assert_clean_error(result, "gpt2-style.yaml", "cl100kk", "did you mean 'cl100k'")
    for known in ("gpt2", "o200k", "regex", "whitespace"):
        assert known in line
    assert_output_kept(kept_output)


def test_train_invalid_user_regex_is_a_clean_error(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(
        *train_args(cli_texts, kept_output, "pretokenizer.name=regex", "pretokenizer.pattern=([a-z]+"),
        cwd=kept_output.parent,
    )
    assert_clean_error(result, "gpt2-style.yaml", "pattern", "([a-z]+")
    assert_output_kept(kept_output)


def test_train_missing_input_file_names_it(cli_texts: Path, kept_output: Path) -> None:
    args = train_args(cli_texts, kept_output)
    args[2] = kept_output.parent / "no-such-corpus.txt"
    assert_clean_error(run_bpe(*args, cwd=kept_output.parent), "no-such-corpus.txt")
    assert_output_kept(kept_output)


def test_train_non_utf8_input_names_the_file(cli_texts: Path, kept_output: Path) -> None:
    bad = kept_output.parent / "latin1.txt"
    bad.write_bytes("Gr\u00fc\u00dfe aus K\u00f6ln\n".encode("latin-1"))
    args = train_args(cli_texts, kept_output)
    args[2] = bad
    assert_clean_error(run_bpe(*args, cwd=kept_output.parent), "latin1.txt", "UTF-8")
    assert_output_kept(kept_output)


def test_train_bad_jsonl_line_names_file_and_line(kept_output: Path) -> None:
    corpus = kept_output.parent / "corpus.jsonl"
    lines = [json.dumps({"text": paragraph}) for paragraph in non_ascii_paragraphs(4)]
    lines.insert(3, '{"text": "unterminated')
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = train_args(Path("."), kept_output, "input.reader=jsonl")
    args[2] = corpus
    assert_clean_error(run_bpe(*args, cwd=kept_output.parent), "corpus.jsonl", "line 4")
    assert_output_kept(kept_output)


def test_train_unknown_normalizer_names_file_and_key(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(*train_args(cli_texts, kept_output, "normalizer=nfkx"), cwd=kept_output.parent)
    assert_clean_error(result, "gpt2-style.yaml", "normalizer", "nfkx", "nfkc")
    assert_output_kept(kept_output)


def test_train_missing_config_file_names_it(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe("train", "no-such-config.yaml", cli_texts / "docs.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "no-such-config.yaml")
    assert_output_kept(kept_output)


def test_train_set_without_equals_sign_is_a_clean_error(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(*train_args(cli_texts, kept_output, "trainer.vocab_size"), cwd=kept_output.parent)
    assert_clean_error(result, "--set", "trainer.vocab_size")
    assert_output_kept(kept_output)


# ---------------------------------------------------------------- errors: encode and decode


def test_encode_missing_input_file_names_it(gpt2_tokenizer: Path, kept_output: Path) -> None:
    result = run_bpe("encode", "-t", gpt2_tokenizer, "no-such-file.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "no-such-file.txt")
    assert_output_kept(kept_output)


def test_encode_non_utf8_input_names_the_file(gpt2_tokenizer: Path, cli_texts: Path, kept_output: Path) -> None:
    bad = kept_output.parent / "mixed.txt"
    bad.write_bytes((cli_texts / "paragraph-0.txt").read_bytes() + b"\n\xff\xfe broken \xc3\x28\n")
    result = run_bpe(
        "encode", "-t", gpt2_tokenizer, cli_texts / "paragraph-1.txt", bad, "-o", kept_output, cwd=kept_output.parent
    )
    assert_clean_error(result, "mixed.txt", "UTF-8")
    assert_output_kept(kept_output)


@pytest.mark.parametrize("corruption", ["truncated", "merge-of-unknown-id", "plugins-not-a-mapping"])
def test_encode_with_corrupt_tokenizer_file_names_it(
    gpt2_tokenizer: Path, cli_texts: Path, kept_output: Path, corruption: str
) -> None:
    # every kind of damage is checked in-process in test_tokenizer_api; these go through the CLI
    data = tokenizer_json(gpt2_tokenizer)
    path = kept_output.parent / f"{corruption}.json"
    if corruption == "truncated":
        path.write_text(json.dumps(data)[:1000], encoding="utf-8")
    elif corruption == "merge-of-unknown-id":
        write_tokenizer_json(path, {**data, "merges": [[100000, 1]]})
    else:
        write_tokenizer_json(path, {**data, "pretokenizer": {"name": "protein", "options": {}}, "plugins": ["protein"]})
    result = run_bpe("encode", "-t", path, cli_texts / "paragraph-0.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, path.name)
    assert_output_kept(kept_output)


def test_encode_with_binary_garbage_as_tokenizer_file_names_it(cli_texts: Path, kept_output: Path) -> None:
    path = kept_output.parent / "garbage.json"
    path.write_bytes(bytes(range(256)) * 4)
    result = run_bpe("encode", "-t", path, cli_texts / "paragraph-0.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "garbage.json")
    assert_output_kept(kept_output)


def test_encode_with_tokenizer_file_of_newer_format_version_says_upgrade(
    gpt2_tokenizer: Path, cli_texts: Path, kept_output: Path
) -> None:
    newer = write_tokenizer_json(kept_output.parent / "newer.json", {**tokenizer_json(gpt2_tokenizer), "version": 99})
    result = run_bpe("encode", "-t", newer, cli_texts / "paragraph-0.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "newer.json", "99", "upgrade")
    assert_output_kept(kept_output)


def test_encode_with_tokenizer_needing_an_uninstalled_pretokenizer_names_it(
    gpt2_tokenizer: Path, cli_texts: Path, kept_output: Path
) -> None:
    data = tokenizer_json(gpt2_tokenizer)
    data["pretokenizer"] = {"name": "klingon-syllables", "options": {}}
    data["plugins"] = {"bpe-klingon": "2.0.1"}
    path = write_tokenizer_json(kept_output.parent / "klingon.json", data)
    result = run_bpe("encode", "-t", path, cli_texts / "paragraph-0.txt", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "klingon.json", "klingon-syllables", "bpe-klingon", "not installed")
    assert_output_kept(kept_output)


def test_encode_missing_tokenizer_file_names_it(cli_texts: Path, kept_output: Path) -> None:
    result = run_bpe(
        "encode",
        "-t",
        "no-such-tokenizer.json",
        cli_texts / "paragraph-0.txt",
        "-o",
        kept_output,
        cwd=kept_output.parent,
    )
    assert_clean_error(result, "no-such-tokenizer.json")
    assert_output_kept(kept_output)


@pytest.mark.parametrize("bad_token", ["x", "1.5", "--5", "\u00b2", "0x1f"])
def test_decode_non_integer_token_names_file_and_line(gpt2_tokenizer: Path, kept_output: Path, bad_token: str) -> None:
    ids = kept_output.parent / "ids.txt"
    ids.write_text(f"72 101 108\n108 111 {bad_token} 33\n", encoding="utf-8")
    result = run_bpe("decode", "-t", gpt2_tokenizer, ids, "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "ids.txt", "line 2", bad_token)
    assert_output_kept(kept_output)


def test_decode_id_outside_the_vocabulary_names_file_and_line(gpt2_tokenizer: Path, kept_output: Path) -> None:
    ids = kept_output.parent / "ids.txt"
    ids.write_text(f"72 101 108\n108 111\n33 {VOCAB + 7}\n", encoding="utf-8")
    result = run_bpe("decode", "-t", gpt2_tokenizer, ids, "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "ids.txt", "line 3", str(VOCAB + 7))
    assert_output_kept(kept_output)


def test_decode_bin_of_odd_length_is_a_clean_error(gpt2_tokenizer: Path, kept_output: Path) -> None:
    data = kept_output.parent / "ids.bin"
    data.write_bytes(struct.pack("<3H", 72, 101, 108) + b"\x00")
    result = run_bpe("decode", "-t", gpt2_tokenizer, data, "--format", "bin", "-o", kept_output, cwd=kept_output.parent)
    assert_clean_error(result, "ids.bin", "uint16")
    assert_output_kept(kept_output)


def test_encode_eos_with_unknown_token_lists_the_special_tokens(
    gpt2_tokenizer: Path, cli_texts: Path, kept_output: Path
) -> None:
    result = run_bpe(
        "encode",
        "-t",
        gpt2_tokenizer,
        cli_texts / "paragraph-0.txt",
        "--eos",
        "<|eot|>",
        "-o",
        kept_output,
        cwd=kept_output.parent,
    )
    assert_clean_error(result, "<|eot|>", EOT)
    assert_output_kept(kept_output)


def test_encode_bin_uint16_rejects_vocabulary_over_65536(
    huge_tokenizer: Path, cli_texts: Path, kept_output: Path
) -> None:
    assert bpe_core.load(huge_tokenizer).vocab_size == 70000
    result = run_bpe(
        "encode", "-t", huge_tokenizer, cli_texts / "paragraph-0.txt",
        "--format", "bin", "--dtype", "uint16", "-o", kept_output,
        cwd=kept_output.parent,
    )  # fmt: skip
    assert_clean_error(result, "uint16", "70000", "uint32")
    assert_output_kept(kept_output)


def test_encode_bin_uint32_accepts_vocabulary_over_65536(huge_tokenizer: Path, cli_texts: Path) -> None:
    result = run_bpe(
        "encode", "-t", huge_tokenizer, "paragraph-0.txt", "--format", "bin", "--dtype", "uint32", cwd=cli_texts
    )
    assert_ok(result, binary=True)
    ids = list(struct.unpack(f"<{len(result.output) // 4}I", result.output))
    assert bpe_core.load(huge_tokenizer).decode(ids) == (cli_texts / "paragraph-0.txt").read_bytes().decode("utf-8")


def test_encode_bin_uint16_accepts_vocabulary_of_exactly_65536(cli_texts: Path, tmp_path: Path) -> None:
    tokenizer = tmp_path / "tok.json"
    assert_ok(
        run_bpe(
            *train_args(cli_texts, tokenizer, "trainer.pad_to_multiple_of=65536", "trainer.vocab_size=300"),
            cwd=tmp_path,
        )
    )
    assert bpe_core.load(tokenizer).vocab_size == 65536  # ids 0..65535 all fit 16 bits
    result = run_bpe(
        "encode", "-t", tokenizer, cli_texts / "paragraph-0.txt", "--format", "bin", "--dtype", "uint16", cwd=tmp_path
    )
    assert_ok(result, binary=True)
    ids = list(struct.unpack(f"<{len(result.output) // 2}H", result.output))
    assert bpe_core.load(tokenizer).decode(ids) == (cli_texts / "paragraph-0.txt").read_bytes().decode("utf-8")


def test_encode_bad_jsonl_line_names_file_and_line(cli_texts: Path, kept_output: Path) -> None:
    directory = kept_output.parent
    corpus = directory / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"text": paragraph}) + "\n" for paragraph in non_ascii_paragraphs(30)), encoding="utf-8"
    )
    tokenizer = directory / "jsonl.json"
    args = train_args(cli_texts, tokenizer, "input.reader=jsonl")
    args[2] = corpus
    assert_ok(run_bpe(*args, cwd=directory))
    broken = directory / "broken.jsonl"
    broken.write_text(
        json.dumps({"text": "first"})
        + "\n\n"
        + json.dumps({"text": "third"})
        + "\n"
        + json.dumps({"title": "no text"})
        + "\n",
        encoding="utf-8",
    )
    result = run_bpe("encode", "-t", tokenizer, broken, "-o", kept_output, cwd=directory)
    assert_clean_error(result, "broken.jsonl", "line 4", "text")
    assert_output_kept(kept_output)


def test_encode_jsonl_reads_the_field_the_tokenizer_was_trained_with(cli_texts: Path, tmp_path: Path) -> None:
    documents = non_ascii_paragraphs(30)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": index, "body": text}) + "\n" for index, text in enumerate(documents)),
        encoding="utf-8",
    )
    tokenizer = tmp_path / "jsonl.json"
    args = train_args(cli_texts, tokenizer, "input.reader=jsonl", "input.field=body")
    args[2] = corpus
    assert_ok(run_bpe(*args, cwd=tmp_path))
    lines = read_id_lines(assert_ok(run_bpe("encode", "-t", tokenizer, corpus, cwd=tmp_path)))
    loaded = bpe_core.load(tokenizer)
    assert lines == [loaded.encode(text) for text in documents]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_encode_text_containing_a_special_token_without_allow_special_names_the_file(
    gpt2_tokenizer: Path, cli_texts: Path, kept_output: Path, workers: str
) -> None:
    tricky = kept_output.parent / "tricky.txt"
    tricky.write_text(
        (cli_texts / "paragraph-0.txt").read_bytes().decode("utf-8") + f"\nuser text with {EOT} inside\n",
        encoding="utf-8",
    )
    result = run_bpe(
        "encode", "-t", gpt2_tokenizer, cli_texts / "paragraph-1.txt", tricky, "-o", kept_output, "--workers", workers,
        cwd=kept_output.parent,
    )  # fmt: skip
    assert_clean_error(result, EOT, "tricky.txt")
    assert_output_kept(kept_output)


def test_encode_allow_special_and_ordinary_choose_how_special_strings_encode(
    gpt2_tokenizer: Path, tmp_path: Path
) -> None:
    text = f"before{EOT}after"
    (tmp_path / "special.txt").write_text(text, encoding="utf-8")
    tokenizer = bpe_core.load(gpt2_tokenizer)
    allowed = read_id_lines(
        assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "special.txt", "--allow-special", cwd=tmp_path))
    )[0]
    assert allowed == tokenizer.encode_ordinary("before") + [VOCAB - 1] + tokenizer.encode_ordinary("after")
    ordinary = read_id_lines(
        assert_ok(run_bpe("encode", "-t", gpt2_tokenizer, "special.txt", "--ordinary", cwd=tmp_path))
    )[0]
    assert VOCAB - 1 not in ordinary
    assert tokenizer.decode(ordinary) == text
