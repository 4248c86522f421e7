"""Training: a config becomes a `Plan` (plan.py: its components built and checked), the plan's
input is counted into unique chunks (`Counts`, on the local runner or a Dask cluster), and the engine's
trainer learns the merges from the counts. The result is a `Tokenizer`.

This module decides where counting runs; the runners only run what they are given. It does not
encode and writes no files (the command line saves the tokenizer).
"""

import contextlib
import hashlib
import io
import json
import operator
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.chunking import count_chunks, count_packed, count_packed_parts, normalize, piece_size, pieces
from bpe_core.config import Config, RunnerConfig, parity_paths, parse_runner, sized_name
from bpe_core.contract import (
    CountsPacked,
    MeasuresDocuments,
    Reader,
    ReadsMemory,
    ReadsRanges,
    Source,
)
from bpe_core.counts import (
    Counts,
    check_same_config,
    check_trainable,
    load_counts,
    pack,
    sum_counts,
    symbol_width,
    unpack,
)
from bpe_core.engine import TIE_RULES, ChunkGroups, PickyTrainer, Trainer
from bpe_core.errors import ArgumentError, BpeError, check_argument
from bpe_core.files import reader_files
from bpe_core.formats import native
from bpe_core.plan import ConfigSource, Plan, check_base, make_plan
from bpe_core.plugins import registry
from bpe_core.runners import dask
from bpe_core.runners.local import default_workers
from bpe_core.spec import ComponentConfig, IdLayout, TokenizerSpec
from bpe_core.strands import symbol_mirror
from bpe_core.tokenizer import Tokenizer
from bpe_core.veto import TokenVeto

# input from which local counting has each process read parts of its own (`_local_parts`): below
# it streaming through this process is as fast, and a forked worker that holds the counts of half
# the input raises the peak memory of the process tree
LOCAL_PARTS_BYTES = 1 << 25


def check_config(
    config: ConfigSource,
    overrides: dict[str, Any] | None = None,
    files: Sequence[str | os.PathLike[str]] | None = None,
    base: Tokenizer | None = None,
) -> str:
    """Validate a config without training: keys, components and their options, vocabulary size,
    and with `base` that training can continue from it (see `train`).

    Returns a one-line summary; raises BpeError naming what is wrong.
    """
    plan = make_plan(config, files, overrides)
    check_base(plan, base)
    settings = plan.settings
    continued = f", continuing {base.name} ({len(base.spec.internal_merges)} merges)" if base is not None else ""
    parity = settings.trainer.parity
    grouped = f" in {len(parity.groups)} parity groups" if parity is not None else ""
    return (
        f"pretokenizer {settings.pretokenizer.name} ({plan.alphabet_size} base symbols), reader "
        f"{settings.input.reader}, "
        f"vocab {settings.trainer.vocab_size} = {plan.alphabet_size} + {plan.num_merges} merges + "
        f"{len(settings.special_tokens.tokens)} special, {len(plan.paths)} input path(s){grouped}{continued}"
    )


def count(
    config: ConfigSource,
    files: Sequence[str | os.PathLike[str]] | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    progress: bool | None = None,
    runner: RunnerConfig | dict[str, Any] | None = None,
    documents: Iterable[Any] | None = None,
    column: str | None = None,
) -> Counts:
    """The unique chunks of the config's input with their counts (the part of training that
    grows with the corpus), on the config's runner unless `runner` is given. `documents` and
    `column` count documents in memory instead, as `train` takes them.

    >>> counts = bpe_core.count("configs/gpt2-style.yaml", ["corpus.txt"])
    >>> counts.save("corpus.counts")
    """
    _check_arguments(workers, progress, None, column)
    if documents is not None or column is not None:
        plan, items = _memory_plan(config, files, overrides, documents)
        return _count_memory(plan, items, column, _runner(plan.settings, runner, workers), progress)
    plan = make_plan(config, files, overrides)
    return _count(plan, _runner(plan.settings, runner, workers), progress)


def train(
    config: ConfigSource,
    files: Sequence[str | os.PathLike[str]] | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    progress: bool | None = None,
    runner: RunnerConfig | dict[str, Any] | None = None,
    counts: Sequence["str | os.PathLike[str] | Counts"] | None = None,
    base: Tokenizer | None = None,
    documents: Iterable[Any] | None = None,
    column: str | None = None,
) -> Tokenizer:
    """Train a tokenizer from a YAML config (path or dict); `files` replaces input.paths.

    Relative paths in a config file are relative to that file. With `counts` (counts files or
    objects, as `count` makes them) no input is read: training starts from their sum.

    With `base`, training continues from that tokenizer: its merges are taken first, in rank
    order, then new ones are learned up to `trainer.vocab_size` on this input. Every id of the
    base keeps its id and new merges get the ids after the base's last; on the same config and
    data the merges are exactly those of training to `trainer.vocab_size` in one go. The
    pretokenizer may change (a coarser one learns superword tokens); the alphabet, the
    normalizers and the special tokens may not. `trainer.forbid` applies to the new merges only:
    the base's are kept as they are.

    With `documents`, training reads no files: it takes any iterable of the documents the
    config's reader makes, one at a time (text: `str` or UTF-8 `bytes`, or lists of them;
    DNA: sequences or Biopython `SeqRecord`s; MIDI: paths, `mido.MidiFile`s or `Song`s). The
    merges are those of training on the same documents read from files (text: one JSON Lines
    line per document). With `column`, each item is a row (a mapping, as a Hugging Face
    `datasets.Dataset` or `IterableDataset` yields) and its `column` is the document.

    >>> tok = bpe_core.train("configs/gpt2-style.yaml", ["corpus.txt"], {"trainer.vocab_size": 8192})
    >>> bigger = bpe_core.train("configs/gpt2-style.yaml", ["corpus.txt"], {"trainer.vocab_size": 16384}, base=tok)
    >>> tok = bpe_core.train("configs/gpt2-style.yaml", documents=dataset, column="text")
    """
    started = time.perf_counter()
    _check_arguments(workers, progress, base, column)
    groups = None
    if documents is not None or column is not None:
        if counts is not None:
            raise BpeError("give documents or counts to train from, not both")
        plan, items = _memory_plan(config, files, overrides, documents)
        check_base(plan, base)
        _check_no_parity(plan, "documents")
        total = _count_memory(plan, items, column, _runner(plan.settings, runner, workers), progress)
    elif counts is not None:
        if files:
            raise BpeError("give input files or counts to train from, not both")
        plan = make_plan(config, None, overrides, need_paths=False)
        check_base(plan, base)
        _check_no_parity(plan, "counts")
        if isinstance(counts, (str, os.PathLike, Counts)):
            raise ArgumentError(f"counts: expected a list of counts files or Counts, got one {type(counts).__name__}")
        named = [
            (str(item), load_counts(item)) if not isinstance(item, Counts) else ("counts", item) for item in counts
        ]
        total = sum_counts(named)
        check_same_config(counting_config(plan.settings), total.config, named[0][0])
        check_trainable(total, plan.alphabet_size, named[0][0])
        if not any(total.chunks):
            raise BpeError(f"nothing to train on: {', '.join(name for name, _ in named)} hold(s) no chunks")
    else:
        plan = make_plan(config, files, overrides)
        check_base(plan, base)
        if plan.settings.trainer.parity is not None:
            total, groups = _count_groups(plan, _runner(plan.settings, runner, workers), progress)
        else:
            total = _count(plan, _runner(plan.settings, runner, workers), progress)
    return _train_from(plan, total, progress, started, base, groups)


def _check_no_parity(plan: Plan, given: str) -> None:
    if plan.settings.trainer.parity is not None:
        raise BpeError(
            f"{plan.settings.origin}: trainer.parity: training by group reads each group's files; give no {given}"
        )


def _check_arguments(workers: Any, progress: Any, base: Any, column: Any) -> None:
    """The arguments `train` and `count` share, checked at the door (config and overrides:
    `make_plan`; files, documents and counts: where they are read)."""
    if workers is not None:
        check_argument(workers, int, "workers", "a number of processes (int), 1 or more")
        if workers < 1:
            raise BpeError(f"workers: expected a number of processes, 1 or more, got {workers}")
    if progress is not None:
        check_argument(progress, bool, "progress", "True, False or None (a bar when standard error is a terminal)")
    if base is not None:
        check_argument(base, Tokenizer, "base", "a Tokenizer (bpe_core.load(path) reads one)")
    if column is not None:
        check_argument(column, str, "column", "the name of a field (str)")


# documents in memory ----------------------------------------------------------------------------


def _memory_plan(
    config: ConfigSource,
    files: Sequence[str | os.PathLike[str]] | None,
    overrides: dict[str, Any] | None,
    documents: Iterable[Any] | None,
) -> tuple[Plan, Iterable[Any]]:
    """The plan for counting `documents` (checked to be an iterable of them), with its reader."""
    if files:
        raise BpeError("give input files or documents to train from, not both")
    if documents is None:
        raise BpeError("column names a field of the documents: give documents too")
    if isinstance(documents, (str, bytes, os.PathLike)):
        raise BpeError(
            f"documents: one {type(documents).__name__}, not an iterable of documents "
            "(give a list of them, or pass file paths as files)"
        )
    plan = make_plan(config, None, overrides, need_paths=False)
    if not isinstance(plan.reader, ReadsMemory):
        raise BpeError(
            f"{plan.settings.origin}: input.reader: {plan.settings.input.reader!r} reads only files, not documents "
            "in memory; write them to files"
        )
    return plan, documents


def _count_memory(
    plan: Plan, documents: Iterable[Any], column: str | None, runner: RunnerConfig, progress: bool | None
) -> Counts:
    """Count documents from memory in this process and `runner.workers` workers; a bar in items
    taken from `documents` (with a total when it has a length), not in characters."""
    if runner.kind == "dask":
        raise BpeError("documents in memory are counted on this machine: use runner kind local (or give files)")
    sample = plan.settings.input.sample
    if sample is not None and sample.fraction is None:
        raise BpeError(
            f"{plan.settings.origin}: input.sample.bytes needs files (it reads the input twice); "
            "use input.sample.fraction with documents"
        )
    assert isinstance(plan.reader, ReadsMemory)
    try:
        total: int | None = len(documents)  # type: ignore[arg-type]
    except TypeError:
        total = None
    workers = runner.workers or default_workers()
    with progress_bars.bar(progress, "counting documents", total=total, unit="doc") as bar:
        items = _taken(_rows(documents, column), bar)
        counts = count_documents(
            plan, plan.reader.memory_documents(items), workers, False, None if sample is None else sample.fraction
        )
    width = counts.width
    symbols = sum(len(key) // width * times for key, times in counts.chunks.items())
    digest = hashlib.sha256()
    for key, times in sorted(counts.chunks.items()):
        digest.update(len(key).to_bytes(4, "little") + key + times.to_bytes(8, "little"))
    counts.inputs.append(
        {
            "path": "<documents>",
            "size": symbols,
            "sha256": digest.hexdigest(),
            "input": input_config(plan.settings),
            "sampled_fraction": None if sample is None else sample.fraction,
        }
    )
    return counts


def _rows(documents: Iterable[Any], column: str | None) -> Iterator[Any]:
    """The documents: each item, or with `column` each row's field of that name (a Hugging Face
    dataset is read in batches of that column alone, not row by row)."""
    if column is None:
        for index, item in enumerate(documents):
            if isinstance(item, Mapping):
                raise BpeError(
                    f"documents[{index}]: a row with fields {', '.join(map(str, item))}, not a document "
                    "(pass column= to take one field)"
                )
            yield item
        return
    names = getattr(documents, "column_names", None)
    if isinstance(names, list) and column not in names:
        raise BpeError(f"documents: no column {column!r} (columns: {', '.join(map(str, names))})")
    select = getattr(documents, "select_columns", None)
    if isinstance(names, list) and callable(select) and callable(getattr(documents, "iter", None)):
        for batch in select([column]).iter(batch_size=1024):
            yield from batch[column]
        return
    for index, row in enumerate(documents):
        if not isinstance(row, Mapping):
            raise BpeError(f"documents[{index}]: a {type(row).__name__}, not a row with a column {column!r}")
        if column not in row:
            raise BpeError(f"documents[{index}]: no column {column!r} (columns: {', '.join(map(str, row))})")
        yield row[column]


def _taken(items: Iterable[Any], bar: progress_bars.Bar) -> Iterator[Any]:
    for item in items:
        yield item
        bar.update(1)


def count_documents(
    plan: Plan, documents: Iterable[Any], workers: int | None, progress: bool | None, fraction: float | None
) -> Counts:
    """Count the documents (from plan.reader) into a Counts, in `workers` processes."""
    settings = plan.settings
    pretokenizer = plan.pretokenizer
    seed = settings.input.sample.seed if settings.input.sample else 0
    prepare = partial(normalize, normalizers=plan.normalizers)
    sample = None if fraction is None else (fraction, seed)
    chunks: dict[bytes, int]
    report: Counter[str] = Counter()  # what a pretokenizer that ReportsCounting did while counting
    if isinstance(pretokenizer, CountsPacked):  # no Python object per chunk, nor per unique chunk until the end
        chunks = count_packed(documents, pretokenizer, workers, progress, prepare, sample)
        counted_any = bool(chunks)
    else:
        counted = count_chunks(documents, pretokenizer, workers, progress, prepare, sample, report)
        counted_any = bool(counted)
        width = symbol_width(plan.alphabet_size)
        symbols = pretokenizer.symbols
        chunks = {}
        for chunk, times in counted.items():
            key = pack(symbols(chunk), width)
            chunks[key] = chunks.get(key, 0) + times
    if not counted_any and fraction is not None:
        raise BpeError(
            f"{settings.origin}: input.sample kept nothing of the input (fraction {fraction:.3g}); sample more"
        )
    return _counts(plan, chunks, plan.reader.sources(), fraction, report)


def _counts(
    plan: Plan, chunks: dict[bytes, int], sources: list[Source], fraction: float | None, report: Counter[str]
) -> Counts:
    read = input_config(plan.settings)
    inputs = [
        {"path": source.path, "size": source.size, "sha256": source.sha256, "input": read, "sampled_fraction": fraction}
        for source in sources
    ]
    measures = plan.reader.measures() if isinstance(plan.reader, MeasuresDocuments) else {}
    if report:  # a pretokenizer that ReportsCounting said something (MIDI: augmented copies)
        measures["counting"] = dict(sorted(report.items()))
    return Counts(counting_config(plan.settings), plan.alphabet_size, chunks, inputs, measures)


def counting_config(settings: Config) -> dict[str, Any]:
    """What decides the symbols a chunk is counted as: counts merge only when this is equal."""
    whole = settings.to_dict()
    return {"normalizer": whole["normalizer"], "pretokenizer": whole["pretokenizer"]}


def input_config(settings: Config) -> dict[str, Any]:
    """How the input was read (recorded with each counted file)."""
    recorded = dict(settings.to_dict()["input"])
    del recorded["paths"]
    return recorded


# counting on a Dask worker: the task the dask runner submits, by name --------------------------

_worker_plans: dict[str, Plan] = {}


def count_task(config: str, task: dask.Task) -> tuple[Counts, str]:
    """Count one task's input as a local run would; returns the counts and the reader's warnings.
    The plan is built once per worker process, with a fresh reader per task."""
    plan = _worker_plans.get(config)
    if plan is None:
        plan = _worker_plans[config] = make_plan(json.loads(config), None, None, need_paths=False)
    documents, reader = _read_task(plan, task)
    plan = replace(plan, reader=reader)
    warnings = io.StringIO()
    with contextlib.redirect_stderr(warnings):
        counts = count_documents(plan, documents, 1, False, None)
    return counts, warnings.getvalue()


def _read_task(plan: Plan, task: dask.Task) -> tuple[Iterable[Any], Reader]:
    """A task's documents, and the fresh reader reading them (its sources are the task's alone)."""
    reader = registry().reader(plan.settings.input.reader, plan.settings.input.options)
    if task.step:
        assert isinstance(reader, ReadsRanges)  # only such readers' files are split into ranges
        return reader.range_documents(task.paths[0], task.start, task.step, plan.pretokenizer.safe_cut), reader
    return reader.documents(list(task.paths)), reader


# internals --------------------------------------------------------------------------------------


def _runner(settings: Config, runner: RunnerConfig | dict[str, Any] | None, workers: int | None) -> RunnerConfig:
    """The runner to use: given, else the config's; `workers` overrides its worker count."""
    if runner is None:
        chosen = settings.runner
    elif isinstance(runner, dict):
        chosen = parse_runner(runner, "runner")
    else:
        chosen = runner
    return chosen if workers is None else replace(chosen, workers=workers)


def _count(plan: Plan, runner: RunnerConfig, progress: bool | None) -> Counts:
    if runner.kind == "dask":
        if plan.settings.input.sample is not None:
            raise BpeError(
                f"{plan.settings.origin}: input.sample is not available with runner kind dask "
                "(its sample would differ from a local run's); count all of a subset of the files instead"
            )
        components = [("pretokenizer", plan.settings.pretokenizer.name), ("reader", plan.settings.input.reader)]
        components += [("normalizer", item.name) for item in plan.settings.normalizers]
        return dask.count_on_dask(
            plan.settings.to_dict(), plan.reader, plan.paths, runner, progress, count_task, components
        )
    fraction = _sample_fraction(plan)
    workers = runner.workers or default_workers()
    parts = _local_parts(plan, workers) if fraction is None else []
    if parts:
        prepare = partial(normalize, normalizers=plan.normalizers)
        read = partial(_read_task, plan)
        chunks, sources = count_packed_parts(parts, read, plan.pretokenizer, workers, progress, prepare)
        read_once = {source.path: source for source in sources}  # a file named twice is read twice, listed once
        files = dict.fromkeys(reader_files(plan.reader, plan.paths))
        return _counts(plan, chunks, [read_once[path] for path in files if path in read_once], None, Counter())
    return count_documents(plan, plan.reader.documents(plan.paths), workers, progress, fraction)


def _count_groups(plan: Plan, runner: RunnerConfig, progress: bool | None) -> tuple[Counts, ChunkGroups]:
    """`trainer.parity`: each group's training files and dev files counted apart, by the config's
    reader and pretokenizer, then joined into one table: a chunk's weight is its training count
    summed over the groups (what plain BPE, the warmup, counts), and the engine's `ChunkGroups`
    keeps its count in each group's training and dev files. The inputs listed are the training
    files'."""
    settings = plan.settings
    training, dev = parity_paths(settings)
    names = list(training)
    by_chunk: dict[bytes, dict[int, list[int]]] = {}  # chunk -> group -> [training count, dev count]
    inputs: list[dict[str, Any]] = []
    for kind, files in enumerate((training, dev)):
        for group, name in enumerate(names):
            reader = registry().reader(settings.input.reader, settings.input.options)
            counted = _count(replace(plan, paths=files[name], reader=reader), runner, progress)
            if kind == 0:
                inputs.extend(counted.inputs)
            for key, times in counted.chunks.items():
                by_chunk.setdefault(key, {}).setdefault(group, [0, 0])[kind] += times
    chunks = {key: sum(weights[0] for weights in by_group.values()) for key, by_group in by_chunk.items()}
    entries = [
        [value for group, weights in sorted(by_group.items()) for value in (group, *weights)]
        for by_group in by_chunk.values()
    ]
    del by_chunk
    parity = settings.trainer.parity
    assert parity is not None  # only called with trainer.parity
    groups = ChunkGroups(len(names), entries, parity.warmup_merges, parity.window or 0)
    return Counts(counting_config(settings), plan.alphabet_size, chunks, inputs, {}), groups


def _local_parts(plan: Plan, workers: int) -> list[dask.Task]:
    """The parts (byte ranges of large files, groups of small ones) that each process counts by
    reading them itself, as Dask tasks do: for packed chunks of at least LOCAL_PARTS_BYTES of
    files that the reader can split, in more than one process. None otherwise (standard input
    among the paths, say): the input is then streamed through this process."""
    reader = plan.reader
    if workers <= 1 or not isinstance(plan.pretokenizer, CountsPacked) or not isinstance(reader, ReadsRanges):
        return []
    if "-" in plan.paths:
        return []
    total = sum(map(os.path.getsize, reader_files(reader, plan.paths)))
    return dask.plan_tasks(reader, plan.paths, total, workers, absolute=False) if total >= LOCAL_PARTS_BYTES else []


def _sample_fraction(plan: Plan) -> float | None:
    sample = plan.settings.input.sample
    if sample is None:
        return None
    if sample.fraction is not None:
        return sample.fraction
    assert sample.bytes is not None
    return _budget_fraction(plan, sample.bytes)


def _budget_fraction(plan: Plan, budget: int) -> float:
    """The fraction of the input that makes about `budget` bytes (one extra reading pass)."""
    total = 0
    reader = registry().reader(plan.settings.input.reader, plan.settings.input.options)
    for piece in pieces(reader.documents(plan.paths), plan.pretokenizer):
        total += len(piece.encode("utf-8", "surrogatepass")) if isinstance(piece, str) else piece_size(piece)
    return 1.0 if total <= budget else budget / total


def _train_from(
    plan: Plan,
    counts: Counts,
    progress: bool | None,
    started: float,
    base: Tokenizer | None = None,
    groups: ChunkGroups | None = None,
) -> Tokenizer:
    settings = plan.settings
    pretokenizer = plan.pretokenizer
    alphabet_size = plan.alphabet_size
    num_merges = plan.num_merges
    plugins = registry()
    width = counts.width
    if not any(counts.chunks):  # no chunk, or only empty ones: a tokenizer without merges is no result
        read = [item["path"] for item in counts.inputs] or plan.paths
        shown = ", ".join(read[:5]) + (f" and {len(read) - 5} more" if len(read) > 5 else "")
        raise BpeError(f"nothing to train on: {shown or 'the input'} holds no chunks (empty, or only what is skipped)")
    # one byte per symbol: the packed keys are the ids already (no list of ints for a genome)
    chunk_symbols: list[Sequence[int]] = (
        list(counts.chunks) if width == 1 else [unpack(key, width) for key in counts.chunks]
    )
    weights = list(counts.chunks.values())
    residue = settings.trainer.residue
    make_trainer: Callable[..., Trainer] = Trainer if residue is None else partial(PickyTrainer, threshold=residue)
    trainer = make_trainer(
        alphabet_size,
        chunk_symbols,
        weights,
        alphabet_size + num_merges,
        settings.trainer.max_token_length or 0,
        TIE_RULES.index(settings.trainer.tie_break),
        # tie_break hf: Hugging Face numbers the alphabet in code point order of its labels
        sorted(range(alphabet_size), key=pretokenizer.alphabet().__getitem__),
        symbol_mirror(pretokenizer),
        groups,
    )
    symbol_count = sum(map(operator.mul, map(len, chunk_symbols), weights))  # no Python frame per chunk
    del chunk_symbols
    replayed = len(base.spec.internal_merges) if base is not None else 0
    if base is not None:
        # the base's merges stay, even those trainer.forbid forbids
        trainer.replay(list(base.spec.internal_merges), settings.trainer.min_frequency)
    forbid = settings.trainer.forbid
    veto = TokenVeto(forbid, pretokenizer.alphabet(), pretokenizer.byte_level, trainer.merges) if forbid else None
    with progress_bars.bar(progress, "merging", total=num_merges - replayed, unit="merge") as bar:

        def advance(done: int) -> None:
            bar.update(done - bar.n)

        trainer.run(num_merges - replayed, settings.trainer.min_frequency, advance, veto)
    usage = trainer.token_usage()
    layout = _continued_layout(base, alphabet_size + len(trainer.merges)) if base is not None else None
    unpadded = (
        max(layout.ids + list(layout.special_ids.values())) + 1
        if layout is not None
        else alphabet_size + len(trainer.merges) + len(settings.special_tokens.tokens)
    )
    multiple = settings.trainer.pad_to_multiple_of or 1
    if plan.named_by_size:  # the size trained, padding included, not the one the config's name says
        settings = replace(settings, name=sized_name(settings.name, unpadded + -unpadded % multiple))
    fractions = {item.get("sampled_fraction") for item in counts.inputs}
    provenance = {
        "inputs": [{"path": item["path"], "size": item["size"], "sha256": item["sha256"]} for item in counts.inputs],
        "unique_chunks": len(weights) - weights.count(0),  # trainer.parity's dev-only chunks are not training input
        "chunks": sum(weights),
        "symbols": symbol_count,
        "tokens": sum(usage),
        "merges_learned": len(trainer.merges) - replayed,
        "sampled_fraction": fractions.pop() if len(fractions) == 1 else None,
        "seconds": round(time.perf_counter() - started, 3),
        **counts.measures,
    }
    if base is not None:
        provenance["base"] = {"name": base.name, "sha256": base_digest(base), "vocab_size": base.vocab_size}
        provenance["merges_from_base"] = replayed
    if isinstance(trainer, PickyTrainer):
        provenance["picky"] = trainer.summary()
    provenance["lineage"] = [*lineage(base), {"config": settings.to_dict(), "inputs": provenance["inputs"]}]
    used = {
        plugins.plugin_of("pretokenizer", settings.pretokenizer.name),
        plugins.plugin_of("reader", settings.input.reader),
    }
    used |= {plugins.plugin_of("normalizer", item.name) for item in settings.normalizers}
    spec = TokenizerSpec(
        name=settings.name,
        pretokenizer=ComponentConfig(pretokenizer.name, pretokenizer.options()),
        normalizers=settings.normalizers,
        internal_merges=trainer.merges,
        merge_counts=trainer.merge_counts,
        token_usage=usage,
        special_tokens=settings.special_tokens.tokens,
        special_position=settings.special_tokens.position,
        padding=-unpadded % multiple,
        layout=layout,
        config=settings.to_dict(),
        provenance=provenance,
        plugins={name: version for name, version in plugins.plugin_versions().items() if name in used},
    )
    return Tokenizer(spec, plugins)


def base_digest(base: Tokenizer) -> str:
    """The SHA-256 of the base tokenizer's file as `Tokenizer.save` writes it."""
    return hashlib.sha256(native.encoded(base)).hexdigest()


def lineage(base: Tokenizer | None) -> list[dict[str, Any]]:
    """The stages that made `base`: its recorded lineage, or its own making as the one stage
    (none for no base): an import (`{"import": {...}}`: the file, its format, the published
    vocabulary it is, its name and vocabulary size) or a training. Each stage that makes a
    tokenizer from another (continued training, a trim) appends its own entry to this list."""
    if base is None:
        return []
    recorded = base.provenance.get("lineage")
    if isinstance(recorded, list):
        return list(recorded)
    imported = base.provenance.get("imported_from")
    if isinstance(imported, dict):
        return [{"import": {**imported, "name": base.name, "vocab_size": base.vocab_size}}]
    return [{"config": base.config, "inputs": base.provenance.get("inputs", [])}]


def _continued_layout(base: Tokenizer, internal_count: int) -> IdLayout:
    """The base's ids for its own tokens and special tokens; the new merged tokens after its last id."""
    ids = list(base.layout.ids)
    ids += range(base.vocab_size, base.vocab_size + internal_count - len(ids))
    return IdLayout(ids, dict(base.special_ids))
