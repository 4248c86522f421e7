"""Residue (`bpe_core.residue`, `bpe trim --residue`): tokens that encoding some files makes almost
only as parts of longer tokens, and a vocabulary without them.

- The measure: `alone` counts output tokens; `within` counts each place a token has in the merge
  trees of the output tokens. Checked by hand on a four-token vocabulary, and against a naive
  reference (the trees expanded one by one) for a tokenizer trained on the Python docs.
- Removal keeps the longer tokens: "abc", built on "ab", is made as "a" + "bc" once "ab" goes;
  when no other two pieces make it, "ab" stays. Decoding gives the text back, ids are compact
  (`--map`), and the Hugging Face and tiktoken exports give our ids in `tokenizers` and tiktoken:
  on the hand-made vocabulary and on cl100k_base counted on the docs.
- Refusals are one `error:` line, exit status 2.
"""

import base64
from collections import Counter
from pathlib import Path

import pytest
from helpers.cli_runner import assert_fails_cleanly, assert_ok, run_bpe
from helpers.interop import assert_same_ids, published_vocabulary_path, read_ranks, tiktoken_encoding
from helpers.paths import CONFIGS_DIR, LAMBDA_PATH, require
from helpers.patterns import PUBLISHED_PATTERNS
from tokenizers import Tokenizer as HfTokenizer

import bpe_core
from bpe_core.errors import ArgumentError
from bpe_core.residue import DEFAULT_THRESHOLD, Residue, find_residue, is_residue, token_usage

WORDS = r"\S+|\s+"  # the hand-made vocabulary's pattern: words and runs of spaces
HAND_TEXT = "abc abc ab bc"  # abc twice (each made as ab + c), ab once, bc once


def hand_vocabulary(directory: Path, with_bc: bool = True) -> Path:
    """The bytes, then ab, (bc,) abc: abc's bytes with the lower merges end in ab + c."""
    longer = [b"ab", b"bc", b"abc"] if with_bc else [b"ab", b"abc"]
    lines = [f"{base64.b64encode(bytes([byte])).decode()} {byte}" for byte in range(256)]
    lines += [f"{base64.b64encode(token).decode()} {256 + index}" for index, token in enumerate(longer)]
    path = directory / ("hand.tiktoken" if with_bc else "hand-no-bc.tiktoken")
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def text_file(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


@pytest.mark.both_modes
def test_alone_and_within_are_counted_as_by_hand(tmp_path: Path) -> None:
    tokenizer = bpe_core.from_tiktoken(hand_vocabulary(tmp_path), WORDS)
    ab, bc, abc = 256, 257, 258
    assert tokenizer.merges == [(97, 98), (98, 99), (ab, 99)]
    usage = token_usage(tokenizer, [str(text_file(tmp_path, "hand.txt", HAND_TEXT))])
    # "abc" twice: abc alone 2, ab within 2 (and a, b, c below it); "ab" alone once; "bc" alone once
    assert (usage.alone[abc], usage.within[abc]) == (2, 0)
    assert (usage.alone[ab], usage.within[ab]) == (1, 2)
    assert (usage.alone[bc], usage.within[bc]) == (1, 0)
    assert (usage.alone[ord("c")], usage.within[ord("c")]) == (0, 3)  # two in abc, one in bc
    assert usage.alone[ord(" ")] == 3
    # ab is given alone in 1 of its 3 makings: residue at R = 0.5, not at the default 0.1
    assert find_residue(tokenizer, [str(tmp_path / "hand.txt")], threshold=0.5) == {ab: Residue(1, 2)}
    assert find_residue(tokenizer, [str(tmp_path / "hand.txt")]) == {}


def test_residue_is_alone_in_fewer_than_r_of_its_makings() -> None:
    assert DEFAULT_THRESHOLD == 0.1
    assert is_residue(0, 5, 0.1)
    assert not is_residue(1, 9, 0.1)  # 1 of 10: not fewer than a tenth
    assert is_residue(1, 10, 0.1)
    assert not is_residue(0, 0, 1.0)  # never made on the files: no evidence either way
    assert not is_residue(0, 5, 0.0)  # R = 0 finds none


def test_counts_equal_the_merge_trees_expanded_one_by_one(docs_text: str, tmp_path: Path) -> None:
    train = text_file(tmp_path, "train.txt", docs_text[:60_000])
    on = text_file(tmp_path, "on.txt", docs_text[200_000:240_000])
    tokenizer = bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 700}, "special_tokens": {"tokens": ["<|x|>"]}},
        [train],
        progress=False,
    )
    usage = token_usage(tokenizer, [str(on)], workers=1)
    output = tokenizer.encode_ordinary(on.read_text(encoding="utf-8"))
    parts = {256 + rank: pair for rank, pair in enumerate(tokenizer.merges)}
    within: Counter[int] = Counter()
    for token in output:  # naive reference: every node below the output token, one by one
        waiting = list(parts.get(token, ()))
        while waiting:
            inner = waiting.pop()
            within[inner] += 1
            waiting.extend(parts.get(inner, ()))
    alone = Counter(output)
    assert usage.alone == [alone[token] for token in range(len(usage.alone))]
    assert usage.within == [within[token] for token in range(len(usage.within))]
    found = find_residue(tokenizer, [str(on)], workers=1)
    assert found and set(found) <= set(parts)  # merged tokens only: no base symbol, no special token
    assert all(counts.alone < DEFAULT_THRESHOLD * (counts.alone + counts.within) for counts in found.values())


@pytest.mark.both_modes
def test_a_residue_token_goes_and_the_longer_token_is_made_another_way(tmp_path: Path) -> None:
    tokenizer = bpe_core.from_tiktoken(hand_vocabulary(tmp_path), WORDS)
    on = text_file(tmp_path, "hand.txt", HAND_TEXT)
    trimmed, dropped, id_map = bpe_core.trim(tokenizer, residue=True, threshold=0.5, on=[str(on)])
    assert dropped == {256: "residue: made 3 times on the files, 1 alone"}
    assert trimmed.vocab_size == 258 and trimmed.merges == [(98, 99), (97, 256)]  # bc, then abc = a + bc
    assert id_map == {**{byte: byte for byte in range(256)}, 257: 256, 258: 257}
    assert [trimmed.token_bytes(token) for token in trimmed.encode("abc ab")] == [b"abc", b" ", b"a", b"b"]
    trimmed.to_tiktoken(tmp_path / "out.tiktoken")
    theirs = tiktoken_encoding("hand", read_ranks(tmp_path / "out.tiktoken"), WORDS)
    for text in (HAND_TEXT, "abcabc xabcbc abab ca"):
        assert trimmed.decode(trimmed.encode(text)) == text
        assert_same_ids(trimmed.encode(text), theirs.encode_ordinary(text), "tiktoken")
    stage = trimmed.provenance["lineage"][-1]["trim"]["asked"]["residue"]
    assert stage == {"threshold": 0.5, "found": 1, "kept_back": 0}


@pytest.mark.both_modes
def test_a_residue_token_stays_when_a_longer_token_cannot_be_made_without_it(tmp_path: Path) -> None:
    tokenizer = bpe_core.from_tiktoken(hand_vocabulary(tmp_path, with_bc=False), WORDS)
    on = text_file(tmp_path, "hand.txt", HAND_TEXT)
    trimmed, dropped, id_map = bpe_core.trim(tokenizer, residue=True, threshold=0.5, on=[str(on)])
    assert dropped == {} and trimmed.merges == tokenizer.merges  # without ab, abc ends in a + b + c
    assert trimmed.provenance["lineage"][-1]["trim"]["asked"]["residue"]["kept_back"] == 1


def test_a_dna_vocabulary_closed_under_reverse_complement_stays_closed() -> None:
    genome = str(require(LAMBDA_PATH))
    tokenizer = bpe_core.train(
        CONFIGS_DIR / "dnabert2-style.yaml",
        [genome],
        {"trainer.vocab_size": 600, "pretokenizer.reverse_complement": "symmetric"},
        progress=False,
    )
    trimmed, dropped, _ = bpe_core.trim(tokenizer, residue=True, threshold=0.3, on=[genome], workers=1)
    assert dropped and all(why.startswith("residue: ") for why in dropped.values())
    complement = str.maketrans("ACGT", "TGCA")
    texts = {"".join(trimmed.token_symbols(token)) for token in trimmed.regular_ids()}
    assert all(text[::-1].translate(complement) in texts for text in texts)
    sample = "ACGTTGCAAGGCTTAACCGGTATATCGCGAGGGCCCTTTAAA" * 5
    assert trimmed.decode(trimmed.encode(sample)) == sample


@pytest.fixture(scope="module")
def cl100k_without_residue(
    docs_text: str, workdir: Path
) -> tuple[bpe_core.Tokenizer, bpe_core.Tokenizer, dict[int, str], dict[int, int], str]:
    """cl100k_base, and it without the residue of the docs' first 300,000 characters; and text
    from elsewhere in the docs."""
    on = text_file(workdir, "on.txt", docs_text[:300_000])
    base = bpe_core.from_tiktoken(published_vocabulary_path("cl100k"))
    trimmed, dropped, id_map = bpe_core.trim(base, residue=True, on=[str(on)])
    return base, trimmed, dropped, id_map, docs_text[600_000:640_000]


def test_a_published_vocabulary_loses_residue_and_keeps_every_other_token(cl100k_without_residue) -> None:
    base, trimmed, dropped, id_map, _ = cl100k_without_residue
    assert dropped and all(why.startswith("residue: ") for why in dropped.values())
    every_id = set(base.regular_ids()) | set(base.special_ids.values())  # cl100k_base has unused ids before its last
    assert sorted(id_map) == sorted(every_id - set(dropped))  # every other token is kept
    assert sorted(id_map.values()) == list(range(trimmed.vocab_size))  # compact
    assert all(base.token_bytes(old) == trimmed.token_bytes(new) for old, new in id_map.items())
    assert {token: trimmed.special_ids[token] for token in base.special_ids} == {
        token: id_map[token_id] for token, token_id in base.special_ids.items()
    }
    stage = trimmed.provenance["lineage"][-1]["trim"]["asked"]["residue"]
    assert stage["found"] == len(dropped) + stage["kept_back"]


def test_a_published_vocabulary_without_residue_is_lossless_and_exports_exactly(
    cl100k_without_residue, tmp_path: Path
) -> None:
    base, trimmed, _, _, held_out = cl100k_without_residue
    ours = trimmed.encode_ordinary(held_out)
    assert trimmed.decode(ours) == held_out
    assert len(ours) <= len(base.encode_ordinary(held_out)) * 1.005
    trimmed.to_tiktoken(tmp_path / "trimmed.tiktoken")
    theirs = tiktoken_encoding("trimmed", read_ranks(tmp_path / "trimmed.tiktoken"), PUBLISHED_PATTERNS["cl100k"])
    assert_same_ids(ours, theirs.encode_ordinary(held_out), "tiktoken")
    trimmed.to_hf(tmp_path / "tokenizer.json")
    assert_same_ids(ours, HfTokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(held_out).ids, "tokenizers")


def test_trim_residue_command_writes_the_map_of_kept_ids(tmp_path: Path) -> None:
    vocabulary = hand_vocabulary(tmp_path)
    on = text_file(tmp_path, "hand.txt", HAND_TEXT)
    tokenizer = tmp_path / "hand.json"
    bpe_core.from_tiktoken(vocabulary, WORDS).save(tokenizer)
    result = run_bpe(
        "trim", tokenizer, "--residue", "--threshold", "0.5", "--on", on, "-o", "out.json", "--map", "map.tsv",
        cwd=tmp_path,
    )  # fmt: skip
    assert_ok(result)
    assert "1 residue found, 0 kept for longer tokens" in result.stderr and "residue: made 3 times" in result.stderr
    lines = (tmp_path / "map.tsv").read_text(encoding="ascii").splitlines()
    assert lines[-2:] == ["257\t256", "258\t257"] and len(lines) == 258
    assert bpe_core.load(tmp_path / "out.json").merges == [(98, 99), (97, 256)]


@pytest.mark.parametrize(
    "arguments, fragments",
    [
        (["--residue"], ("--residue needs --on",)),
        (["--threshold", "0.2", "--vocab-size", "300"], ("--threshold R is for --residue",)),
        (["--residue", "--threshold", "1.5", "--on", "hand.txt"], ("expected a number from 0 to 1",)),
        (["--on", "hand.txt"], ("--min-count C or --residue",)),
    ],
    ids=["residue-without-on", "threshold-without-residue", "threshold-above-one", "on-alone"],
)
def test_residue_refusals_are_one_error_line(arguments: list[str], fragments: tuple[str, ...], tmp_path: Path) -> None:
    tokenizer = tmp_path / "hand.json"
    bpe_core.from_tiktoken(hand_vocabulary(tmp_path), WORDS).save(tokenizer)
    text_file(tmp_path, "hand.txt", HAND_TEXT)
    assert_fails_cleanly("trim", tokenizer, *arguments, "-o", "out.json", cwd=tmp_path, fragments=fragments)


def test_arguments_of_the_wrong_type_are_refused_before_any_file_is_read(tmp_path: Path) -> None:
    tokenizer = bpe_core.from_tiktoken(hand_vocabulary(tmp_path), WORDS)
    missing = str(tmp_path / "missing.txt")
    with pytest.raises(ArgumentError, match=r"find_residue\(threshold\): expected a number"):
        find_residue(tokenizer, [missing], threshold="0.5")
    with pytest.raises(ArgumentError, match=r"find_residue\(on\): expected a list of paths"):
        find_residue(tokenizer, missing)
    with pytest.raises(bpe_core.BpeError, match=r"threshold: expected a number from 0 to 1"):
        find_residue(tokenizer, [missing], threshold=1.5)
    with pytest.raises(ArgumentError, match=r"trim\(residue\): expected True or False"):
        bpe_core.trim(tokenizer, residue="yes", on=[missing])
    with pytest.raises(bpe_core.BpeError, match=r"threshold is for residue"):
        bpe_core.trim(tokenizer, threshold=0.5, vocab_size=300)
