"""What `bpe eval` measures: intrinsic metrics of tokenizers on files, per file or group of files.

The metrics are pure functions of counts (`renyi_entropy`, `renyi_efficiency`, `gini`,
`vocabulary_use`, `WordCounter`), defined in docs/eval.md with their sources; `evaluate` encodes
each group of files with each tokenizer (as `bpe encode` reads them, special-token strings as
plain text) and returns every number as plain data, what `--json` writes and the page draws;
`report_lines` is the terminal's table. Nothing here writes files or prints.
"""

import math
import operator
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.contract import MeasuresDocuments, reader_suffixes, symbol_unit
from bpe_core.corpus.streaming import corpus_reader, encode_pieces
from bpe_core.errors import BpeError
from bpe_core.files import expand_paths
from bpe_core.residue import DEFAULT_THRESHOLD, check_threshold, find_residue
from bpe_core.tokenizer import Tokenizer

ALPHA = 2.5  # Zouhar et al. (2023): the order whose efficiency best predicted BLEU
RARE_BELOW = 10  # a token made fewer times than this (and at least once) is rare
ASCII_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")  # what `bytes.split()` splits on
WORD = "a maximal run of bytes that are not ASCII whitespace (what bytes.split() returns)"
COST_PER_SYMBOL = "tokens per symbol"
COST_PARALLEL = "tokens (parallel groups: the same content in each)"
MAX_GROUPS_FILE_BYTES = 1 << 20
MAX_GROUPS_DEPTH = 4


# ---------------------------------------------------------------------------------------------
# the metrics


def renyi_entropy(counts: Iterable[int], alpha: float = ALPHA) -> float:
    """H_alpha in bits of the distribution the counts make (p_i = c_i / sum c):
    1 / (1 - alpha) * log2(sum p_i ** alpha); at alpha = 1 its limit, Shannon's entropy."""
    positive = [count for count in counts if count > 0]
    total = sum(positive)
    if not total:
        raise ValueError("no counts: the entropy of an empty distribution is undefined")
    if alpha == 1:
        return -sum(count / total * math.log2(count / total) for count in positive)
    return math.log2(sum((count / total) ** alpha for count in positive)) / (1 - alpha)


def renyi_efficiency(counts: Iterable[int], vocabulary_size: int, alpha: float = ALPHA) -> float | None:
    """H_alpha of the unigram token distribution over log2 of the vocabulary size (Zouhar et al.
    2023): 1 when every id of the vocabulary is used equally; None with no tokens or a
    vocabulary of one id (log 1 = 0)."""
    listed = list(counts)
    if not any(count > 0 for count in listed) or vocabulary_size < 2:
        return None
    return renyi_entropy(listed, alpha) / math.log2(vocabulary_size)


def gini(values: Sequence[float]) -> float | None:
    """The Gini coefficient, sum over i, j of |x_i - x_j| / (2 n^2 mean): 0 when all values are
    equal, up to (n - 1) / n when one holds everything; None for fewer than two values or a zero
    mean."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if mean <= 0:
        return None
    differences = sum(abs(left - right) for left in values for right in values)
    return differences / (2 * len(values) ** 2 * mean)


def vocabulary_use(usage: Mapping[int, int], vocabulary: Iterable[int], rare_below: int) -> tuple[int, int]:
    """(unused, rare) among the vocabulary's ids: made never, and made at least once but fewer
    than `rare_below` times."""
    unused = 0
    rare = 0
    for token in vocabulary:
        uses = usage.get(token, 0)
        if uses == 0:
            unused += 1
        elif uses < rare_below:
            rare += 1
    return unused, rare


class WordCounter:
    """Counts the words (see WORD) of byte-level text from its token ids, piece by piece, without
    the text: a word begins at each byte that is not whitespace and is first or follows
    whitespace. Per id it keeps whether its first byte is not whitespace, how many words begin
    after its first byte, and whether its last byte is whitespace."""

    def __init__(self, token_bytes: Sequence[bytes]) -> None:
        self.starts_word = [int(bool(piece) and piece[0] not in ASCII_WHITESPACE) for piece in token_bytes]
        self.inner_starts = [
            sum(
                1
                for index in range(1, len(piece))
                if piece[index] not in ASCII_WHITESPACE and piece[index - 1] in ASCII_WHITESPACE
            )
            for piece in token_bytes
        ]
        self.ends_space = [int(bool(piece) and piece[-1] in ASCII_WHITESPACE) for piece in token_bytes]

    def piece(self, ids: Sequence[int]) -> tuple[int, bool, bool]:
        """(words that begin inside the piece after its first byte, whether its first byte may
        begin a word, whether its last byte is whitespace) for a non-empty piece of ids."""
        inner = sum(map(self.inner_starts.__getitem__, ids))
        after_space = [self.ends_space[token] for token in ids[:-1]]
        between = sum(map(operator.mul, map(self.starts_word.__getitem__, ids[1:]), after_space))
        return inner + between, bool(self.starts_word[ids[0]]), bool(self.ends_space[ids[-1]])

    def count(self, pieces: Iterable[Sequence[int]]) -> int:
        """The words of one document given as consecutive pieces of ids."""
        words = 0
        after_space = True  # the start of a document
        for ids in pieces:
            if not ids:
                continue
            inside, starts, ends = self.piece(ids)
            words += inside + (starts and after_space)
            after_space = ends
        return words


# ---------------------------------------------------------------------------------------------
# measuring


@dataclass(frozen=True)
class Group:
    """A row of the report: a name and the files, globs or directories it reads."""

    name: str
    paths: tuple[str, ...]


@dataclass
class Tally:
    """What encoding a group's files made: documents, uses of each id, words (byte-level text),
    and the reader's measures (MIDI: beats)."""

    documents: int = 0
    usage: Counter[int] = field(default_factory=Counter)
    words: int | None = None
    measures: dict[str, float] = field(default_factory=dict)


def groups_from(on: Sequence[str], groups: Sequence[str]) -> list[Group]:
    """The rows `--on A B` and `--groups NAME=PATH ... | GROUPS.yaml` ask for, in order: each --on
    input its own row; a NAME given twice gathers its paths; a YAML or JSON file maps names to a
    path or a list of paths (relative to the file's directory)."""
    gathered: dict[str, list[str]] = {}
    for path in on:
        gathered.setdefault(path, []).append(path)
    for item in groups:
        name, sep, path = item.partition("=")
        if sep:
            if not name or not path:
                raise BpeError(f"--groups expects NAME=PATH or a YAML/JSON file of names and paths, got {item!r}")
            gathered.setdefault(name, []).append(path)
            continue
        for name, paths in _groups_file(item).items():
            gathered.setdefault(name, []).extend(paths)
    if not gathered:
        raise BpeError("nothing to evaluate on: give --on FILES or --groups NAME=PATH ...")
    return [Group(name, tuple(paths)) for name, paths in gathered.items()]


def _groups_file(path: str) -> dict[str, list[str]]:
    """A groups file's names and paths; an error names the file and what is wrong."""
    import yaml

    from bpe_core.config_yaml import load_yaml

    if not path.endswith((".yaml", ".yml", ".json")):
        raise BpeError(f"--groups {path!r}: give NAME=PATH, or a .yaml or .json file mapping names to paths")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_GROUPS_FILE_BYTES + 1)
    except OSError as error:
        raise BpeError(f"cannot read groups file {path}: {error.strerror or error}") from error
    if len(data) > MAX_GROUPS_FILE_BYTES:
        raise BpeError(f"{path}: a groups file is at most {MAX_GROUPS_FILE_BYTES >> 20} MiB")
    try:
        raw = load_yaml(data, MAX_GROUPS_DEPTH)
    except yaml.YAMLError as error:
        raise BpeError(f"{path}: not YAML or JSON: {str(error).splitlines()[0]}") from None
    if not isinstance(raw, dict) or not raw:
        raise BpeError(f"{path}: expected a mapping of group names to a path or a list of paths")
    base = os.path.dirname(path)
    mapped: dict[str, list[str]] = {}
    for name, paths in raw.items():
        listed = [paths] if isinstance(paths, str) else paths
        if not isinstance(listed, list) or not listed or not all(isinstance(item, str) and item for item in listed):
            raise BpeError(f"{path}: group {name!r}: expected a path or a list of paths, got {paths!r}")
        mapped[str(name)] = [os.path.join(base, item) for item in listed]
    return mapped


def measure_group(
    tokenizer: Tokenizer,
    group: Group,
    words: WordCounter | None,
    workers: int | None = None,
    progress: bool | None = None,
) -> Tally:
    """Encode a group's files as the tokenizer's reader reads them (special-token strings as
    plain text) and tally the ids, the words and the reader's measures."""
    reader = corpus_reader(tokenizer)
    files = expand_paths(list(group.paths), reader_suffixes(reader))

    def summary(ids: list[int]) -> tuple[Counter[int], tuple[int, bool, bool] | None]:
        # in the workers: a piece's uses and its words, not its ids, come back
        return Counter(ids), (words.piece(ids) if words is not None and ids else None)

    tally = Tally(words=0 if words is not None else None)
    after_space = True
    with progress_bars.input_bar(progress, f"{tokenizer.name}: {group.name}", files) as bar:
        documents = progress_bars.metered(reader.documents(files, strict=True), bar)
        for piece, ended in encode_pieces(tokenizer, documents, workers, frozenset(), frozenset(), summary):
            if ended:
                tally.documents += 1
                after_space = True
                if not progress_bars.counts_bytes(bar):
                    bar.update(1)
                continue
            uses, counted = piece
            tally.usage.update(uses)
            if counted is not None and tally.words is not None:
                inside, starts, ends = counted
                tally.words += inside + (starts and after_space)
                after_space = ends
    if isinstance(reader, MeasuresDocuments):
        tally.measures = {
            key: float(value)
            for key, value in reader.measures().items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)
        }
    return tally


def word_counter(tokenizer: Tokenizer) -> WordCounter | None:
    """The word counter of a byte-level text tokenizer's ids (special ids count as no bytes), or
    None for other domains, which have no words."""
    if not tokenizer.pretokenizer.byte_level:
        return None
    specials = set(tokenizer.special_ids.values())
    regular = set(tokenizer.regular_ids())
    return WordCounter(
        [
            tokenizer.token_bytes(token) if token in regular and token not in specials else b""
            for token in range(tokenizer.vocab_size)
        ]
    )


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def scores(
    tokenizer: Tokenizer, tally: Tally, vocabulary: Sequence[int], rare_below: int, parallel: bool
) -> dict[str, Any]:
    """A tally's numbers: counts, ratios, Rényi efficiency, vocabulary use and the parity cost."""
    specials = set(tokenizer.special_ids.values())
    tokens = sum(tally.usage.values())
    symbols = sum(
        count * len(tokenizer.token_symbols(token)) for token, count in tally.usage.items() if token not in specials
    )
    unused, rare = vocabulary_use(tally.usage, vocabulary, rare_below)
    beats = tally.measures.get("beats")
    efficiency = renyi_efficiency(tally.usage.values(), len(vocabulary))
    return {
        "documents": tally.documents,
        "tokens": tokens,
        "symbols": symbols,
        "symbols_per_token": _ratio(symbols, tokens),
        "words": tally.words,
        "tokens_per_word": _ratio(tokens, tally.words),
        "beats": beats,
        "tokens_per_beat": _ratio(tokens, beats),
        "renyi_entropy_bits": renyi_entropy(tally.usage.values()) if tokens else None,
        "renyi_efficiency": efficiency,
        "types": sum(1 for count in tally.usage.values() if count),
        "unused": unused,
        "rare": rare,
        "cost": float(tokens) if parallel else _ratio(tokens, symbols),
    }


def evaluate(
    tokenizers: Sequence[tuple[str, Tokenizer]],
    groups: Sequence[Group],
    *,
    rare_below: int = RARE_BELOW,
    residue_threshold: float = DEFAULT_THRESHOLD,
    parallel: bool = False,
    workers: int | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Every number of `bpe eval`: per tokenizer (its path and the tokenizer), per group and in
    total, and the parity Gini of the groups' costs; the residue tokens (`bpe_core.residue`'s
    measure, at `residue_threshold`) in total only, from a second encoding of all the files.
    Tokenizers must read one kind of document."""
    if rare_below < 1:
        raise BpeError(f"--rare-below must be 1 or more, got {rare_below}")
    residue_threshold = check_threshold(residue_threshold)
    readers = {path: corpus_reader(tokenizer).name for path, tokenizer in tokenizers}
    if len(set(readers.values())) > 1:
        said = ", ".join(f"{path} reads {name!r}" for path, name in readers.items())
        raise BpeError(f"the tokenizers read different kinds of document ({said}): compare tokenizers of one kind")
    results: dict[str, Any] = {
        "alpha": ALPHA,
        "rare_below": rare_below,
        "residue_threshold": residue_threshold,
        "parallel": parallel,
        "cost": COST_PARALLEL if parallel else COST_PER_SYMBOL,
        "word": WORD,
        "groups": [{"name": group.name, "paths": list(group.paths)} for group in groups],
        "tokenizers": [],
    }
    for path, tokenizer in tokenizers:
        vocabulary = tokenizer.regular_ids()
        words = word_counter(tokenizer)
        tallies = [measure_group(tokenizer, group, words, workers, progress) for group in groups]
        total = Tally(words=None if words is None else 0)
        for tally in tallies:
            total.documents += tally.documents
            total.usage.update(tally.usage)
            if total.words is not None and tally.words is not None:
                total.words += tally.words
            for key, value in tally.measures.items():
                total.measures[key] = total.measures.get(key, 0.0) + value
        rows = [
            {"name": group.name, **scores(tokenizer, tally, vocabulary, rare_below, parallel)}
            for group, tally in zip(groups, tallies)
        ]
        costs = [row["cost"] for row in rows]
        everything = [path for group in groups for path in group.paths]
        residue = find_residue(tokenizer, everything, threshold=residue_threshold, workers=workers)
        results["tokenizers"].append(
            {
                "path": path,
                "name": tokenizer.name,
                "vocab_size": tokenizer.vocab_size,
                "vocabulary": len(vocabulary),
                "unit": symbol_unit(tokenizer.pretokenizer),
                "groups": rows,
                "total": {
                    "name": "total",
                    **scores(tokenizer, total, vocabulary, rare_below, parallel),
                    "residue": len(residue),
                },
                "gini": gini(costs) if None not in costs else None,
            }
        )
    return results


# ---------------------------------------------------------------------------------------------
# the terminal's table


def _shown(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def report_lines(results: Mapping[str, Any]) -> list[str]:
    """One table per tokenizer: a row per group and the total, then the parity Gini."""
    lines: list[str] = []
    for tokenizer in results["tokenizers"]:
        unit = tokenizer["unit"]
        rows = [*tokenizer["groups"], tokenizer["total"]]
        has_words = tokenizer["total"]["words"] is not None
        has_beats = tokenizer["total"]["beats"] is not None
        columns: list[tuple[str, str, int]] = [
            ("documents", "documents", 0),
            ("tokens", "tokens", 0),
            (f"{unit}/token", "symbols_per_token", 2),
        ]
        if has_words:
            columns.append(("tokens/word", "tokens_per_word", 3))
        if has_beats:
            columns.append(("tokens/beat", "tokens_per_beat", 2))
        columns += [
            (f"renyi({results['alpha']:g})", "renyi_efficiency", 4),
            ("unused", "unused", 0),
            (f"rare(<{results['rare_below']})", "rare", 0),
        ]
        if "residue" in tokenizer["total"]:
            columns.append((f"residue({results['residue_threshold']:g})", "residue", 0))
        names = [str(row["name"]) for row in rows]
        width = max(len("group"), *(len(name) for name in names))
        cells = [[_shown(row.get(key), digits) for _, key, digits in columns] for row in rows]
        widths = [max(len(title), *(len(row[index]) for row in cells)) for index, (title, _, _) in enumerate(columns)]
        lines.append(
            f"{tokenizer['name']} ({tokenizer['path']}): vocab {tokenizer['vocab_size']:,}, "
            f"{tokenizer['vocabulary']:,} regular ids"
        )
        lines.append(
            "  " + "group".ljust(width) + "".join(f"  {title:>{size}}" for (title, _, _), size in zip(columns, widths))
        )
        for name, row in zip(names, cells):
            lines.append("  " + name.ljust(width) + "".join(f"  {cell:>{size}}" for cell, size in zip(row, widths)))
        cost = "tokens" if results["parallel"] else f"tokens per {unit.removesuffix('s')}"
        if tokenizer["gini"] is not None:
            lines.append(
                f"  parity Gini of {cost} across the {len(tokenizer['groups'])} groups: {tokenizer['gini']:.4f}"
            )
        lines.append("")
    return lines[:-1]
