"""Hugging Face `tokenizer.json` files with a byte-level BPE model: import and export.

Accepted on import: model BPE (no dropout, no subword prefix or word suffix, no byte
fallback), pre-tokenizer `ByteLevel(use_regex=true, add_prefix_space=false)` or
`Sequence[Split(Regex, Isolated), ByteLevel(use_regex=false)]`, normalizers NFC, NFD, NFKC,
NFKD, Lowercase or a Sequence of them, merges as `["a","b"]` or `"a b"`, `added_tokens`,
`ignore_merges`. Ids stay Hugging Face's. Anything else is refused with a message that says
what, never approximated. Post-processors (BOS/EOS templates) are not applied: our ids are
those of `encode(text, add_special_tokens=False)`; the import records that it ignored one.
"""

import json
import os
import re
from array import array
from itertools import chain
from operator import add, lt, methodcaller
from typing import Any

from bpe_core.batching import collector_paused
from bpe_core.contract import ExportsToHF
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, make_directory, parse_json
from bpe_core.formats.hf_folder import special_token_roles, template_post_processor, write_transformers_files
from bpe_core.formats.layout import MAX_ID, check_id, is_int
from bpe_core.formats.tiktoken import NAMED_PATTERNS, pretokenizer_for
from bpe_core.plugins import registry
from bpe_core.spec import ComponentConfig, IdLayout, PackedMerges, TokenizerSpec, TokenizerView
from bpe_core.strands import refuse_mirrored_overlaps

GPT2_BYTELEVEL = "gpt2"
# The model's unknown token in exports of non-byte-level tokenizers (DNA) that have no unknown
# token of their own ([UNK], <unk>): a name that is not in the vocabulary, so `tokenizers` raises
# on a letter outside the alphabet ("Unk token `...` not found in the vocabulary") as bpe-core
# does, instead of dropping it and merging across the gap.
UNKNOWN_LETTER = "<a letter outside the alphabet: an error, as in bpe-core>"
NORMALIZERS = {"NFC": "nfc", "NFD": "nfd", "NFKC": "nfkc", "NFKD": "nfkd", "Lowercase": "lowercase"}


def _refuse(path: str, what: str) -> BpeError:
    return BpeError(f"{path}: {what}; bpe-core reproduces only what it can match exactly")


def _malformed(path: str, field: str, expected: str, value: Any) -> BpeError:
    text = json.dumps(value, ensure_ascii=False)
    shown = text if len(text) <= 60 else text[:40] + f"... ({len(text)} characters)"
    return BpeError(f"{path}: {field}: expected {expected}, got {shown}")


def _object(path: str, field: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _malformed(path, field, "an object", value)
    return value


def _list(path: str, field: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise _malformed(path, field, "a list", value)
    return value


def _normalizers(path: str, spec: Any, field: str = "normalizer") -> list[tuple[str, dict[str, Any]]]:
    if spec is None:
        return []
    kind = _object(path, field, spec).get("type")
    if kind == "Sequence":
        inner = _list(path, f"{field}.normalizers", spec.get("normalizers", []))
        return [
            item
            for index, part in enumerate(inner)
            for item in _normalizers(path, part, f"{field}.normalizers[{index}]")
        ]
    if kind in NORMALIZERS:
        return [(NORMALIZERS[kind], {})]
    raise _refuse(path, f"normalizer {kind!r} is not supported (supported: {', '.join(NORMALIZERS)}, Sequence)")


def _byte_level(path: str, spec: dict[str, Any], use_regex: bool) -> None:
    if spec.get("add_prefix_space", False):
        raise _refuse(path, "ByteLevel with add_prefix_space=true is not supported")
    if bool(spec.get("use_regex", True)) != use_regex:
        raise _refuse(path, f"ByteLevel with use_regex={spec.get('use_regex', True)} in this position is not supported")


# Hugging Face's regex engine (Oniguruma) reads a bounded quantifier followed by + as a repeat of
# the repeat, not as possessive; cl100k's \p{N}{1,3}+ is written there as the equivalent \p{N}{1,3}.
BOUNDED_THEN_PLUS = re.compile(r"\{\d+(,\d*)?\}\+")
# a single atom (\p{..}, an escape, a class or a character) with a bounded quantifier then +
SIMPLE_BOUNDED_THEN_PLUS = re.compile(r"(\\[pP]\{\w+\}|\\.|\[[^\]]*\]|[^\\()\]])\{(\d+(?:,\d*)?)\}\+")
HF_SPELLING = {r"\p{N}{1,3}+": r"\p{N}{1,3}"}


def to_hf_pattern(pattern: str) -> str:
    """Our pattern in Hugging Face's regex dialect (same matches)."""
    for ours, theirs in HF_SPELLING.items():
        pattern = pattern.replace(ours, theirs)
    if BOUNDED_THEN_PLUS.search(pattern):
        raise BpeError(
            f"the pattern {pattern!r} has a possessive bounded quantifier, which Hugging Face reads differently"
        )
    return pattern


def from_hf_pattern(path: str, pattern: str) -> str:
    """A Hugging Face Split pattern in our dialect; refused where the dialects differ."""
    for ours, theirs in HF_SPELLING.items():
        candidate = pattern.replace(theirs, ours)
        if candidate in {pretokenizer_for(name).pattern for name in NAMED_PATTERNS}:
            return candidate
    # what Oniguruma means by X{n,m}+, written for the regex package: (?:X{n,m})+
    rewritten = SIMPLE_BOUNDED_THEN_PLUS.sub(r"(?:\1{\2})+", pattern)
    if BOUNDED_THEN_PLUS.search(rewritten):
        raise _refuse(path, f"the Split pattern {pattern!r} repeats a group with {{n,m}}+, which is not supported")
    return rewritten


def _pattern(path: str, spec: Any) -> tuple[str, bool]:
    """(pattern or built-in name, keep unmatched text as chunks)."""
    if spec is None:
        raise _refuse(path, "a BPE model without a pre-tokenizer is not byte-level")
    kind = _object(path, "pre_tokenizer", spec).get("type")
    if kind == "ByteLevel":
        _byte_level(path, spec, use_regex=True)
        return GPT2_BYTELEVEL, False
    if kind == "Sequence":
        parts = _list(path, "pre_tokenizer.pretokenizers", spec.get("pretokenizers", []))
        for index, part in enumerate(parts):
            _object(path, f"pre_tokenizer.pretokenizers[{index}]", part)
        if len(parts) == 2 and parts[0].get("type") == "Split" and parts[1].get("type") == "ByteLevel":
            split = parts[0]
            pattern = _object(path, "pre_tokenizer.pretokenizers[0].pattern", split.get("pattern", {}))
            if "Regex" not in pattern:
                raise _refuse(path, "a Split on a plain string is not supported (only a Regex)")
            if not isinstance(pattern["Regex"], str) or not pattern["Regex"]:
                raise _malformed(
                    path, "pre_tokenizer.pretokenizers[0].pattern.Regex", "a non-empty string", pattern["Regex"]
                )
            behavior = split.get("behavior")
            invert = bool(split.get("invert", False))
            if (behavior, invert) not in (("Isolated", False), ("Removed", True)):
                raise _refuse(path, f"Split with behavior {behavior!r} (invert {invert}) is not supported")
            _byte_level(path, parts[1], use_regex=False)
            # Isolated keeps unmatched text as chunks; Removed with invert keeps only the matches
            return from_hf_pattern(path, str(pattern["Regex"])), behavior == "Isolated"
    raise _refuse(path, f"pre-tokenizer {json.dumps(spec)[:200]} is not supported")


def spec_from_content(content: bytes, path: str) -> TokenizerSpec:
    """The spec in a `tokenizer.json` file's bytes (`path` names it in errors). The garbage
    collector waits meanwhile: the file makes a list per merge, all of them kept, which young
    collections would walk again and again."""
    with collector_paused():
        return spec_from_data(parse_json(content, path, "tokenizer.json"), path)


def spec_from_data(data: Any, path: str) -> TokenizerSpec:
    """The spec in a `tokenizer.json` file's parsed JSON (`path` names it in errors)."""
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE" or "merges" not in model:
        kind = model.get("type") if isinstance(model, dict) else None
        raise _refuse(path, f"model type {kind!r} is not supported (only BPE)")
    if model.get("dropout") not in (None, 0, 0.0):
        raise _refuse(path, "BPE dropout in the model is not supported (use encode(dropout=...))")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _refuse(path, f"model.{key} {model[key]!r} is not supported")
    if model.get("byte_fallback"):
        raise _refuse(path, "byte_fallback is not supported")
    _check_shapes(path, data)
    pattern, keep_unmatched = _pattern(path, data.get("pre_tokenizer"))
    if pattern in NAMED_PATTERNS:
        pretokenizer = pretokenizer_for(pattern)
    else:
        named = next((name for name in NAMED_PATTERNS if pretokenizer_for(name).pattern == pattern), None)
        try:
            pretokenizer = (
                pretokenizer_for(named)
                if named
                else registry().pretokenizer(
                    "regex", {"pattern": pattern, "unmatched": "keep" if keep_unmatched else "drop"}
                )
            )
        except BpeError as error:  # a pattern that is no valid regex: name the file it came from
            raise BpeError(f"{path}: pre_tokenizer: {error}") from None
    normalizers = _normalizers(path, data.get("normalizer"))
    labels = pretokenizer.alphabet()
    label_byte = {label: byte for byte, label in enumerate(labels)}
    vocab: dict[str, int] = model.get("vocab", {})
    added = {item["content"]: int(item["id"]) for item in data.get("added_tokens", [])}
    _check_ids(path, vocab, added)
    unk = model.get("unk_token")
    unk_id = vocab.get(unk, -1) if unk else -1

    fast = _merges_in_order(model["merges"], vocab, added, labels, unk_id)
    if fast is None:
        merges, results, ids, internal_of = _merges_one_by_one(path, model["merges"], vocab, labels, unk_id)
    else:
        merges, results, ids, internal_of = fast
    orphans: dict[int, list[int]] = {}
    if fast is None:  # the quick reading takes only files without orphans
        for token, token_id in vocab.items():
            if token in internal_of or token in added:
                continue
            if any(char not in label_byte for char in token):
                raise _refuse(path, f"vocabulary entry {token!r} (id {token_id}) is not byte-level")
            orphans[token_id] = [label_byte[char] for char in token]
    whole_chunks: dict[bytes, int] = {}
    if model.get("ignore_merges"):
        whole_chunks = {
            bytes(label_byte[char] for char in token): token_id
            for token, token_id in vocab.items()
            if token not in added
        }
    name = os.path.splitext(os.path.basename(path))[0]
    provenance: dict[str, Any] = {"imported_from": {"format": "hf", "path": path}}
    if data.get("post_processor") is not None:
        provenance["ignored_post_processor"] = _object(path, "post_processor", data["post_processor"]).get("type")
    return TokenizerSpec(
        name=name,
        pretokenizer=ComponentConfig(pretokenizer.name, pretokenizer.options()),
        internal_merges=merges,
        merge_results=results,
        special_tokens=tuple(added),
        layout=IdLayout(ids, added, orphans, whole_chunks),
        normalizers=tuple(ComponentConfig(normalizer, options) for normalizer, options in normalizers),
        config={"name": name, "pretokenizer": {"name": pretokenizer.name, **pretokenizer.options()}},
        provenance=provenance,
    )


Merges = tuple[PackedMerges | list[tuple[int, int]], list[int], list[int], dict[str, int]]


def _merges_in_order(
    listed: list[Any], vocab: dict[str, int], added: dict[str, int], labels: list[str], unk_id: int
) -> Merges | None:
    """The merges, results, ids and internal ids of the common file, read in a few passes in C
    with no Python step per merge: each merge well formed, its parts in the vocabulary and made
    before it (base labels or earlier merges), its string new and in the vocabulary, and every
    vocabulary entry a label, a merge's string or an added token. None otherwise, for
    `_merges_one_by_one` (which names what is wrong, and takes what is only unusual)."""
    kinds = set(map(type, listed))
    if kinds == {str}:
        pairs = list(map(methodcaller("split", " ", 1), listed))
    elif kinds == {list}:
        pairs = listed
    else:
        return None
    if set(map(len, pairs)) != {2}:
        return None
    parts = list(chain.from_iterable(pairs))
    if set(map(type, parts)) != {str} or not all(parts) or not vocab.keys() >= set(labels):
        return None
    lefts = parts[0::2]
    rights = parts[1::2]
    made = list(map(add, lefts, rights))
    first = len(labels)
    results = list(range(first, first + len(made)))
    internal_of = dict(zip(labels, range(first)))
    internal_of.update(zip(made, results))
    if len(internal_of) != len(results) + first or len(vocab.keys() - internal_of.keys() - added.keys()):
        return None  # a merge that makes a label or an earlier merge's string, or an orphan
    try:
        left_ids = list(map(internal_of.__getitem__, lefts))
        right_ids = list(map(internal_of.__getitem__, rights))
        made_ids = list(map(vocab.__getitem__, made))
    except KeyError:  # a part no merge makes, or a merge's string not in the vocabulary
        return None
    if not (all(map(lt, left_ids, results)) and all(map(lt, right_ids, results))):
        return None
    packed = array("i", chain.from_iterable(zip(left_ids, right_ids)))
    ids = [vocab.get(label, unk_id) for label in labels] + made_ids
    return PackedMerges(packed.tobytes()), results, ids, internal_of


def _merges_one_by_one(path: str, listed: list[Any], vocab: dict[str, int], labels: list[str], unk_id: int) -> Merges:
    """The merges, results, ids and internal ids, merge by merge (see `_merges_in_order`)."""
    internal_of: dict[str, int] = {label: byte for byte, label in enumerate(labels)}
    ids = [vocab.get(label, unk_id) for label in labels]
    merges: list[tuple[int, int]] = []
    results: list[int] = []
    for index, merge in enumerate(listed):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        merged = left + right
        for part in (left, right, merged):
            if part not in vocab:
                raise BpeError(
                    f"{path}: merge {index} ({left!r}, {right!r}) uses {part!r}, which is not in the vocabulary"
                )
        if left not in internal_of or right not in internal_of:
            continue  # a part no merge produces: this merge can never apply
        result = internal_of.get(merged)
        if result is None:
            result = len(ids)
            internal_of[merged] = result
            ids.append(vocab[merged])
        merges.append((internal_of[left], internal_of[right]))
        results.append(result)
    return merges, results, ids, internal_of


def _check_shapes(path: str, data: Any) -> None:
    """The parts of a tokenizer.json the importer reads have the types Hugging Face writes."""
    data = _object(path, "top level", data)
    model = _object(path, "model", data.get("model"))
    vocab = _object(path, "model.vocab", model.get("vocab", {}))
    token_ids = vocab.values()
    if not (
        set(map(type, token_ids)) <= {int} and 0 <= min(token_ids, default=0) and max(token_ids, default=0) <= MAX_ID
    ):
        for token, token_id in vocab.items():  # the first that is not an id, for the error
            if not is_int(token_id) or not 0 <= token_id <= MAX_ID:
                _check_id_in(path, f"model.vocab[{json.dumps(token, ensure_ascii=False)[:40]}]", token_id)
    listed = _list(path, "model.merges", model.get("merges", []))
    if not _merges_well_formed(listed):
        _check_merge_shapes(path, listed)
    if model.get("unk_token") is not None and not isinstance(model["unk_token"], str):
        raise _malformed(path, "model.unk_token", "a string or null", model["unk_token"])
    contents: set[str] = set()
    for index, item in enumerate(_list(path, "added_tokens", data.get("added_tokens", []))):
        field = f"added_tokens[{index}]"
        item = _object(path, field, item)
        if not isinstance(item.get("content"), str) or not item["content"]:
            raise _malformed(path, f"{field}.content", "a non-empty string", item.get("content"))
        if item["content"] in contents:
            raise BpeError(f"{path}: {field}: {item['content']!r} is added twice")
        contents.add(item["content"])
        _check_id_in(path, f"{field}.id", item.get("id"))


def _merges_well_formed(listed: list[Any]) -> bool:
    """Whether every merge is "left right" or ["left", "right"] (non-empty strings), checked in C."""
    kinds = set(map(type, listed))
    if kinds <= {str}:
        return all(map(methodcaller("__contains__", " "), listed))
    if kinds != {list} or set(map(len, listed)) != {2}:
        return False
    parts = list(chain.from_iterable(listed))
    return set(map(type, parts)) == {str} and all(parts)


def _check_merge_shapes(path: str, listed: list[Any]) -> None:
    """An error naming the first merge that is not "left right" or ["left", "right"]."""
    for index, merge in enumerate(listed):
        if isinstance(merge, str):
            if " " not in merge:
                raise _malformed(path, f"model.merges[{index}]", 'a merge "left right" or ["left", "right"]', merge)
        elif not (
            isinstance(merge, list) and len(merge) == 2 and all(isinstance(part, str) and part for part in merge)
        ):
            raise _malformed(path, f"model.merges[{index}]", 'a merge "left right" or ["left", "right"]', merge)


def _check_id_in(path: str, field: str, value: Any) -> None:
    try:
        check_id(value, field)
    except BpeError as error:
        raise BpeError(f"{path}: {error}") from None


def _check_ids(path: str, vocab: dict[str, int], added: dict[str, int]) -> None:
    """No two vocabulary entries share an id, and an added token's id is its own (the same
    token may be in the vocabulary with that id: exports put special tokens there)."""
    owner = dict(zip(vocab.values(), vocab.keys()))
    if len(owner) < len(vocab):  # some id twice: the first is named
        owner = {}
        for token, token_id in vocab.items():
            if token_id in owner:
                raise BpeError(f"{path}: model.vocab: {owner[token_id]!r} and {token!r} both have id {token_id}")
            owner[token_id] = token
    seen: dict[int, str] = {}
    for token, token_id in added.items():
        if owner.get(token_id, token) != token:
            raise BpeError(
                f"{path}: added token {token!r} has id {token_id}, the id of vocabulary entry {owner[token_id]!r}"
            )
        if token in vocab and vocab[token] != token_id:
            raise BpeError(f"{path}: added token {token!r} has id {token_id} but id {vocab[token]} in model.vocab")
        if token_id in seen:
            raise BpeError(f"{path}: added tokens {seen[token_id]!r} and {token!r} both have id {token_id}")
        seen[token_id] = token


def to_hf(tokenizer: TokenizerView, path: str | os.PathLike[str], max_length: int | None = None) -> None:
    """Write a `tokenizer.json` that `tokenizers.Tokenizer.from_file` and
    `transformers.PreTrainedTokenizerFast(tokenizer_file=...)` load, giving our ids.

    A path ending in `.json` is the file; any other path is a folder that gets `tokenizer.json`.
    Missing folders are created. In a folder, or beside a file named `tokenizer.json`,
    `tokenizer_config.json` and `special_tokens_map.json` are written too, so
    `AutoTokenizer.from_pretrained(folder)` works; `max_length` (the longest input of the model,
    in tokens) is its `model_max_length` there. With `[CLS]`/`[SEP]` (or `<s>`/`</s>`) a
    template post-processor adds them as BERT (RoBERTa) does.

    Tokens are written as their base symbols' tokens joined, and a base symbol's token is its
    label, which must then be one character (bytes as GPT-2's characters, nucleotides as
    letters). The pretokenizer describes its own normalizer, pre-tokenizer and decoder for
    Hugging Face (`hf_components()`); one that cannot is refused. It may also give each base
    symbol a token of several characters (`symbol_tokens`, in alphabet order) with the
    `building_merges` that make them from characters, ranked before ours (DNA k-mers); what
    those make on the way gets ids after all of ours. A letter outside a non-byte-level alphabet
    becomes the tokenizer's unknown token (`[UNK]` or `<unk>`) in Hugging Face, one per letter,
    as DNABERT-2's tokenizer does, where bpe-core's `encode` refuses it; a tokenizer without one
    makes it an error in both libraries (see `UNKNOWN_LETTER`). A pretokenizer that asks for mirrored
    overlap resolution is refused: Hugging Face's BPE resolves overlaps leftmost.
    """
    refuse_mirrored_overlaps(tokenizer.pretokenizer, "Hugging Face")
    if not isinstance(tokenizer.pretokenizer, ExportsToHF):
        raise BpeError(f"pretokenizer {tokenizer.pretokenizer.name!r} has no Hugging Face equivalent")
    components = tokenizer.pretokenizer.hf_components()
    symbol_tokens: list[str] = components.get("symbol_tokens", tokenizer.alphabet)
    building_merges: list[tuple[str, str]] = components.get("building_merges", [])
    built = {left + right for left, right in building_merges}
    long_labels = [token for token in symbol_tokens if len(token) != 1 and token not in built]
    if long_labels:
        raise BpeError(
            f"Hugging Face BPE works on characters; symbols such as {long_labels[0]!r} are not one character"
        )
    token_of_label = dict(zip(tokenizer.alphabet, symbol_tokens, strict=True))

    def token_text(token_id: int) -> str:
        return "".join(token_of_label[label] for label in tokenizer.token_symbols(token_id))

    vocab: dict[str, int] = {}
    for token_id in tokenizer.regular_ids():
        token = token_text(token_id)
        if token in vocab and vocab[token] != token_id:
            raise BpeError(
                f"ids {vocab[token]} and {token_id} both stand for {token!r}; a tokenizer.json cannot hold that"
            )
        vocab[token] = token_id
    reserved = {f"<|reserved_{token_id}|>": token_id for token_id in tokenizer.reserved_ids}
    for token, token_id in [*tokenizer.special_ids.items(), *reserved.items()]:
        # in the model vocabulary too, so Hugging Face keeps their ids (DNABERT-2 has [UNK] at 0)
        if vocab.setdefault(token, token_id) != token_id:
            raise BpeError(f"special token {token!r} (id {token_id}) is also the regular token {vocab[token]}")
    # what building merges make on the way to a symbol's token gets the ids after all of ours;
    # no encoding ends with one (each is built on into a symbol's token)
    next_id = max(vocab.values(), default=-1) + 1
    for left, right in building_merges:
        for part in (left, right, left + right):
            if part not in vocab:
                vocab[part] = next_id
                next_id += 1
    listed = [*sorted(tokenizer.special_ids.items(), key=lambda item: item[1]), *reserved.items()]
    added = [
        {
            "id": token_id,
            "content": token,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for token, token_id in listed
    ]
    normalizer_types = {value: key for key, value in NORMALIZERS.items()}
    unsupported = [item.name for item in tokenizer.spec.normalizers if item.name not in normalizer_types]
    if unsupported:
        raise BpeError(f"normalizer {unsupported[0]!r} has no Hugging Face equivalent")
    # ours run first, then the pretokenizer's own (such as DNA case folding)
    normalizers = [{"type": normalizer_types[item.name]} for item in tokenizer.spec.normalizers]
    if components.get("normalizer") is not None:
        normalizers.append(components["normalizer"])
    normalizer: Any = None
    if len(normalizers) == 1:
        normalizer = normalizers[0]
    elif normalizers:
        normalizer = {"type": "Sequence", "normalizers": normalizers}
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": components["pre_tokenizer"],
        "post_processor": template_post_processor(tokenizer.special_ids),
        "decoder": components["decoder"],
        "model": {
            "type": "BPE",
            "dropout": None,
            # byte-level: every byte is in the vocabulary; otherwise the tokenizer's [UNK], else an error
            "unk_token": _unknown_token(tokenizer),
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": bool(tokenizer.layout.whole_chunks),
            "vocab": vocab,
            "merges": [
                *([left, right] for left, right in building_merges),
                *([token_text(left), token_text(right)] for left, right in tokenizer.merges),
            ],
        },
    }
    target = os.fspath(path)
    folder = not target.endswith(".json") or os.path.isdir(target)
    file_path = os.path.join(target, "tokenizer.json") if folder else target
    directory = os.path.dirname(os.path.abspath(file_path))
    make_directory(directory)
    with atomic_output(file_path) as handle:
        handle.write(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    if folder or os.path.basename(file_path) == "tokenizer.json":
        write_transformers_files(directory, tokenizer.special_ids, max_length)


def _unknown_token(tokenizer: TokenizerView) -> str | None:
    """The model's `unk_token`: none for byte-level text (every byte is a symbol); for other
    alphabets the tokenizer's unknown token ([UNK], <unk>) when it has one, which a letter outside
    the alphabet then becomes, else `UNKNOWN_LETTER`, which makes such a letter an error."""
    if tokenizer.pretokenizer.byte_level:
        return None
    return special_token_roles(tokenizer.special_ids).get("unk_token", UNKNOWN_LETTER)
