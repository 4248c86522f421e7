"""What `bpe inspect` shows about a tokenizer: a summary of its vocabulary, pipeline and origin,
its notable tokens, and its compression measured on files it was not necessarily trained on.

It returns lines and numbers; printing them is the command line's job. It changes nothing.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from bpe_core.contract import MeasuresDocuments, ReportsEncoding, symbol_unit
from bpe_core.corpus.streaming import corpus_reader, plain_pieces
from bpe_core.tokenizer import Tokenizer


def summary_lines(tokenizer: Tokenizer, top: int) -> list[str]:
    """The inspect report: vocabulary, alphabet, specials, pipeline, where the tokenizer came from
    (training inputs, at most `top` of them, or the file it was imported from) and token lists."""
    return [
        *pipeline_lines(tokenizer),
        *provenance_lines(tokenizer, top),
        *lineage_lines(tokenizer),
        *token_lines(tokenizer, top),
    ]


def pipeline_lines(tokenizer: Tokenizer) -> list[str]:
    """The vocabulary, alphabet, merges, special tokens, pretokenizer and plugins."""
    lines = [f"name:          {tokenizer.name}", f"vocab size:    {tokenizer.vocab_size}"]
    sample = " ".join(tokenizer.alphabet[:16])
    if tokenizer.alphabet_size > 16:
        sample += " ..."
    lines.append(f"alphabet:      {tokenizer.alphabet_size} base symbols: {sample}")
    lines.append(f"merges:        {len(tokenizer.merges)}")
    specials = ", ".join(f"{token}={token_id}" for token, token_id in tokenizer.special_ids.items()) or "none"
    lines.append(f"special:       {specials} (position {tokenizer.special_position})")
    options = tokenizer.pretokenizer.options()
    shown_options = f" {options}" if options else ""
    lines.append(f"pretokenizer:  {tokenizer.pretokenizer.name}{shown_options}")
    if tokenizer.plugins:
        lines.append("plugins:       " + ", ".join(f"{name} {version}" for name, version in tokenizer.plugins.items()))
    return lines


def provenance_lines(tokenizer: Tokenizer, top: int) -> list[str]:
    """Where the tokenizer came from: the file it was imported from, or what it was trained on
    (at most `top` of the input files)."""
    provenance = tokenizer.provenance
    imported = provenance.get("imported_from")
    if isinstance(imported, dict):
        published = f", the published {imported['published']}" if imported.get("published") else ""
        return [f"imported from: {imported.get('path')} ({imported.get('format')}{published}); no training statistics"]
    if not provenance:
        return []

    # a file may hold anything here (edited, damaged): what is not a number shows as "?"
    chunks = _number(provenance, "chunks")
    unique = _number(provenance, "unique_chunks")
    symbols = _number(provenance, "symbols")
    tokens = _number(provenance, "tokens")
    beats = _number(provenance, "beats")
    lines = [
        f"trained on:    {_shown(chunks)} chunks ({_shown(unique)} unique), {_shown(symbols)} symbols, "
        f"in {_shown(_number(provenance, 'seconds'))} s"
    ]
    unit = symbol_unit(tokenizer.pretokenizer)
    if symbols is not None and tokens:
        lines.append(f"compression:   {symbols / tokens:.2f} base symbols ({unit}) per token on the training data")
    counting = provenance.get("counting")
    if counting and isinstance(counting, dict):  # a pretokenizer that ReportsCounting counted more (MIDI: augment)
        said = ", ".join(f"{str(key).replace('_', ' ')} {_shown(_number(counting, key))}" for key in counting)
        lines.append(f"counting:      {said} (in the counts above)")
    elif tokens is not None and beats:  # the beats are the documents' only
        lines.append(f"density:       {tokens / beats:.2f} tokens per beat on the training data")

    inputs = provenance.get("inputs")
    if not isinstance(inputs, list):
        inputs = []
    inputs = [source for source in inputs if isinstance(source, dict)]
    for source in inputs[:top]:
        digest = source.get("sha256")
        shown_digest = digest[:16] if isinstance(digest, str) else "?"
        lines.append(f"  {source.get('path', '?')}  {_shown(_number(source, 'size'))} bytes  sha256 {shown_digest}...")
    if len(inputs) > top:
        lines.append(f"  ... and {len(inputs) - top:,} more input files ({len(inputs):,} in all; --top N shows N)")
    return lines


def token_lines(tokenizer: Tokenizer, top: int) -> list[str]:
    """`top` tokens of each list: the longest, the last learned, the most used and the rarest in
    training."""
    show = tokenizer.token_text
    merged_ids = tokenizer.merged_ids()
    longest = sorted(merged_ids, key=lambda token: (-len(tokenizer.token_symbols(token)), token))[:top]
    lines = [f"longest tokens ({top}):"]
    for token in longest:
        lines.append(f"  {token:>7}  {len(tokenizer.token_symbols(token)):>5} symbols  {show(token)!r}")
    lines.append(f"last learned ({top}):")
    for token in merged_ids[-top:]:
        lines.append(f"  {token:>7}  {show(token)!r}")
    if tokenizer.token_usage:
        lines.append(f"most used merged tokens on the training data ({top}):")
        for token, uses in tokenizer.most_used_tokens(top):
            lines.append(f"  {token:>7}  used {uses:>8} times  {show(token)!r}")
    counts = tokenizer.merge_counts
    if counts:
        rare = sorted(range(len(counts)), key=lambda rank: (counts[rank], rank))[:top]
        lines.append(f"rarest in training ({top}; candidates for under-trained tokens):")
        for rank in rare:
            token = merged_ids[rank]
            lines.append(f"  {token:>7}  seen {counts[rank]:>6} times  {show(token)!r}")
    return lines


def _number(record: dict[str, Any], key: str) -> int | float | None:
    """record[key] if it is a number (not a bool), else None."""
    value = record.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _shown(value: int | float | None) -> str:
    return "?" if value is None else f"{value:,}"


def lineage_lines(tokenizer: Tokenizer) -> list[str]:
    """The stages that made the tokenizer (training, continued training, trims), oldest first,
    when there was more than one."""
    lineage = tokenizer.provenance.get("lineage")
    if not isinstance(lineage, list) or len(lineage) < 2:
        return []
    lines = ["lineage:"]
    for number, stage in enumerate(lineage, start=1):
        if not isinstance(stage, dict):
            continue
        if "trim" in stage:
            lines.append(f"  {number}. trim: {stage['trim']}")
            continue
        imported = stage.get("import")
        if isinstance(imported, dict):
            published = f", the published {imported['published']}" if imported.get("published") else ""
            lines.append(
                f"  {number}. import {imported.get('name', '?')}: {imported.get('path', '?')} "
                f"({imported.get('format', '?')}{published}), vocab {imported.get('vocab_size', '?')}"
            )
            continue
        config = stage.get("config") or {}
        pretokenizer = (config.get("pretokenizer") or {}).get("name", "?")
        vocab = (config.get("trainer") or {}).get("vocab_size", "?")
        inputs = stage.get("inputs") or []
        lines.append(
            f"  {number}. train {config.get('name', '?')}: pretokenizer {pretokenizer}, vocab {vocab}, {len(inputs)} "
            "input file(s)"
        )
    base = tokenizer.provenance.get("base")
    if isinstance(base, dict):
        lines.append(
            f"  continued from {base.get('name')} (vocab {base.get('vocab_size')}, sha256 "
            f"{str(base.get('sha256'))[:16]}...)"
        )
    return lines


def measure_on(tokenizer: Tokenizer, paths: Sequence[str], workers: int | None = None) -> dict[str, Any]:
    """Encode files (read as the tokenizer's config says) and measure: documents, tokens, base
    symbols (special-token strings count as plain text), the reader's measures (MIDI: beats) and
    the summed encoding report of pretokenizers that give one (MIDI: what quantization changed)."""
    reader = corpus_reader(tokenizer)
    usage: Counter[int] = Counter()
    documents = 0
    for ids, ends in plain_pieces(tokenizer, paths, workers, reader):
        documents += ends
        usage.update(ids)
    specials = set(tokenizer.special_ids.values())
    measured: dict[str, Any] = {
        "documents": documents,
        "tokens": sum(usage.values()),
        "symbols": sum(
            count * len(tokenizer.token_symbols(token)) for token, count in usage.items() if token not in specials
        ),
        "unit": symbol_unit(tokenizer.pretokenizer),
    }
    if isinstance(reader, MeasuresDocuments):
        measured.update(reader.measures())
    if isinstance(tokenizer.pretokenizer, ReportsEncoding):
        totals: dict[str, Any] = {}
        for document in corpus_reader(tokenizer).documents(list(paths), strict=True):
            for key, value in tokenizer.encoding_report(document).items():
                if isinstance(value, (int, float)):
                    # counts add up over files; a maximum ("max_onset_shift_beats") stays the largest
                    totals[key] = (
                        max(totals.get(key, value), value) if key.startswith("max_") else totals.get(key, 0) + value
                    )
        measured["report"] = totals
    return measured


def measure_each(tokenizer: Tokenizer, paths: Sequence[str], workers: int | None = None) -> list[str]:
    """`bpe inspect --on A B ...`: the measures on each input as given (a file, a directory, a
    glob), then, for more than one, their total."""
    each = [measure_on(tokenizer, [path], workers) for path in paths]
    lines = [line for path, measured in zip(paths, each) for line in measure_lines(measured, [path])]
    if len(each) > 1:
        lines += measure_lines(summed_measures(each), paths)
    return lines


def summed_measures(each: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`measure_on`'s numbers over several inputs: counts add up, a maximum (`max_...`) is the
    largest."""

    def summed(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        total: dict[str, Any] = {}
        for record in records:
            for key, value in record.items():
                if isinstance(value, dict):
                    continue
                if not isinstance(value, (int, float)) or isinstance(value, bool) or key not in total:
                    total[key] = value
                elif key.startswith("max_"):
                    total[key] = max(total[key], value)
                else:
                    total[key] += value
        return total

    total = summed(each)
    reports = [measured["report"] for measured in each if isinstance(measured.get("report"), dict)]
    if reports:
        total["report"] = summed(reports)
    return total


def measure_lines(measured: dict[str, Any], paths: Sequence[str]) -> list[str]:
    """`measure_on`'s numbers as the inspect report shows them."""
    where = paths[0] if len(paths) == 1 else f"{len(paths)} inputs in all"
    lines = [
        f"on {where}:  {measured['documents']:,} documents, {measured['tokens']:,} tokens, {measured['symbols']:,} "
        f"{measured['unit']}"
    ]
    if measured["tokens"]:
        lines.append(
            f"compression:   {measured['symbols'] / measured['tokens']:.2f} base symbols ({measured['unit']}) per token"
        )
        if measured.get("beats"):
            lines.append(
                f"density:       {measured['tokens'] / measured['beats']:.2f} tokens per beat ({measured['beats']:,} "
                "beats)"
            )
    report = measured.get("report")
    if report:
        lines.append("encoding:      " + ", ".join(f"{key} {value:,}" for key, value in report.items()))
    return lines
