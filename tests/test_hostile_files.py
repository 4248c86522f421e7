"""Hostile files (issue 12, classes 1, 6, 7, 8, 11, 13): configs, our own tokenizer files,
Hugging Face and tiktoken imports, special ids across save and export, counts that would overflow
64 bits, and patterns that backtrack catastrophically.

Every hostile case runs the installed `bpe` with bounded time and address space and must give
exit status 2, exactly one `error:` line naming the file and the key, field or line, no
traceback, and no file created or changed. Where the right outcome is a result (a UTF-16 config
with a byte order mark, imported ids after save and load), the result is asserted. Inputs are
generated from a small tokenizer trained on a slice of the Python documentation.
"""

import base64
import gzip
import json
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex
import tiktoken
from helpers.cli_runner import assert_clean_error, assert_fails_cleanly, assert_ok, run_bpe_bounded
from helpers.text import EOT
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer

import bpe_core
from bpe_core import BpeError
from bpe_core.counts import Counts, load_counts
from bpe_core.engine import Trainer
from bpe_core.formats.tiktoken import read_ranks
from bpe_core.plugins import registry

TIMEOUT = 60  # seconds: every case is a few seconds; a hang or blow-up fails naming the case
MEMORY_MB = 1536
CONFIG = (
    "name: small\npretokenizer: {name: gpt2}\ntrainer: {vocab_size: 300}\nspecial_tokens: {tokens: ['<|endoftext|>']}\n"
)


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory, docs_text: str) -> dict[str, bytes]:
    """A small tokenizer (gpt2 pattern, 300 ids) as our file, a tokenizer.json and a .tiktoken
    file, its config, a counts file and a text to encode: the valid files each case damages."""
    work = tmp_path_factory.mktemp("hostile-originals")
    (work / "docs.txt").write_text(docs_text[:60_000], encoding="utf-8")
    (work / "small.yaml").write_text(CONFIG, encoding="utf-8")
    tokenizer = bpe_core.train(str(work / "small.yaml"), [str(work / "docs.txt")], workers=1, progress=False)
    tokenizer.save(str(work / "small.json"))
    tokenizer.to_hf(str(work / "small-hf.json"))
    tokenizer.to_tiktoken(str(work / "small.tiktoken"))
    bpe_core.count(str(work / "small.yaml"), [str(work / "docs.txt")], workers=1, progress=False).save(
        str(work / "small.counts")
    )
    return {path.name: path.read_bytes() for path in work.iterdir()}


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def edited_json(name: str, edit: Callable[[Any], None]) -> Callable[[Path, dict[str, bytes]], None]:
    """Writes bad.json: the original file `name` with `edit` applied."""

    def make(directory: Path, files: dict[str, bytes]) -> None:
        data = json.loads(files[name])
        edit(data)
        write_json(directory / "bad.json", data)

    return make


def with_layout(data: dict[str, Any], ids: list[int], special_ids: dict[str, int]) -> None:
    data["ids"], data["special_ids"] = ids, special_ids


def with_merge(index: int, pair: list[Any]) -> Callable[[Any], None]:
    """The file's merges as version 1 wrote them (a list of pairs), merge `index` replaced."""

    def edit(data: Any) -> None:
        ids = array("i", base64.b64decode(data["merges"])).tolist()
        data["merges"] = [ids[position : position + 2] for position in range(0, len(ids), 2)]
        data["merges"][index] = pair

    return edit


def packed(ids: list[int]) -> str:
    """Ids as a tokenizer file packs them (base64 of little-endian 32-bit integers)."""
    return base64.b64encode(array("i", ids).tobytes()).decode("ascii")


def set_path(keys: list[Any], value: Any) -> Callable[[Any], None]:
    def edit(data: Any) -> None:
        for key in keys[:-1]:
            data = data[key]
        data[keys[-1]] = value

    return edit


def drop_content(data: Any) -> None:
    del data["added_tokens"][0]["content"]


# --- class 1: configs --------------------------------------------------------------------

BILLION_LAUGHS = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]\n" for previous, name in zip("abcdefgh", "bcdefghi")
)

CONFIG_CASES: dict[str, tuple[bytes, list[str], list[str]]] = {
    # id: (config bytes, extra arguments, fragments of the error line)
    "config-not-utf8": (b"name: caf\xe9\n" + CONFIG.encode(), [], ["bad.yaml", "position 9", "UTF-8"]),
    "config-utf16-without-bom": ("name: x\n".encode("utf-16-le"), [], ["bad.yaml", "not YAML text"]),
    "config-self-referencing-alias": (b"x: &r [1, *r]\n" + CONFIG.encode(), [], ["bad.yaml", "line 1", "alias *r"]),
    "config-alias-bomb": (BILLION_LAUGHS.encode() + CONFIG.encode(), [], ["bad.yaml", "alias *a"]),
    "config-deep-nesting": (CONFIG.encode() + b"x: " + b"[" * 20_000 + b"\n", [], ["bad.yaml", "nested more than 64"]),
    "config-vocab-size-huge": (
        CONFIG.replace("300", "1" + "0" * 30).encode(),
        [],
        ["bad.yaml", "trainer.vocab_size", "at most"],
    ),
    "config-vocab-size-float": (CONFIG.replace("300", "1.0e+30").encode(), [], ["bad.yaml", "trainer.vocab_size"]),
    "config-pad-to-multiple-huge": (
        CONFIG.replace("vocab_size: 300", "vocab_size: 300, pad_to_multiple_of: 1000000000000").encode(),
        [],
        ["bad.yaml", "trainer.pad_to_multiple_of", "at most 1048576"],
    ),
    "config-min-frequency-beyond-64-bits": (
        CONFIG.replace("vocab_size: 300", f"vocab_size: 300, min_frequency: {2**64}").encode(),
        [],
        ["bad.yaml", "trainer.min_frequency"],
    ),
    "config-sample-seed-beyond-64-bits": (
        CONFIG.encode() + f"input: {{sample: {{fraction: 0.5, seed: {2**70}}}}}\n".encode(),
        [],
        ["bad.yaml", "input.sample.seed"],
    ),
    "config-workers-huge": (CONFIG.encode() + b"runner: {workers: 1000000000}\n", [], ["bad.yaml", "runner.workers"]),
    "config-oversized": (CONFIG.encode() + b"#" * (16 << 20) + b"\n", [], ["bad.yaml", "at most 16 MiB"]),
    "config-set-deep-nesting": (
        CONFIG.encode(),
        ["--set", "trainer.vocab_size=" + "[" * 20_000],
        ["bad.yaml", "trainer.vocab_size"],
    ),
    "config-set-alias": (
        CONFIG.encode(),
        ["--set", "trainer.vocab_size=[&a [1, 1], *a]"],
        ["bad.yaml", "trainer.vocab_size"],
    ),
}


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_hostile_config_is_one_clean_error(case: str, originals: dict[str, bytes], tmp_path: Path) -> None:
    content, extra, fragments = CONFIG_CASES[case]
    (tmp_path / "docs.txt").write_bytes(originals["docs.txt"])
    (tmp_path / "bad.yaml").write_bytes(content)
    assert_fails_cleanly(
        "train",
        "bad.yaml",
        "docs.txt",
        "-o",
        "out.json",
        *extra,
        cwd=tmp_path,
        fragments=(*fragments,),
        timeout=TIMEOUT,
        memory_mb=MEMORY_MB,
    )


def test_config_in_utf16_with_a_byte_order_mark_trains_like_utf8(originals: dict[str, bytes], tmp_path: Path) -> None:
    (tmp_path / "docs.txt").write_bytes(originals["docs.txt"])
    (tmp_path / "utf8.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "utf16.yaml").write_text(CONFIG, encoding="utf-16")  # with a byte order mark
    for name in ("utf8", "utf16"):
        assert_ok(
            run_bpe_bounded("train", f"{name}.yaml", "docs.txt", "-o", f"{name}.json", cwd=tmp_path, timeout=TIMEOUT)
        )
    assert bpe_core.load(tmp_path / "utf16.json").merges == bpe_core.load(tmp_path / "utf8.json").merges


def test_a_dict_config_that_contains_itself_is_an_error() -> None:
    config: dict[str, Any] = {"name": "loop", "pretokenizer": {"name": "gpt2"}}
    config["input"] = {"reader": "text", "loop": config}
    with pytest.raises(BpeError, match="nested more than"):
        bpe_core.train(config, ["unused.txt"], progress=False)


# --- class 6: our own tokenizer files -------------------------------------------------------

REGULAR = list(range(299))  # 256 bytes and 43 merges of the small tokenizer

FILE_CASES: dict[str, tuple[Callable[[Path, dict[str, bytes]], None], list[str]]] = {
    "file-special-tokens-string": (
        edited_json("small.json", set_path(["special_tokens"], "x")),
        ["special_tokens", "expected an object"],
    ),
    "file-special-token-number": (
        edited_json("small.json", set_path(["special_tokens", "tokens"], [5])),
        ["special_tokens.tokens[0]"],
    ),
    "file-duplicate-special-token": (
        edited_json("small.json", set_path(["special_tokens", "tokens"], [EOT, EOT])),
        ["special_tokens.tokens[1]", "listed twice"],
    ),
    "file-deep-json": (
        lambda directory, _: (directory / "bad.json").write_text("[" * 100_000 + "]" * 100_000),
        ["nested too deeply"],
    ),
    "file-id-huge": (
        edited_json("small.json", lambda data: with_layout(data, REGULAR[:-1] + [10**10], {EOT: 299})),
        ["ids[298]", "out of range"],
    ),
    "file-duplicate-ids": (
        edited_json("small.json", lambda data: with_layout(data, REGULAR[:-1] + [297], {EOT: 299})),
        ["ids[298]", "also ids[297]"],
    ),
    "file-duplicate-sparse-ids": (  # too sparse for the engine's bitmap: checked by a set
        edited_json("small.json", lambda data: with_layout(data, REGULAR[:-2] + [2**30, 2**30], {EOT: 2**30 + 1})),
        ["ids[298]", "also ids[297]"],
    ),
    "file-special-id-on-regular-id": (
        edited_json("small.json", lambda data: with_layout(data, REGULAR, {EOT: 5})),
        ["special_ids", "also ids[5]"],
    ),
    "file-negative-id": (
        edited_json(
            "small.json",
            lambda data: with_layout(data, [-5 if token == 10 else token for token in REGULAR], {EOT: 299}),
        ),
        ["ids[10]", "out of range"],
    ),
    "file-negative-padding": (edited_json("small.json", set_path(["padding"], -48)), ["padding", "out of range"]),
    "file-padding-beyond-2-31": (
        edited_json("small.json", set_path(["padding"], 2**31 - 100)),
        ["padding", "below 2**31"],
    ),
    "file-orphan-symbol-outside-alphabet": (
        edited_json("small.json", set_path(["orphans"], {"400": [999]})),
        ["orphans[400]", "999"],
    ),
    "file-orphan-on-merged-id": (
        edited_json("small.json", set_path(["orphans"], {"298": [1, 2]})),
        ["ids[298]", "orphans[298]"],
    ),
    "file-version-negative": (edited_json("small.json", set_path(["version"], -7)), ["version", "-7"]),
    "file-float-in-merge": (edited_json("small.json", with_merge(0, [101.5, 32])), ["merges[0]", "101.5"]),
    "file-bool-in-merge": (edited_json("small.json", with_merge(0, [True, 32])), ["merges[0]"]),
    "file-merges-not-a-list": (
        edited_json("small.json", set_path(["merges"], {"a": 1})),
        ["merges", "expected a pair of token ids", "packed form"],
    ),
    "file-merges-packed-not-base64": (
        edited_json("small.json", set_path(["merges"], "not base64 at all!")),
        ["merges", "not valid base64"],
    ),
    "file-merges-packed-half-a-merge": (
        edited_json("small.json", set_path(["merges"], packed([101, 32, 256]))),
        ["merges", "12 bytes", "8-byte"],
    ),
    "file-merges-packed-negative-id": (
        edited_json("small.json", set_path(["merges"], packed([101, 32, -5, 256]))),
        ["merges", "-5", "negative"],
    ),
    "file-merge-results-not-a-list": (  # merge results are ids: their packed form is 32-bit
        edited_json("small.json", set_path(["merge_results"], {"a": 1})),
        ["merge_results", "little-endian 32-bit integers"],
    ),
    "file-merge-counts-not-a-list": (
        edited_json("small.json", set_path(["merge_counts"], {"a": 1})),
        ["merge_counts", "little-endian 64-bit integers"],
    ),
    "file-ids-packed-below-minus-one": (
        edited_json("small.json", lambda data: with_layout(data, packed([-2, *REGULAR[1:]]), {})),
        ["ids", "-2", "out of range"],
    ),
    "file-whole-chunk-to-unknown-id": (
        edited_json("small.json", set_path(["whole_chunks"], [[[104, 105], 5000]])),
        ["whole_chunks", "5000"],
    ),
    "file-special-ids-other-tokens": (
        edited_json("small.json", lambda data: with_layout(data, REGULAR, {"<|x|>": 299})),
        ["special_ids"],
    ),
}


@pytest.mark.parametrize("case", list(FILE_CASES))
def test_hostile_tokenizer_file_is_one_clean_error(case: str, originals: dict[str, bytes], tmp_path: Path) -> None:
    make, fragments = FILE_CASES[case]
    (tmp_path / "docs.txt").write_bytes(originals["docs.txt"])
    make(tmp_path, originals)
    assert_fails_cleanly(
        "encode",
        "-t",
        "bad.json",
        "docs.txt",
        "-o",
        "out.ids",
        cwd=tmp_path,
        fragments=(
            "bad.json",
            *fragments,
        ),
        timeout=TIMEOUT,
        memory_mb=MEMORY_MB,
    )


# --- class 7: imported files ----------------------------------------------------------------


def tiktoken_with_last_rank(rank: bytes) -> Callable[[Path, dict[str, bytes]], None]:
    def make(directory: Path, files: dict[str, bytes]) -> None:
        lines = files["small.tiktoken"].splitlines()
        lines[-1] = lines[-1].split()[0] + b" " + rank
        (directory / "bad.tiktoken").write_bytes(b"\n".join(lines) + b"\n")

    return make


def tiktoken_with_line(number: int, line: bytes) -> Callable[[Path, dict[str, bytes]], None]:
    """The small .tiktoken file with line `number` (from 1) replaced."""

    def make(directory: Path, files: dict[str, bytes]) -> None:
        lines = files["small.tiktoken"].splitlines()
        lines[number - 1] = line
        (directory / "bad.tiktoken").write_bytes(b"\n".join(lines) + b"\n")

    return make


def hf_regex(pattern: Any) -> Callable[[Any], None]:
    return set_path(["pre_tokenizer", "pretokenizers", 0, "pattern", "Regex"], pattern)


IMPORT_CASES: dict[str, tuple[str, Callable[[Path, dict[str, bytes]], None], list[str]]] = {
    "hf-added-token-without-content": ("hf", edited_json("small-hf.json", drop_content), ["added_tokens[0].content"]),
    "hf-added-token-twice": (
        "hf",
        edited_json("small-hf.json", lambda data: data["added_tokens"].append(dict(data["added_tokens"][0], id=5000))),
        ["added_tokens[1]", "added twice"],
    ),
    "hf-vocab-as-list": (
        "hf",
        edited_json("small-hf.json", lambda data: data["model"].__setitem__("vocab", list(data["model"]["vocab"]))),
        ["model.vocab", "expected an object"],
    ),
    "hf-pre-tokenizer-string": (
        "hf",
        edited_json("small-hf.json", set_path(["pre_tokenizer"], "ByteLevel")),
        ["pre_tokenizer", "expected an object"],
    ),
    "hf-normalizer-string": (
        "hf",
        edited_json("small-hf.json", set_path(["normalizer"], "NFC")),
        ["normalizer", "expected an object"],
    ),
    "hf-split-regex-number": ("hf", edited_json("small-hf.json", hf_regex(42)), ["Regex", "non-empty string"]),
    # found by the fuzz test: the error named the pattern but not the file
    "hf-split-regex-invalid": (
        "hf",
        edited_json("small-hf.json", hf_regex(")")),
        ["pre_tokenizer", "not a valid regex"],
    ),
    "hf-merge-one-part": (
        "hf",
        edited_json("small-hf.json", lambda data: data["model"]["merges"].__setitem__(0, ["a"])),
        ["model.merges[0]"],
    ),
    "hf-merge-number": (
        "hf",
        edited_json("small-hf.json", lambda data: data["model"]["merges"].__setitem__(0, 42)),
        ["model.merges[0]"],
    ),
    "hf-id-huge": (
        "hf",
        edited_json("small-hf.json", lambda data: data["model"]["vocab"].__setitem__("Ġt", 10**10)),
        ["model.vocab", "out of range"],
    ),
    "hf-negative-id": (
        "hf",
        edited_json("small-hf.json", lambda data: data["model"]["vocab"].__setitem__("Ġt", -3)),
        ["model.vocab", "out of range"],
    ),
    "hf-duplicate-vocab-ids": (
        "hf",
        edited_json("small-hf.json", lambda data: data["model"]["vocab"].__setitem__("Ġt", 5)),
        ["model.vocab", "both have id 5"],
    ),
    "hf-added-token-on-regular-id": (
        "hf",
        edited_json("small-hf.json", lambda data: data["added_tokens"][0].__setitem__("id", 5)),
        [EOT, "id 5"],
    ),
    "hf-deep-json": (
        "hf",
        lambda directory, _: (directory / "bad.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000),
        ["nested too deeply"],
    ),
    "tiktoken-rank-huge": ("tiktoken", tiktoken_with_last_rank(b"10000000000"), ["line 299", "rank"]),
    "tiktoken-rank-negative": ("tiktoken", tiktoken_with_last_rank(b"-5"), ["line 299", "rank"]),
    "tiktoken-rank-with-sign": ("tiktoken", tiktoken_with_last_rank(b"+298"), ["line 299", "rank"]),
    "tiktoken-rank-with-underscore": ("tiktoken", tiktoken_with_last_rank(b"2_98"), ["line 299", "rank"]),
    "tiktoken-rank-2-31": ("tiktoken", tiktoken_with_last_rank(b"2147483648"), ["line 299", "rank"]),
    "tiktoken-not-base64": ("tiktoken", tiktoken_with_line(120, b"a*b= 119"), ["line 120", "base64-token rank"]),
    "tiktoken-three-fields": ("tiktoken", tiktoken_with_line(7, b"Bg== 6 6"), ["line 7", "base64-token rank"]),
    "tiktoken-token-twice": ("tiktoken", tiktoken_with_line(8, b"Bg== 7"), ["line 8", "appears twice"]),
    "tiktoken-rank-twice": ("tiktoken", tiktoken_with_line(8, b"Bw== 6"), ["two tokens share a rank"]),
    "tiktoken-truncated-gz": (
        "tiktoken",
        lambda directory, files: (directory / "bad.tiktoken.gz").write_bytes(
            gzip.compress(files["small.tiktoken"])[:-20]
        ),
        ["cannot read"],
    ),
}


@pytest.mark.parametrize("case", list(IMPORT_CASES))
def test_hostile_import_is_one_clean_error(case: str, originals: dict[str, bytes], tmp_path: Path) -> None:
    kind, make, fragments = IMPORT_CASES[case]
    make(tmp_path, originals)
    (name,) = [path.name for path in tmp_path.iterdir() if path.name.startswith("bad.")]
    assert_fails_cleanly(
        "import",
        "--format",
        kind,
        name,
        "-o",
        "out.json",
        cwd=tmp_path,
        fragments=(
            name,
            *fragments,
        ),
        timeout=TIMEOUT,
        memory_mb=MEMORY_MB,
    )


def test_tiktoken_special_id_beyond_2_31_is_one_clean_error(originals: dict[str, bytes], tmp_path: Path) -> None:
    (tmp_path / "small.tiktoken").write_bytes(originals["small.tiktoken"])
    result = run_bpe_bounded(
        "import", "--format", "tiktoken", "small.tiktoken", "--pattern", "gpt2",
        "--special", f"{EOT}=10000000000", "-o", "out.json",
        cwd=tmp_path, timeout=TIMEOUT, memory_mb=MEMORY_MB,
    )  # fmt: skip
    assert_clean_error(result, EOT, "out of range")
    assert not (tmp_path / "out.json").exists()


# --- class 8: imported ids survive save, load and export -------------------------------------

SAMPLE = "Hello, world! The tokenizer's ids stay put: 12345 <|endoftext|> naïve café\n\n  indented line"


@pytest.fixture(scope="module")
def regular_tokens(originals: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The small tokenizer's 299 regular tokens as bytes, in id order."""
    path = tmp_path_factory.mktemp("hostile-tokens") / "small.tiktoken"
    path.write_bytes(originals["small.tiktoken"])
    ranks = read_ranks(str(path))
    return [token for token, _ in sorted(ranks.items(), key=lambda item: item[1])]


def test_tiktoken_import_keeps_special_id_5000_after_save_and_load(originals: dict[str, bytes], tmp_path: Path) -> None:
    (tmp_path / "small.tiktoken").write_bytes(originals["small.tiktoken"])
    for special_id in (5000, 1000):
        assert_ok(
            run_bpe_bounded(
                "import", "--format", "tiktoken", "small.tiktoken", "--pattern", "gpt2",
                "--special", f"{EOT}={special_id}", "-o", "imported.json",
                cwd=tmp_path, timeout=TIMEOUT,
            )
        )  # fmt: skip
        loaded = bpe_core.load(tmp_path / "imported.json")
        assert loaded.special_ids == {EOT: special_id}
        assert loaded.encode(EOT, allowed_special="all") == [special_id]
        assert loaded.vocab_size == special_id + 1


@pytest.mark.both_modes
@settings(max_examples=15)
@given(data=st.data())
def test_imported_ids_survive_save_load_and_export_exactly(
    data: st.DataObject, regular_tokens: list[bytes], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Regular and special ids anywhere below 3000: a tiktoken import saved and loaded has every
    id it had, and its Hugging Face and tiktoken exports give those ids in tokenizers / tiktoken;
    the Hugging Face export imported, saved and loaded has them too."""
    specials = [EOT, "<|pad|>"]
    ids = data.draw(
        st.lists(st.integers(0, 2999), min_size=len(regular_tokens) + 2, max_size=len(regular_tokens) + 2, unique=True)
    )
    # bytes anywhere (cl100k has them out of byte order), merged tokens anywhere but in merge
    # order (a tiktoken file ranks a token after the tokens it is merged from), specials anywhere
    layout = ids[:256] + sorted(ids[256 : len(regular_tokens)])
    ranks = dict(zip(regular_tokens, layout))
    special_ids = dict(zip(specials, ids[len(regular_tokens) :]))
    work = tmp_path_factory.mktemp("layout")
    (work / "random.tiktoken").write_text(
        "".join(f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items())
    )
    imported = bpe_core.from_tiktoken(work / "random.tiktoken", "gpt2", special_ids)
    imported.save(str(work / "saved.json"))
    loaded = bpe_core.load(work / "saved.json")
    assert loaded.special_ids == special_ids
    assert loaded.regular_ids() == sorted(ranks.values())
    assert all(loaded.token_bytes(rank) == token for token, rank in ranks.items())
    expected = tiktoken.Encoding(
        "random", pat_str=loaded.pretokenizer.pattern, mergeable_ranks=ranks, special_tokens=special_ids
    )
    assert loaded.encode(SAMPLE, allowed_special="all") == imported.encode(SAMPLE, allowed_special="all")
    assert loaded.encode(SAMPLE, allowed_special="all") == expected.encode(SAMPLE, allowed_special="all")

    loaded.to_tiktoken(work / "export.tiktoken")
    assert read_ranks(str(work / "export.tiktoken")) == ranks
    loaded.to_hf(work / "export-hf.json")
    hf = HfTokenizer.from_file(str(work / "export-hf.json"))
    assert {token: hf.token_to_id(token) for token in specials} == special_ids
    assert hf.encode(SAMPLE, add_special_tokens=False).ids == loaded.encode(SAMPLE, allowed_special="all")

    again = bpe_core.from_hf(work / "export-hf.json")
    again.save(str(work / "again.json"))
    reloaded = bpe_core.load(work / "again.json")
    assert reloaded.special_ids == special_ids
    assert reloaded.encode(SAMPLE, allowed_special="all") == expected.encode(SAMPLE, allowed_special="all")


# --- class 11: counts -----------------------------------------------------------------------


def counts_with(chunks: dict[bytes, int], alphabet_size: int = 256) -> Callable[[Path, dict[str, bytes]], None]:
    def make(directory: Path, files: dict[str, bytes]) -> None:
        (directory / "small.counts").write_bytes(files["small.counts"])
        valid = load_counts(directory / "small.counts")
        (directory / "small.counts").unlink()
        Counts(valid.config, alphabet_size, chunks, valid.inputs).save(str(directory / "bad.counts"))

    return make


COUNTS_CASES: dict[str, tuple[Callable[[Path, dict[str, bytes]], None], list[str]]] = {
    "counts-chunk-count-2-63": (counts_with({b"ab": 2**63}), ["2**63"]),
    "counts-chunk-count-2-64-minus-1": (counts_with({b"x": 2**64 - 1}), ["2**63"]),
    "counts-pair-count-would-wrap": (counts_with({b"a" * 34: 2**58}), ["2**63"]),
    "counts-false-alphabet-size-larger": (
        counts_with({b"\x00a\x01\x10": 5}, alphabet_size=300),
        ["alphabet_size is 300", "256"],
    ),
    "counts-false-alphabet-size-smaller": (counts_with({b"ab": 5}, alphabet_size=200), ["alphabet_size is 200", "256"]),
}


@pytest.mark.parametrize("case", list(COUNTS_CASES))
def test_hostile_counts_file_is_one_clean_error(case: str, originals: dict[str, bytes], tmp_path: Path) -> None:
    make, fragments = COUNTS_CASES[case]
    (tmp_path / "small.yaml").write_bytes(originals["small.yaml"])
    make(tmp_path, originals)
    assert_fails_cleanly(
        "train",
        "small.yaml",
        "--from-counts",
        "bad.counts",
        "-o",
        "out.json",
        cwd=tmp_path,
        fragments=(
            "bad.counts",
            *fragments,
        ),
        timeout=TIMEOUT,
        memory_mb=MEMORY_MB,
    )


@pytest.mark.both_modes
@pytest.mark.parametrize(
    ("chunks", "weights"),
    [([[0] * 34], [2**58]), ([[0, 1]], [2**63]), ([[0]], [2**64]), ([[0, 1], [1, 0]], [2**62, 2**62])],
    ids=["pair-count-would-wrap", "weight-2-63", "single-symbol-weight-2-64", "two-chunks-sum-to-2-63"],
)
def test_trainer_refuses_weights_whose_pair_counts_pass_2_63(chunks: list[list[int]], weights: list[int]) -> None:
    with pytest.raises(ValueError, match="2\\*\\*63"):
        Trainer(2, chunks, weights, 10)


@pytest.mark.both_modes
def test_trainer_merges_a_pair_counted_2_63_minus_1_times() -> None:
    trainer = Trainer(2, [[0, 1], [1]], [2**63 - 1, 5], 3)
    trainer.run(1, 1)
    assert (trainer.merges, trainer.merge_counts) == ([(0, 1)], [2**63 - 1])


@pytest.mark.both_modes
def test_trainer_counts_chunks_of_different_weights_beyond_31_bits_exactly() -> None:
    # a weight that needs more than 31 bits: the nodes hold their chunk's index, not the weight
    trainer = Trainer(2, [[0, 1, 0], [1, 0], [0, 1]], [2**61, 2**60 + 3, 7], 4)
    assert trainer.weight_indexed
    trainer.run(2, 1)
    assert (trainer.merges, trainer.merge_counts) == ([(1, 0), (0, 2)], [2**61 + 2**60 + 3, 2**61])
    assert trainer.segments() == [[3], [2], [0, 1]]
    assert trainer.token_usage() == [7, 7, 2**60 + 3, 2**61]


# --- class 13: patterns from files ------------------------------------------------------------

BACKTRACKING = "(a|a)+b|."


def test_imported_split_pattern_that_backtracks_is_one_clean_error(originals: dict[str, bytes], tmp_path: Path) -> None:
    edited_json("small-hf.json", hf_regex(BACKTRACKING))(tmp_path, originals)
    assert_ok(
        run_bpe_bounded("import", "--format", "hf", "bad.json", "-o", "imported.json", cwd=tmp_path, timeout=TIMEOUT)
    )
    (tmp_path / "a.txt").write_text("a" * 42 + "\n")
    assert_fails_cleanly(
        "encode",
        "-t",
        "imported.json",
        "a.txt",
        "-o",
        "out.ids",
        cwd=tmp_path,
        fragments=(
            "a.txt",
            BACKTRACKING,
            "catastrophic backtracking",
        ),
        timeout=TIMEOUT,
        memory_mb=MEMORY_MB,
    )


def test_config_pattern_that_backtracks_is_one_clean_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 42 + "\n")
    (tmp_path / "bad.yaml").write_text(
        f"name: slow\npretokenizer: {{name: regex, pattern: '{BACKTRACKING}'}}\ntrainer: {{vocab_size: 300}}\n"
    )
    assert_fails_cleanly(
        "train",
        "bad.yaml",
        "a.txt",
        "-o",
        "out.json",
        cwd=tmp_path,
        fragments=(
            BACKTRACKING,
            "catastrophic backtracking",
        ),
        timeout=TIMEOUT,
        memory_mb=MEMORY_MB,
    )


def test_tiktoken_import_with_a_pattern_that_backtracks_encodes_to_one_clean_error(
    originals: dict[str, bytes], tmp_path: Path
) -> None:
    (tmp_path / "small.tiktoken").write_bytes(originals["small.tiktoken"])
    imported = bpe_core.from_tiktoken(tmp_path / "small.tiktoken", BACKTRACKING)
    with pytest.raises(BpeError, match="catastrophic backtracking"):
        imported.encode("a" * 42)


def test_a_sound_user_pattern_splits_a_large_document_within_the_limit(docs_text: str) -> None:
    """The limit is for runaways: a user pattern on 2 MB of documentation splits exactly as
    `regex` does without a limit."""
    pattern = r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+|\s+"
    pretokenizer = registry().pretokenizer("regex", {"pattern": pattern})
    document = docs_text[:2_000_000]
    assert pretokenizer.split(document) == regex.findall(pattern, document)


# --- fuzz: mutated tokenizer files and configs ---------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def json_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (long lists: their first few items and the last)."""
    paths = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            paths += json_paths(value, (*prefix, key))
    elif isinstance(node, list):
        indexes = sorted({*range(min(len(node), 3)), len(node) - 1}) if node else []
        for index in indexes:
            paths += json_paths(node[index], (*prefix, index))
    return paths


def mutated(original: Any, data: st.DataObject) -> Any:
    """The document with one place replaced by a random JSON value, or removed."""
    document = json.loads(json.dumps(original))
    paths = json_paths(document)[1:]
    path = data.draw(st.sampled_from(paths), label="path")
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans(), label="remove"):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(JSON_VALUES, label="value")
    return document


@pytest.fixture(scope="module")
def imported_file(originals: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Our file for the small tokenizer imported from tiktoken with <|endoftext|> at 5000: it has
    every layout field (ids, special_ids, orphans, whole_chunks)."""
    work = tmp_path_factory.mktemp("hostile-imported")
    (work / "small.tiktoken").write_bytes(originals["small.tiktoken"])
    (work / "with-orphan.tiktoken").write_bytes(originals["small.tiktoken"] + base64.b64encode(b"xyz") + b" 4000\n")
    bpe_core.from_tiktoken(work / "with-orphan.tiktoken", "gpt2", {EOT: 5000}).save(str(work / "imported.json"))
    loaded: dict[str, Any] = json.loads((work / "imported.json").read_text())
    return loaded


@pytest.mark.both_modes
@settings(max_examples=150)
@given(data=st.data())
def test_a_mutated_tokenizer_file_loads_or_is_one_clean_error(
    data: st.DataObject, imported_file: dict[str, Any]
) -> None:
    from bpe_core.loading import from_dict

    try:
        tokenizer = from_dict(mutated(imported_file, data), "fuzz.json")
    except BpeError as error:
        assert "\n" not in str(error) and str(error).startswith("fuzz.json")
        return
    try:
        ids = tokenizer.encode(SAMPLE, allowed_special="all")
        assert isinstance(tokenizer.decode(ids), str)
    except BpeError:
        pass  # a clean error (a pretokenizer option that cannot split this text, say)


@pytest.mark.both_modes
@settings(max_examples=100)
@given(data=st.data())
def test_a_mutated_tokenizer_json_imports_or_is_one_clean_error(
    data: st.DataObject, originals: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("fuzz-hf") / "tokenizer.json"
    write_json(path, mutated(json.loads(originals["small-hf.json"]), data))
    try:
        tokenizer = bpe_core.from_hf(path)
    except BpeError as error:
        assert "\n" not in str(error) and str(path) in str(error)
        return
    assert isinstance(tokenizer.decode(tokenizer.encode(SAMPLE, allowed_special="all")), str)


@pytest.mark.both_modes
@settings(max_examples=150)
@given(data=st.data())
def test_a_mutated_config_is_valid_or_one_clean_error(data: st.DataObject) -> None:
    from bpe_core.config import load_config

    config = {
        "name": "fuzz",
        "input": {"reader": "text", "paths": ["a.txt"], "sample": {"fraction": 0.5, "seed": 1}},
        "normalizer": ["nfc"],
        "pretokenizer": {"name": "gpt2"},
        "trainer": {
            "vocab_size": 300,
            "min_frequency": 2,
            "max_token_length": 8,
            "tie_break": "smallest",
            "pad_to_multiple_of": 64,
        },
        "special_tokens": {"tokens": [EOT], "position": "end"},
        "output": "out.json",
        "runner": {"kind": "local", "workers": 2, "range_bytes": 4096},
    }
    try:
        load_config(mutated(config, data))
    except BpeError as error:
        assert "\n" not in str(error) and str(error).startswith("<dict>")
