"""The command line's grammar and its first-hour details, run as the installed `bpe` on real data.

- Published tiktoken vocabularies are recognised by content: `bpe import FILE -o tok.json` needs
  no format, pattern or special tokens, and encodes exactly like tiktoken's own definition of that
  encoding (tiktoken builds it offline from the same file through its cache, checking its hash).
  An unknown `.tiktoken` file without `--pattern` is one error line.
- Formats and dtypes come from file names and shard indexes; `-t` works wherever a tokenizer is
  read; no option is accepted by a prefix of its name; docs/cli.md lists every command.
- `encode -o FILE` prints a summary, its progress bar counts bytes, `--format tokens` writes one
  whitespace-free word per token, `inspect` lists at most `--top` inputs, says where an imported
  vocabulary came from and measures compression `--on` other files, `--set trainer.vocab_size`
  names the output after the vocabulary, and outputs get the usual permissions.
"""

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import mido
import pytest
import tiktoken
from helpers.cli_runner import BPE, assert_clean_error, assert_ok, bpe_env, run_bpe, train_with_bpe
from helpers.dna import DNABERT2_CONFIG
from helpers.interop import published_vocabulary_path
from helpers.midi import REMI_BPE_CONFIG, absolute_messages, pop909_paths, reference_song
from helpers.outputs import snapshot
from helpers.paths import CONFIGS_DIR, DOCS_PATH, ECOLI_PATH, LAMBDA_PATH, PROJECT_ROOT
from tiktoken_ext import openai_public

import bpe_core
from bpe_core.arguments import build_parser
from bpe_core.cli import COMMANDS
from bpe_core.formats.tiktoken import PUBLISHED

TEXT_CHARS = 300_000  # the slice of the Python docs the command line encodes


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def docs_and_unseen(workdir: Path, docs_text: str) -> Path:
    """The module's directory holding docs.txt (the first TEXT_CHARS characters of the docs) and
    unseen.txt (the next TEXT_CHARS)."""
    (workdir / "docs.txt").write_text(docs_text[:TEXT_CHARS], encoding="utf-8", newline="")
    (workdir / "unseen.txt").write_text(docs_text[TEXT_CHARS : 2 * TEXT_CHARS], encoding="utf-8", newline="")
    return workdir


@pytest.fixture(scope="module")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """tiktoken's download cache holding the published files, so that tiktoken builds its own
    encodings (pattern, special tokens, hash check) offline from the files we import."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name in ("cl100k", "o200k"):
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}_base.tiktoken"
        with gzip.open(published_vocabulary_path(name), "rb") as handle:
            (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(handle.read())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        yield cache


def tiktoken_definition(name: str, cache: Path) -> tiktoken.Encoding:
    """tiktoken's own encoding NAME_base, as tiktoken_ext.openai_public defines it."""
    assert os.environ.get("TIKTOKEN_CACHE_DIR") == str(cache)
    return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[f"{name}_base"]())


def text_with_specials(text: str, specials: list[str]) -> str:
    """Paragraphs of `text` with each special token string between some of them and inside a word."""
    paragraphs = [paragraph for paragraph in text.split("\n\n") if paragraph.strip()]
    pieces = []
    for index, paragraph in enumerate(paragraphs):
        pieces.append(paragraph)
        pieces.append(specials[index % len(specials)] if index % 3 == 0 else "\n\n")
    return "".join(pieces) + "in" + specials[0] + "word" + "".join(specials)


def id_words(path: Path) -> list[int]:
    return [int(word) for word in path.read_text(encoding="utf-8").split()]


@pytest.fixture(scope="module")
def text_tokenizer(docs_and_unseen: Path) -> Path:
    output = docs_and_unseen / "gpt2.json"
    return train_with_bpe(
        CONFIGS_DIR / "gpt2-style.yaml", ["docs.txt"], output, {"trainer.vocab_size": 400}, docs_and_unseen
    )


@pytest.fixture(scope="module")
def dna_tokenizer(docs_and_unseen: Path) -> Path:
    output = docs_and_unseen / "dna.json"
    return train_with_bpe(DNABERT2_CONFIG, [LAMBDA_PATH], output, {"trainer.vocab_size": 300}, docs_and_unseen)


@pytest.fixture(scope="module")
def midi_tokenizer(docs_and_unseen: Path, songs: list[Path]) -> Path:
    """midi-remi-bpe trained on 30 POP909 songs at vocabulary 600."""
    output = docs_and_unseen / "midi.json"
    return train_with_bpe(REMI_BPE_CONFIG, songs[:30], output, {"trainer.vocab_size": 600}, docs_and_unseen)


# ---------------------------------------------------------------------------------------------
# 2. published vocabularies


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_import_of_a_published_vocabulary_encodes_text_with_special_tokens_exactly_like_tiktoken(
    name: str, docs_and_unseen: Path, tiktoken_cache: Path, tmp_path: Path
) -> None:
    theirs = tiktoken_definition(name, tiktoken_cache)
    result = run_bpe("import", published_vocabulary_path(name), "-o", tmp_path / "tok.json", cwd=tmp_path)
    assert_ok(result)
    assert (
        f"published {name}_base" in result.stderr
        and f"{len(theirs.special_tokens_set)} special tokens" in result.stderr
    )
    text = text_with_specials(
        (docs_and_unseen / "docs.txt").read_text(encoding="utf-8"), sorted(theirs.special_tokens_set)
    )
    (tmp_path / "text.txt").write_text(text, encoding="utf-8", newline="")
    assert_ok(run_bpe("encode", "-t", "tok.json", "text.txt", "--allow-special", "-o", "ids.txt", "-q", cwd=tmp_path))
    expected = theirs.encode(text, allowed_special="all")
    ours = id_words(tmp_path / "ids.txt")
    assert len(ours) == len(expected) and ours == expected
    assert theirs.eot_token in ours
    # ordinary text (no specials) too: the o200k count was 67,094 where tiktoken gives its own
    assert_ok(run_bpe("encode", "-t", "tok.json", docs_and_unseen / "docs.txt", "-o", "plain.ids", "-q", cwd=tmp_path))
    assert id_words(tmp_path / "plain.ids") == theirs.encode_ordinary(
        (docs_and_unseen / "docs.txt").read_text(encoding="utf-8")
    )


def test_published_table_matches_tiktokens_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every published file tiktoken knows (r50k and p50k too, which no test data ships) has its
    hash, special tokens and pattern in our table."""
    from bpe_text.pretokenizers import PATTERNS

    seen: dict[str, str] = {}

    def fake_load(url: str, expected_hash: str) -> dict[bytes, int]:
        seen["hash"] = expected_hash
        return {}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        definition = openai_public.ENCODING_CONSTRUCTORS[name]()
        ours = PUBLISHED[seen["hash"]]
        assert ours.name == name
        assert ours.special_tokens == definition["special_tokens"]
        pattern = definition["pat_str"]
        assert PATTERNS[ours.pattern] == pattern or (ours.pattern == "gpt2" and pattern == openai_public.r50k_pat_str)
    assert len(PUBLISHED) == 4


def test_unknown_tiktoken_file_without_pattern_is_one_error_line_asking_for_it(
    docs_and_unseen: Path, tmp_path: Path
) -> None:
    """A vocabulary that is not a published one (cl100k's first 2,000 ranks) has no default pattern."""
    with gzip.open(published_vocabulary_path("cl100k"), "rb") as handle:
        lines = handle.read().splitlines(keepends=True)[:2000]
    (tmp_path / "small.tiktoken").write_bytes(b"".join(lines))
    (tmp_path / "tok.json").write_text("kept\n")
    before = snapshot(tmp_path)
    assert_clean_error(
        run_bpe("import", "small.tiktoken", "-o", "tok.json", cwd=tmp_path), "small.tiktoken", "--pattern"
    )
    assert snapshot(tmp_path) == before
    with pytest.raises(bpe_core.BpeError, match="pattern"):
        bpe_core.from_tiktoken(tmp_path / "small.tiktoken")
    # with its pattern it imports and encodes like tiktoken with the same ranks and pattern
    assert_ok(run_bpe("import", "small.tiktoken", "--pattern", "cl100k", "-o", "tok.json", cwd=tmp_path))
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in lines)}
    theirs = tiktoken.Encoding("small", pat_str=tiktoken_cl100k_pattern(), mergeable_ranks=ranks, special_tokens={})
    assert_ok(run_bpe("encode", "-t", "tok.json", docs_and_unseen / "docs.txt", "-o", "ids.txt", "-q", cwd=tmp_path))
    assert id_words(tmp_path / "ids.txt") == theirs.encode_ordinary(
        (docs_and_unseen / "docs.txt").read_text(encoding="utf-8")
    )


def tiktoken_cl100k_pattern() -> str:
    source = Path(openai_public.__file__).read_text(encoding="utf-8")
    match = re.search(r'def cl100k_base\(\):.*?"pat_str": r"""(.*?)"""', source, re.S)
    assert match
    return match.group(1)


def test_explicit_special_adds_to_and_pattern_replaces_the_published_ones(
    docs_and_unseen: Path, tiktoken_cache: Path, tmp_path: Path
) -> None:
    theirs = tiktoken_definition("o200k", tiktoken_cache)
    custom = {"<|custom|>": theirs.n_vocab}
    assert_ok(
        run_bpe(
            "import",
            published_vocabulary_path("o200k"),
            "--special",
            f"<|custom|>={theirs.n_vocab}",
            "-o",
            "tok.json",
            cwd=tmp_path,
        )
    )
    extended = tiktoken.Encoding(
        "extended",
        pat_str=theirs._pat_str,
        mergeable_ranks=theirs._mergeable_ranks,
        special_tokens={**theirs._special_tokens, **custom},
    )
    text = text_with_specials(
        (docs_and_unseen / "docs.txt").read_text(encoding="utf-8")[:20_000], ["<|custom|>", "<|endoftext|>"]
    )
    (tmp_path / "text.txt").write_text(text, encoding="utf-8", newline="")
    assert_ok(run_bpe("encode", "-t", "tok.json", "text.txt", "--allow-special", "-o", "ids.txt", "-q", cwd=tmp_path))
    assert id_words(tmp_path / "ids.txt") == extended.encode(text, allowed_special="all")
    assert_ok(
        run_bpe(
            "import",
            published_vocabulary_path("cl100k"),
            "--pattern",
            "gpt2",
            "-o",
            "gpt2-pattern.json",
            "-q",
            cwd=tmp_path,
        )
    )
    shown = assert_ok(run_bpe("inspect", "gpt2-pattern.json", "--top", "1", cwd=tmp_path))
    assert re.search(r"^pretokenizer:\s+gpt2$", shown, re.M) and "<|endoftext|>=100257" in shown


# ---------------------------------------------------------------------------------------------
# 3. one grammar


def test_an_option_is_never_accepted_by_a_prefix_of_its_name(docs_and_unseen: Path) -> None:
    """`--from` used to mean `--from-counts` (it is an option of its own now, continued training),
    `--tok` `--tokenizer`: every future option could collide so."""
    assert_clean_error(
        run_bpe("train", CONFIGS_DIR / "gpt2-style.yaml", "--from-c", "x.counts", cwd=docs_and_unseen), "--from-c"
    )
    assert_clean_error(run_bpe("encode", "--tok", "gpt2.json", "docs.txt", cwd=docs_and_unseen), "--tok")
    assert_clean_error(run_bpe("inspect", "gpt2.json", "--to", "3", cwd=docs_and_unseen), "--to")


def test_decode_of_a_genome_bin_file_needs_no_format_or_dtype(dna_tokenizer: Path, tmp_path: Path) -> None:
    """The issue's `bpe decode -t tok.json genome.bin` printed a UnicodeDecodeError traceback."""
    result = run_bpe("encode", "-t", dna_tokenizer, LAMBDA_PATH, "-o", "genome.bin", cwd=tmp_path)
    assert_ok(result)
    tokens = int(
        re.fullmatch(r"1 documents, ([0-9,]+) tokens -> genome\.bin\n", result.stderr).group(1).replace(",", "")
    )
    assert (tmp_path / "genome.bin").stat().st_size == 2 * tokens  # uint16: the vocabulary fits
    decoded = assert_ok(run_bpe("decode", "-t", dna_tokenizer, "genome.bin", cwd=tmp_path))
    assert decoded.strip() == read_sequence(LAMBDA_PATH)


def read_sequence(path: Path) -> str:
    with gzip.open(path, "rt", encoding="ascii") as handle:
        return "".join(line.strip() for line in handle if not line.startswith(">")).upper()


def test_decode_of_a_shard_takes_the_dtype_from_its_index(
    text_tokenizer: Path, docs_and_unseen: Path, tmp_path: Path
) -> None:
    """uint32 shards of a vocabulary that would fit uint16: only the index says how wide the ids are."""
    assert_ok(
        run_bpe(
            "encode",
            "-t",
            text_tokenizer,
            docs_and_unseen / "docs.txt",
            "--dtype",
            "uint32",
            "-o",
            "shards/",
            "-q",
            cwd=tmp_path,
        )
    )
    index = json.loads((tmp_path / "shards" / "index.json").read_text(encoding="utf-8"))
    shard = tmp_path / "shards" / index["shards"][0]["shard"]
    assert index["dtype"] == "uint32" and shard.stat().st_size == 4 * index["tokens"]
    decoded = assert_ok(run_bpe("decode", "-t", text_tokenizer, shard, "-o", "back.txt", cwd=tmp_path))
    assert decoded == ""
    assert (tmp_path / "back.txt").read_bytes() == (docs_and_unseen / "docs.txt").read_bytes()
    index["dtype"] = "int8"
    (tmp_path / "shards" / "index.json").write_text(json.dumps(index), encoding="utf-8")
    assert_clean_error(
        run_bpe("decode", "-t", text_tokenizer, shard, cwd=tmp_path), "index.json", "int8", "uint16, uint32"
    )


def test_encode_of_a_vocabulary_over_65536_to_bin_picks_uint32(docs_and_unseen: Path, tmp_path: Path) -> None:
    assert_ok(run_bpe("import", published_vocabulary_path("o200k"), "-o", "o200k.json", "-q", cwd=tmp_path))
    assert_ok(run_bpe("encode", "-t", "o200k.json", docs_and_unseen / "docs.txt", "-o", "docs.bin", "-q", cwd=tmp_path))
    decoded = assert_ok(run_bpe("decode", "-t", "o200k.json", "docs.bin", cwd=tmp_path))
    assert decoded == (docs_and_unseen / "docs.txt").read_text(encoding="utf-8")


def test_export_and_import_take_the_format_from_the_file_name(
    text_tokenizer: Path, docs_and_unseen: Path, tmp_path: Path
) -> None:
    assert_ok(run_bpe("export", "-t", text_tokenizer, "-o", "mine.tiktoken", cwd=tmp_path))
    assert_ok(run_bpe("export", "-t", text_tokenizer, "-o", "tokenizer.json", cwd=tmp_path))
    lines = (tmp_path / "mine.tiktoken").read_text(encoding="ascii").splitlines()
    tokenizer = bpe_core.load(text_tokenizer)
    assert len(lines) == tokenizer.vocab_size - len(tokenizer.special_tokens) and all(
        len(line.split()) == 2 for line in lines
    )
    assert json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))["model"]["type"] == "BPE"
    assert_ok(run_bpe("import", "mine.tiktoken", "--pattern", "gpt2", "-o", "from-tiktoken.json", "-q", cwd=tmp_path))
    assert_ok(run_bpe("import", "tokenizer.json", "-o", "from-hf.json", "-q", cwd=tmp_path))
    expected = assert_ok(run_bpe("encode", "-t", text_tokenizer, docs_and_unseen / "unseen.txt", cwd=tmp_path))
    for imported in ("from-tiktoken.json", "from-hf.json"):
        assert assert_ok(run_bpe("encode", "-t", imported, docs_and_unseen / "unseen.txt", cwd=tmp_path)) == expected


def test_a_name_that_does_not_say_the_format_is_one_error_line(text_tokenizer: Path, tmp_path: Path) -> None:
    shutil.copy(text_tokenizer, tmp_path / "ours.json")
    (tmp_path / "vocab.txt").write_text("not a vocabulary\n")
    before = snapshot(tmp_path)
    assert_clean_error(run_bpe("import", "vocab.txt", "-o", "x.json", cwd=tmp_path), "vocab.txt", "--format")
    assert_clean_error(
        run_bpe("import", "ours.json", "-o", "x.json", cwd=tmp_path), "ours.json", "already a bpe-core tokenizer"
    )
    assert_clean_error(run_bpe("export", "-t", "ours.json", "-o", "vocab.out", cwd=tmp_path), "vocab.out", "--format")
    assert snapshot(tmp_path) == before


def test_inspect_takes_the_tokenizer_as_t_or_positionally_but_once(text_tokenizer: Path, tmp_path: Path) -> None:
    positional = assert_ok(run_bpe("inspect", text_tokenizer, "--top", "3", cwd=tmp_path))
    assert assert_ok(run_bpe("inspect", "-t", text_tokenizer, "--top", "3", cwd=tmp_path)) == positional
    assert_clean_error(run_bpe("inspect", cwd=tmp_path), "-t TOKENIZER")
    assert_clean_error(run_bpe("inspect", text_tokenizer, "-t", text_tokenizer, cwd=tmp_path), "once")


def test_docs_cli_table_lists_every_command_and_every_command_runs_something() -> None:
    parser = build_parser("bpe-core test")
    commands = next(action for action in parser._actions if action.dest == "command").choices
    assert set(COMMANDS) == set(commands)
    table = (PROJECT_ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("\n## ")[0]
    documented = set(re.findall(r"^\| `bpe ([a-z]+)", table, re.M))
    assert documented == set(commands), f"missing from docs/cli.md: {set(commands) - documented}"


# ---------------------------------------------------------------------------------------------
# 6. first-hour details


def test_encode_to_a_file_prints_the_one_line_summary_shards_print(
    text_tokenizer: Path, docs_and_unseen: Path, tmp_path: Path
) -> None:
    inputs = (docs_and_unseen / "docs.txt", docs_and_unseen / "unseen.txt")
    to_file = run_bpe("encode", "-t", text_tokenizer, *inputs, "-o", "ids.txt", cwd=tmp_path)
    assert_ok(to_file)
    tokens = sum(len(line.split()) for line in (tmp_path / "ids.txt").read_text(encoding="utf-8").splitlines())
    assert to_file.stderr == f"2 documents, {tokens:,} tokens -> ids.txt\n"
    to_shards = run_bpe("encode", "-t", text_tokenizer, *inputs, "-o", "shards/", cwd=tmp_path)
    assert_ok(to_shards)
    assert (
        to_shards.stderr == f"2 documents, {tokens:,} tokens in 2 shards -> {os.path.join('shards/', 'index.json')}\n"
    )
    assert (
        run_bpe(
            "encode", "-t", text_tokenizer, docs_and_unseen / "docs.txt", "-o", "quiet.txt", "-q", cwd=tmp_path
        ).stderr
        == ""
    )


def run_in_terminal(*args: object, cwd: Path) -> str:
    """`bpe ARGS` with a terminal (80 columns) as its standard error: what a user sees."""
    import pty

    command = [str(BPE), *map(str, args)]
    controller, terminal = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        command, cwd=cwd, env=bpe_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(timeout=600) == 0, shown
    os.close(controller)
    return shown.decode("utf-8", "replace")


def test_progress_of_one_large_document_counts_bytes_of_input(dna_tokenizer: Path, tmp_path: Path) -> None:
    """A genome is one document: a bar in documents showed `0doc` until the end."""
    shown = run_in_terminal(
        "encode", "-t", dna_tokenizer, ECOLI_PATH, LAMBDA_PATH, "-o", "ids.txt", "--workers", "1", cwd=tmp_path
    )
    states = [state for state in re.split(r"[\r\n]", shown) if state.startswith("encoding:")]
    assert states and not any("doc/s" in state or "0doc" in state for state in states), states
    total = ECOLI_PATH.stat().st_size + LAMBDA_PATH.stat().st_size
    assert all(f"/{total / 1e6:.2f}M" in state for state in states), (total, states)  # the bar's total: input bytes


def test_progress_of_streamed_text_moves_block_by_block(tmp_path: Path) -> None:
    """In-process: the bar's total is the input's size, and it moves with each block read."""
    from bpe_core import progress
    from bpe_core.plugins import registry

    path = tmp_path / "docs.txt"
    with gzip.open(DOCS_PATH, "rb") as handle:
        path.write_bytes(handle.read(5_000_000))
    with progress.input_bar(True, "encoding", [str(path)]) as bar:
        documents = progress.metered(registry().reader("text", {}).documents([str(path)]), bar)
        document = next(documents)
        seen = [bar.n for _ in document.blocks()]
        assert list(documents) == [] and bar.total == path.stat().st_size == bar.n
    assert len(seen) > 2 and 0 < seen[0] and seen == sorted(set(seen)) and seen[-1] == bar.total  # block by block


def test_tokens_format_writes_one_whitespace_free_word_per_midi_token(midi_tokenizer: Path, tmp_path: Path) -> None:
    song = pop909_paths()[100]
    ids = [int(word) for word in assert_ok(run_bpe("encode", "-t", midi_tokenizer, song, cwd=tmp_path)).split()]
    words = assert_ok(run_bpe("encode", "-t", midi_tokenizer, song, "--format", "tokens", cwd=tmp_path)).split()
    assert len(words) == len(ids)  # was 12,062 words for 7,288 tokens
    tokenizer = bpe_core.load(midi_tokenizer)
    assert words == ["+".join(tokenizer.token_symbols(token)) for token in ids]
    assert any("+" in word for word in words)


def test_inspect_lists_at_most_top_input_files(midi_tokenizer: Path, tmp_path: Path) -> None:
    shown = assert_ok(run_bpe("inspect", midi_tokenizer, "--top", "3", cwd=tmp_path))
    listed = [line for line in shown.splitlines() if re.match(r"^  \S+\.mid  ", line)]
    assert [Path(line.split()[0]).name for line in listed] == [path.name for path in pop909_paths()[:3]]
    assert "... and 27 more input files (30 in all" in shown


@pytest.mark.parametrize(
    "damage",
    [
        {"drop": "symbols"},  # found by tests/test_fuzz.py: a KeyError traceback
        {"symbols": "many", "chunks": None, "seconds": [1]},
        {"inputs": [{"path": 3}, "a.txt", {"size": "big", "sha256": 5}]},
        {"counting": {"augmented": "x"}},
        {"inputs": {"a": 1}, "counting": [1], "tokens": True},
    ],
)
def test_inspect_of_a_file_whose_training_provenance_was_edited_shows_what_it_can(
    text_tokenizer: Path, tmp_path: Path, damage: dict[str, object]
) -> None:
    data = json.loads(text_tokenizer.read_text(encoding="utf-8"))
    provenance = data["provenance"]
    provenance.pop(str(damage.pop("drop", "")), None)
    provenance.update(damage)
    (tmp_path / "edited.json").write_text(json.dumps(data), encoding="utf-8")
    shown = assert_ok(run_bpe("inspect", "edited.json", "--top", "2", cwd=tmp_path))
    assert "trained on:" in shown and "longest tokens (2):" in shown


def test_inspect_of_an_imported_vocabulary_says_where_it_came_from(tmp_path: Path) -> None:
    assert_ok(run_bpe("import", published_vocabulary_path("cl100k"), "-o", "cl100k.json", "-q", cwd=tmp_path))
    shown = assert_ok(run_bpe("inspect", "cl100k.json", "--top", "2", cwd=tmp_path))
    assert f"imported from: {published_vocabulary_path('cl100k')} (tiktoken, the published cl100k_base)" in shown
    assert "trained on" not in shown and "0 chunks" not in shown


def test_inspect_on_unseen_text_reports_bytes_per_token(
    text_tokenizer: Path, docs_and_unseen: Path, tmp_path: Path
) -> None:
    shown = assert_ok(
        run_bpe("inspect", text_tokenizer, "--top", "1", "--on", docs_and_unseen / "unseen.txt", cwd=tmp_path)
    )
    tokens = len(
        assert_ok(run_bpe("encode", "-t", text_tokenizer, docs_and_unseen / "unseen.txt", cwd=tmp_path)).split()
    )
    size = (docs_and_unseen / "unseen.txt").stat().st_size
    assert f"1 documents, {tokens:,} tokens, {size:,} bytes" in shown
    assert f"compression:   {size / tokens:.2f} base symbols (bytes) per token\n" in shown


def test_inspect_on_unseen_songs_reports_tokens_per_beat_and_the_encoding_report(
    midi_tokenizer: Path, tmp_path: Path
) -> None:
    songs = pop909_paths()[300:305]
    shown = assert_ok(run_bpe("inspect", midi_tokenizer, "--top", "1", "--on", *songs, cwd=tmp_path))
    tokens = sum(len(assert_ok(run_bpe("encode", "-t", midi_tokenizer, song, cwd=tmp_path)).split()) for song in songs)
    beats = 0.0
    notes = 0
    for song in songs:  # a song lasts until its last message or its last note's end (mido, not bpe-core)
        midi = mido.MidiFile(str(song))
        reference = reference_song(midi)
        last = max(max((tick for tick, _ in absolute_messages(track)), default=0) for track in midi.tracks)
        beats += max([last] + [note.end for note in reference.notes]) / midi.ticks_per_beat
        notes += len(reference.notes)
    assert f"on 5 inputs in all:  5 documents, {tokens:,} tokens" in shown  # after a line for each song
    densities = re.findall(r"density:\s+([0-9.]+) tokens per beat \(", shown)  # (not the training data's)
    assert len(densities) == 6 and float(densities[-1]) == pytest.approx(tokens / beats, abs=0.006)
    assert re.search(rf"encoding:\s+notes {notes:,}, ", shown)


def test_train_with_a_new_vocab_size_names_the_output_after_the_real_size(
    docs_and_unseen: Path, tmp_path: Path
) -> None:
    shutil.copy(CONFIGS_DIR / "gpt2-style.yaml", tmp_path / "gpt2-style.yaml")  # name and output: text-gpt2-32k
    result = run_bpe(
        "train", "gpt2-style.yaml", docs_and_unseen / "docs.txt", "--set", "trainer.vocab_size=300", cwd=tmp_path
    )
    assert_ok(result)
    assert bpe_core.load(tmp_path / "text-gpt2-300.json").vocab_size == 300
    assert not (tmp_path / "text-gpt2-32k.json").exists() and "-> text-gpt2-300.json" in result.stderr
    # an explicit output wins
    assert_ok(
        run_bpe(
            "train",
            "gpt2-style.yaml",
            docs_and_unseen / "docs.txt",
            "--set",
            "trainer.vocab_size=300",
            "-o",
            "mine.json",
            cwd=tmp_path,
        )
    )
    assert (tmp_path / "mine.json").is_file()


def test_outputs_get_the_usual_permissions(
    midi_tokenizer: Path, text_tokenizer: Path, docs_and_unseen: Path, tmp_path: Path
) -> None:
    """Files we write are 0666 less the umask, like any other program's (the MIDI writer left 0600)."""
    song = pop909_paths()[5]
    previous = os.umask(0o022)
    try:
        assert_ok(run_bpe("encode", "-t", midi_tokenizer, song, "-o", "song.ids", "-q", cwd=tmp_path))
        assert_ok(run_bpe("decode", "-t", midi_tokenizer, "song.ids", "-o", "song.mid", cwd=tmp_path))
        assert_ok(
            run_bpe("encode", "-t", text_tokenizer, docs_and_unseen / "docs.txt", "-o", "docs.bin", "-q", cwd=tmp_path)
        )
        assert_ok(run_bpe("import", published_vocabulary_path("o200k"), "-o", "o200k.json", "-q", cwd=tmp_path))
    finally:
        os.umask(previous)
    for name in ("song.ids", "song.mid", "docs.bin", "o200k.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert mido.MidiFile(str(tmp_path / "song.mid")).tracks
