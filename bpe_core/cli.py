"""The `bpe` command line. Every failure on bad input is one `error: ...` line and exit status 2,
and no output file is created or truncated (outputs go to a temporary file, then a rename).

This module parses arguments and prints; the work happens in the library. Each command imports
what it uses when it runs, so that `bpe --version` and `bpe --help` import almost nothing and a
command imports only its own work (encoding imports no YAML, no training, no inspect page).
"""

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import bpe_core
from bpe_core import pure_mode
from bpe_core.arguments import EXIT_BAD_INPUT, build_parser, trim_options_problem
from bpe_core.errors import BpeError, failure_cause, machine_failure, machine_ran_out
from bpe_core.streams import (
    end_now_if_work_remains,
    end_on_thread_failure,
    failed,
    flush_standard_output,
    guard_standard_streams,
    silence_standard_output,
    thread_failure,
)

if TYPE_CHECKING:
    from bpe_core.config import RunnerConfig
    from bpe_core.tokenizer import Tokenizer


def _version() -> str:
    # whether the engine's compiled modules are the ones that load, asked without loading them
    mode = "pure Python" if pure_mode.pure else "compiled with mypyc"
    return f"bpe-core {bpe_core.__version__} (engine: {mode})"


def _overrides(pairs: Sequence[str]) -> dict[str, Any]:
    import yaml

    from bpe_core.config import yaml_value

    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BpeError(f"--set expects KEY=VALUE, got {pair!r}")
        try:
            overrides[key] = yaml_value(value)
        except yaml.YAMLError:
            overrides[key] = value
    return overrides


def _pipeline_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """--set, --strict and the runner options, as config overrides."""
    overrides = _overrides(args.set)
    if getattr(args, "name", None) is not None:  # bpe train --name
        overrides["name"] = args.name
    if args.strict:
        overrides["input.on_error"] = "error"
    overrides.update({f"runner.{key}": value for key, value in _runner_choice(args).items()})
    return overrides


def _runner_choice(args: argparse.Namespace) -> dict[str, Any]:
    """The runner keys --runner and --address set (none when neither is given)."""
    if args.address is not None:
        if args.runner == "local":
            raise BpeError("--address names a Dask scheduler: it needs --runner dask, not local")
        return {"kind": "dask", "address": args.address}
    if args.runner is not None:
        return {"kind": args.runner, "address": None}  # whatever address the config names
    return {}


def _cmd_train(args: argparse.Namespace) -> int:
    overrides = _pipeline_overrides(args)
    if not args.output:  # a config file's, checked before training
        from bpe_core.config import load_config, output_path

        output_path(load_config(args.config, overrides))
    tokenizer = bpe_core.train(
        args.config,
        args.files or None,
        overrides,
        workers=args.workers,
        progress=False if args.quiet else None,
        counts=args.from_counts or None,
        base=bpe_core.load(args.base) if args.base else None,
    )
    output = args.output or tokenizer.config.get("output") or f"{tokenizer.name}.json"
    overridden = _overrides(args.set)
    if not args.output and "output" not in overridden:
        if args.name is not None:
            output = f"{args.name}.json"
        elif "trainer.vocab_size" in overridden:
            output = _sized_output(output, tokenizer.vocab_size)
    tokenizer.save(output)
    if not args.quiet:
        provenance = tokenizer.provenance
        print(
            f"trained {tokenizer.name}: vocab {tokenizer.vocab_size}, {provenance['merges_learned']} merges from "
            f"{provenance['unique_chunks']:,} unique chunks in {provenance['seconds']:.2f} s -> {output}",
            file=sys.stderr,
        )
        if provenance.get("counting"):  # what the pretokenizer did while counting (MIDI: augmentation)
            said = ", ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in provenance["counting"].items())
            print(f"counting: {said}", file=sys.stderr)
    return 0


def _sized_output(path: str, vocab_size: int) -> str:
    """The config's output named after the vocabulary trained when --set changed its size:
    a trailing size in the name (-32k, -4096) is replaced, else the size is appended."""
    directory, name = os.path.split(path)
    stem, extension = os.path.splitext(name)
    return os.path.join(directory, f"{re.sub(r'-[0-9]+k?$', '', stem)}-{vocab_size}{extension or '.json'}")


def _cmd_count(args: argparse.Namespace) -> int:
    from bpe_core.counts import load_counts, sum_counts

    started = time.perf_counter()
    if args.merge:
        if args.config is not None:
            raise BpeError("--merge takes counts files only: give no config or input files")
        counts = sum_counts((path, load_counts(path)) for path in args.merge)
    else:
        if args.config is None:
            raise BpeError("give a config (and input files), or --merge COUNTS...")
        counts = bpe_core.count(
            args.config,
            args.files or None,
            _pipeline_overrides(args),
            workers=args.workers,
            progress=False if args.quiet else None,
        )
    counts.save(args.output)
    if not args.quiet:
        print(
            f"{len(counts.chunks):,} unique chunks ({counts.total():,} in all) from {len(counts.inputs)} input files "
            f"in {time.perf_counter() - started:.2f} s -> {args.output}",
            file=sys.stderr,
        )
    return 0


def _runner(args: argparse.Namespace) -> "RunnerConfig":
    from bpe_core.config import parse_runner

    return parse_runner({**_runner_choice(args), "workers": args.workers}, "command line")


def _shard_directory(args: argparse.Namespace) -> bool:
    """Whether -o names a directory of shards (an existing directory, or a path ending in /)."""
    from bpe_core.formats.suffixes import is_directory_name

    return args.output is not None and is_directory_name(args.output)


def _cmd_encode(args: argparse.Namespace) -> int:
    from bpe_core import progress as progress_bars
    from bpe_core.contract import reader_suffixes
    from bpe_core.corpus.shards import IdsFormat, ShardOptions, encode_to_shards, write_ids
    from bpe_core.corpus.streaming import check_augment, corpus_reader, prepared_documents
    from bpe_core.files import atomic_output, expand_paths
    from bpe_core.formats.suffixes import ids_format
    from bpe_core.idfiles import check_dtype, narrowest_dtype

    tokenizer = bpe_core.load(args.tokenizer)
    runner = _runner(args)
    args.format = args.format or ids_format(args.output) or "ids"
    args.dtype = args.dtype or narrowest_dtype(tokenizer.vocab_size)
    shards = args.format == "bin" and _shard_directory(args)
    if runner.kind == "dask" and not shards:
        raise BpeError("runner dask writes one shard per input file: use --format bin -o DIR/")
    if args.names and args.format == "bin":
        raise BpeError(
            "--names adds a column to --format ids or tokens; shards list the record names in DIR/index.json"
        )
    if args.format == "bin":
        check_dtype(args.dtype, tokenizer.vocab_size, "--dtype")
    check_augment(tokenizer.pretokenizer, args.augment)
    options = ShardOptions(
        args.dtype,
        _special_id(tokenizer, args, "eos"),
        "all" if args.allow_special else frozenset(),
        () if args.ordinary else "all",
        args.max_length,
        _special_id(tokenizer, args, "bos"),
        args.augment,
        args.strict,
    )
    if args.keep_description:
        from dataclasses import replace

        if not (args.names or shards):
            raise BpeError(
                "--keep-description keeps whole headers where record names are written: add --names, "
                "or write shards (--format bin -o DIR/)"
            )
        options = replace(options, keep_description=True)
    progress = False if args.quiet else None
    if shards:
        if not args.files:
            raise BpeError("shards are written per input file: name the input files")
        index = encode_to_shards(tokenizer, args.files, args.output, options, runner, progress)
        if not args.quiet:
            if "windows" in index:
                from bpe_core.corpus.training_windows import summary_line

                print(summary_line(index["windows"]), file=sys.stderr)
            print(
                f"{index['documents']:,} documents, {index['tokens']:,} tokens in {len(index['shards'])} shards "
                f"-> {os.path.join(args.output, 'index.json')}",
                file=sys.stderr,
            )
        return 0
    reader = corpus_reader(tokenizer)
    inputs = args.files or ["-"]
    written = IdsFormat(args.format, args.names)
    with (
        atomic_output(args.output, args.format == "bin") as out,
        progress_bars.input_bar(progress, "encoding", expand_paths(inputs, reader_suffixes(reader))) as bar,
    ):
        if args.names:  # which tokenizer made the ids, for `bpe decode` to check
            from functools import partial

            from bpe_core.fingerprint import tokenizer_digest
            from bpe_core.idfiles import TokenizerMark, ids_header

            made_by = TokenizerMark(tokenizer.name, tokenizer.vocab_size, partial(tokenizer_digest, tokenizer))
            out.write(ids_header(made_by))
        read = progress_bars.metered(reader.documents(inputs, strict=True), bar)
        read = prepared_documents(tokenizer.pretokenizer, read, args.augment, args.strict)
        windows = None
        if args.max_length is not None:
            from bpe_core.corpus.training_windows import WindowReport

            windows = WindowReport(args.max_length)
        documents, tokens, _ = write_ids(tokenizer, read, out, written, options, args.workers, bar, windows=windows)
    if windows is not None and not args.quiet:
        print(windows.line(), file=sys.stderr)
    if args.output not in (None, "-") and not args.quiet:
        print(f"{documents:,} documents, {tokens:,} tokens -> {args.output}", file=sys.stderr)
    return 0


def _special_id(tokenizer: "Tokenizer", args: argparse.Namespace, option: str) -> int | None:
    """The id of the special token `--eos`/`--bos` names, if given."""
    token = getattr(args, option)
    if token is None:
        return None
    if token not in tokenizer.special_ids:
        known = ", ".join(tokenizer.special_tokens) or "none"
        raise BpeError(f"--{option} {token!r} is not a special token of {args.tokenizer} (special tokens: {known})")
    return tokenizer.special_ids[token]


def _ids_documents(args: argparse.Namespace, tokenizer: "Tokenizer") -> Iterator[tuple[str, str | None, Sequence[int]]]:
    """(where, name, ids) per document of the decode input: a shard directory or an ids file;
    ids another tokenizer made are refused unless --force."""
    from functools import partial

    from bpe_core.fingerprint import tokenizer_digest
    from bpe_core.idfiles import TokenizerMark, documents_in

    reading = TokenizerMark(tokenizer.name, tokenizer.vocab_size, partial(tokenizer_digest, tokenizer))
    return documents_in(args.file, reading, args.format == "bin", args.dtype, args.force)


def _decoded_records(tokenizer: "Tokenizer", args: argparse.Namespace) -> Iterator[tuple[str, Any]]:
    """(name, sequence) per document for a records file (FASTA): the name from the shard index or
    the ids file, else the document's number; special tokens (an --eos marker) are left out."""
    specials = set(tokenizer.special_ids.values())
    for number, (where, name, ids) in enumerate(_ids_documents(args, tokenizer), start=1):
        if not specials.isdisjoint(ids):
            ids = [token for token in ids if token not in specials]
        try:
            yield name or str(number), tokenizer.decode(ids)
        except BpeError as error:
            raise BpeError(f"{where}: {error}") from None


def _decoded_documents(tokenizer: "Tokenizer", args: argparse.Namespace) -> Iterator[Any]:
    """Each document of the decode input, decoded, one at a time; an error names where it is."""
    for where, _, ids in _ids_documents(args, tokenizer):
        try:
            yield tokenizer.decode(ids, errors=args.errors)
        except BpeError as error:
            raise BpeError(f"{where}: {error}") from None


def _cmd_decode(args: argparse.Namespace) -> int:
    from bpe_core.contract import WritesRecords
    from bpe_core.files import atomic_output
    from bpe_core.formats.suffixes import ids_format, is_directory_name, shard_dtype
    from bpe_core.idfiles import narrowest_dtype

    tokenizer = bpe_core.load(args.tokenizer)
    args.format = args.format or ids_format(args.file) or "ids"
    if args.format == "bin" and args.dtype is None:
        # the width the shard index records for this file, else the narrowest that holds the vocabulary
        recorded = None
        if args.file not in (None, "-"):
            recorded = shard_dtype(args.file)
        args.dtype = recorded or narrowest_dtype(tokenizer.vocab_size)
    # an optional decoder ability: records files (DNA: FASTA), chosen by the output's suffix
    decoder = tokenizer.decoder
    if args.output is not None and isinstance(decoder, WritesRecords) and args.output.endswith(decoder.record_suffixes):
        decoder.write_records(_decoded_records(tokenizer, args), args.output)
        return 0
    if args.output is not None and is_directory_name(args.output):
        return _decode_to_files(tokenizer, args)
    documents = _decoded_documents(tokenizer, args)
    first = next(documents, None)
    if first is not None and not isinstance(first, str):
        # a domain's own file format (MIDI): one document per output file
        if args.output is None:
            raise BpeError(f"{args.tokenizer} decodes to {tokenizer.decoder.name} files: give -o OUT")
        more = sum(1 for _ in documents)
        if more:
            raise BpeError(
                f"the input holds {more + 1} documents; give -o DIR/ for one file per document, "
                "or decode one (one line of ids)"
            )
        tokenizer.decoder.write(first, args.output)
        return 0
    # text is written exactly, adding nothing; other documents (DNA records) on lines of their own;
    # each as it is decoded, so a shard directory of any size takes the memory of one document
    separator = "" if tokenizer.pretokenizer.byte_level else "\n"
    with atomic_output(args.output, binary=False) as out:
        if first is not None:
            out.write(first)
        for document in documents:
            out.write(separator)
            out.write(document)
    return 0


def _decode_to_files(tokenizer: "Tokenizer", args: argparse.Namespace) -> int:
    """`decode -o DIR/`: one file per document, DIR/000000.mid, ..., for a decoder of files (the
    `WritesFiles` ability), into a new or empty directory or one that holds only such files (a
    previous decode's, replaced whole: the new files are written beside it, then take its place)."""
    from bpe_core.contract import WritesFiles
    from bpe_core.files import staged_directory

    decoder = tokenizer.decoder
    output = args.output
    if not isinstance(decoder, WritesFiles):
        what = "it is a directory" if os.path.isdir(output) else "a name ending in / is a directory"
        raise BpeError(
            f"cannot write {output}: {what}; one file per document is for decoders of files (MIDI), "
            f"and {tokenizer.decoder.name!r} decodes to text: give a file name"
        )
    written = re.compile(r"\d{6,}" + re.escape(decoder.file_suffix))
    previous = sorted(os.listdir(output)) if os.path.isdir(output) else []
    stranger = next((entry for entry in previous if not written.fullmatch(entry)), None)
    if stranger is not None:
        raise BpeError(
            f"cannot write to {output}: it is a directory holding {stranger!r}, which no `bpe decode -o DIR/` "
            "wrote (give a new or empty directory)"
        )
    with staged_directory(output, output) as staging:
        for count, document in enumerate(_decoded_documents(tokenizer, args)):
            decoder.write(document, os.path.join(staging, f"{count:06d}{decoder.file_suffix}"))
    return 0


def _tokenizer_argument(args: argparse.Namespace) -> str:
    """The tokenizer of a command that takes it positionally or as -t (inspect, trim), given once."""
    if (args.tokenizer is None) == (args.tokenizer_option is None):
        command = f"bpe {args.command}"
        raise BpeError(f"give the tokenizer once: {command} TOKENIZER, or {command} -t TOKENIZER")
    return str(args.tokenizer or args.tokenizer_option)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from bpe_core.files import atomic_output, check_output
    from bpe_core.inspection import measure_each, summary_lines
    from bpe_core.visual.page import inspect_page

    path = _tokenizer_argument(args)
    tokenizer = bpe_core.load(path)
    if args.top < 0:
        raise BpeError(f"--top must be 0 or more, got {args.top}")
    if args.compare and not args.html:
        raise BpeError("--compare needs --html OUT.html: the comparison is drawn on the page")
    if args.html:
        check_output(args.html)
        compare = bpe_core.load(args.compare) if args.compare else None
        page = inspect_page(tokenizer, args.on or (), compare, args.workers)
        with atomic_output(args.html, binary=False) as out:
            out.write(page)
        if args.html != "-":  # the page itself went to standard output
            print(f"wrote {args.html} ({len(page.encode('utf-8')) / 1024:.0f} KiB)")
        return 0
    lines = summary_lines(tokenizer, args.top)
    if args.on:
        lines += measure_each(tokenizer, args.on, args.workers)
    print("\n".join(lines))
    return 0


def _cmd_trim(args: argparse.Namespace) -> int:
    from bpe_core.files import atomic_output, check_output
    from bpe_core.surgery import BEYOND_VOCAB_SIZE

    path = _tokenizer_argument(args)
    check_output(args.map)
    problem = trim_options_problem(args)
    if problem:
        raise BpeError(problem)
    tokenizer = bpe_core.load(path)
    # an argument of digits is an id; a token whose text is digits is named by its id
    drop: list[int | str] = [int(item) if item.isascii() and item.isdigit() else item for item in args.drop]
    trimmed, dropped, id_map = bpe_core.trim(
        tokenizer,
        vocab_size=args.vocab_size,
        drop=drop,
        min_count=args.min_count,
        on=args.on or (),
        pad_to_multiple_of=args.pad_to_multiple_of,
        residue=args.residue,
        threshold=args.threshold,
        workers=args.workers,
    )
    trimmed.save(args.output)
    if args.map:
        with atomic_output(args.map) as out:
            out.writelines(f"{old}\t{new}\n" for old, new in id_map.items())
    if args.quiet:
        return 0
    residue = trimmed.provenance["lineage"][-1]["trim"]["asked"].get("residue")
    found = f"; {residue['found']} residue found, {residue['kept_back']} kept for longer tokens" if residue else ""
    print(
        f"trimmed {path}: dropped {len(dropped)} merged tokens, vocab {tokenizer.vocab_size} -> {trimmed.vocab_size} "
        f"-> {args.output}{found}",
        file=sys.stderr,
    )
    beyond = [token for token, why in dropped.items() if why == BEYOND_VOCAB_SIZE]
    for token, why in dropped.items():
        if why != BEYOND_VOCAB_SIZE:
            print(f"  {token:>7}  {tokenizer.token_text(token)!r}  {why}", file=sys.stderr)
    if beyond:
        print(
            f"  and the {len(beyond)} last-learned (ids {beyond[0]} to {beyond[-1]}), beyond --vocab-size "
            f"{args.vocab_size}",
            file=sys.stderr,
        )
    if tokenizer.reserved_ids and args.pad_to_multiple_of is None:
        print(
            f"note: the {len(tokenizer.reserved_ids)} reserved padding ids of {path} are not kept "
            "(--pad-to-multiple-of M reserves ids again)",
            file=sys.stderr,
        )
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from bpe_core.evaluation import evaluate, groups_from, report_lines
    from bpe_core.files import atomic_output, check_output

    outputs = [path for path in (args.json, args.html) if path is not None]
    if outputs.count("-") > 1:
        raise BpeError("--json - and --html - cannot both go to standard output")
    for path in outputs:
        check_output(path)
    groups = groups_from(args.on, args.groups)
    tokenizers = [(path, bpe_core.load(path)) for path in args.tokenizers]
    results = evaluate(
        tokenizers,
        groups,
        rare_below=args.rare_below,
        residue_threshold=args.residue_threshold,
        parallel=args.parallel,
        workers=args.workers,
        progress=False if args.quiet else None,
    )
    if args.json:
        import json

        with atomic_output(args.json, binary=False) as out:
            out.write(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    if args.html:
        from bpe_core.visual.evaluation_page import evaluation_page

        with atomic_output(args.html, binary=False) as out:
            out.write(evaluation_page(results))
    if "-" not in outputs:  # else standard output holds the file
        print("\n".join(report_lines(results)))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from bpe_core.training import check_config

    summary = check_config(args.config, _overrides(args.set), base=bpe_core.load(args.base) if args.base else None)
    print(f"ok: {args.config}: {summary}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from bpe_core.formats.suffixes import export_format

    tokenizer = bpe_core.load(args.tokenizer)
    if (args.format or export_format(args.output)) == "hf":
        tokenizer.to_hf(args.output, max_length=args.max_length)
    else:
        if args.max_length is not None:
            raise BpeError("--max-length is the model_max_length of a Hugging Face export; tiktoken files have none")
        tokenizer.to_tiktoken(args.output)
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from bpe_core.formats.suffixes import import_format
    from bpe_core.formats.tiktoken import published_vocabulary, read_ranks

    if (args.format or import_format(args.input)) == "hf":
        tokenizer = bpe_core.from_hf(args.input)
    else:
        if args.pattern is None and published_vocabulary(args.input) is None:
            read_ranks(args.input)  # a malformed file is reported as that, not as a missing pattern
            raise BpeError(
                f"{args.input} is not a published tiktoken vocabulary (r50k_base, p50k_base, cl100k_base, o200k_base), "
                "so its pattern is unknown: pass --pattern gpt2|cl100k|o200k|REGEX"
            )
        specials = {}
        for pair in args.special:
            token, sep, token_id = pair.rpartition("=")
            if not sep or not token or not token_id.isdigit():
                raise BpeError(f"--special expects TOKEN=ID, got {pair!r}")
            specials[token] = int(token_id)
        tokenizer = bpe_core.from_tiktoken(args.input, args.pattern, specials)
    tokenizer.save(args.output)
    if not args.quiet:
        imported = tokenizer.provenance["imported_from"]
        what = f"published {imported['published']}, " if imported.get("published") else ""
        shown = f"{len(tokenizer.special_tokens)} special tokens" if tokenizer.special_tokens else "no special tokens"
        print(
            f"imported {args.input} ({what}pretokenizer {tokenizer.pretokenizer.name}, vocab {tokenizer.vocab_size}, "
            f"{shown}) -> {args.output}",
            file=sys.stderr,
        )
    unreachable = tokenizer.provenance.get("unreachable_tokens") or []
    if unreachable:
        print(
            f"note: {len(unreachable)} tokens no merge produces (kept for decoding): ids {unreachable[:10]}",
            file=sys.stderr,
        )
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    from bpe_core.plugins import registry

    for info in registry().plugins():
        print(f"{info.name} ({info.distribution} {info.version}, module {info.module})")
        for kind, names in info.components.items():
            if names:
                print(f"  {kind}s: {', '.join(names)}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from bpe_core.demo import run_demo

    run_demo()
    return 0


def _check_output_path(args: argparse.Namespace) -> None:
    """Refuse an -o that cannot be written (a directory, a missing directory) before any work.
    A directory is the target of `encode -o DIR/` (shards) and of a Hugging Face export (a folder,
    created with its parents, as the tiktoken export creates its file's folders)."""
    output = getattr(args, "output", None)
    if output is None:
        return
    from bpe_core.files import check_output
    from bpe_core.formats.suffixes import export_format, is_directory_name

    if args.command == "encode" and args.format in (None, "bin") and _shard_directory(args):
        return
    if args.command == "decode" and is_directory_name(output):
        return  # one file per document (MIDI); checked by the decoder
    if args.command == "export":
        if os.path.isdir(output) and (args.format or export_format(output)) == "tiktoken":
            raise BpeError(f"cannot write {output}: it is a directory (give a .tiktoken file name)")
        return
    check_output(output)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "train": _cmd_train,
    "count": _cmd_count,
    "encode": _cmd_encode,
    "decode": _cmd_decode,
    "inspect": _cmd_inspect,
    "trim": _cmd_trim,
    "eval": _cmd_eval,
    "validate": _cmd_validate,
    "export": _cmd_export,
    "import": _cmd_import,
    "plugins": _cmd_plugins,
    "demo": _cmd_demo,
}


def _files_read(args: argparse.Namespace) -> str:
    """The input files of the command, as an error message names them: " reading A, B, C and more"."""
    files = [str(path) for path in getattr(args, "files", None) or []]
    if not files:
        return ""
    more = " and more" if len(files) > 3 else ""
    return f" reading {', '.join(files[:3])}{more}"


def _doing(args: argparse.Namespace | None) -> str:
    """What the command was doing, for an error that names no file of its own: "bpe encode
    reading A, B, writing OUT"."""
    if args is None:
        return "bpe"
    output = getattr(args, "output", None)
    writing = f", writing {output}" if output not in (None, "-") else ""
    return f"bpe {args.command}{_files_read(args)}{writing}"


# a reader of standard output that left (`bpe encode ... | head`): the status a shell shows for a
# Unix tool that SIGPIPE ended, 128 + 13
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    status = _run_command(argv)
    if argv is None and status != 0:  # the `bpe` program itself, not a caller in this process
        end_now_if_work_remains(status)
    return status


def _run_command(argv: Sequence[str] | None) -> int:
    guard_standard_streams()
    end_on_thread_failure()
    args: argparse.Namespace | None = None
    try:
        args = build_parser(_version()).parse_args(argv)
        _check_output_path(args)
        status = COMMANDS[args.command](args)
        flush_standard_output()
        return status
    except BpeError as error:
        return failed(f"error: {error}", EXIT_BAD_INPUT)
    except MemoryError:  # an input too big for this machine: readers bound what they can, this is the rest
        reading = _files_read(args) if args is not None else ""
        return failed(
            f"error: out of memory{reading}: the input needs more memory than this process may use", EXIT_BAD_INPUT
        )
    except BrokenPipeError:  # quietly, as Unix tools end when the reader of their output leaves
        silence_standard_output()
        return EXIT_BROKEN_PIPE
    except OSError as error:  # the machine's (too many open files, no memory to start a worker), not the input's
        named = f"{error.filename}: " if error.filename else ""
        return failed(f"error: {_doing(args)}: {named}{failure_cause(error)}", EXIT_BAD_INPUT)
    except (RuntimeError, ImportError) as error:  # a thread or a compiled module that found no memory
        if not machine_ran_out(error):
            raise
        return failed(f"error: {_doing(args)}: {machine_failure(error)}", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        failure = thread_failure()
        if failure is not None:  # not Ctrl-C: a thread of ours failed and interrupted this one
            return failed(f"error: {_doing(args)}: {machine_failure(failure)}", EXIT_BAD_INPUT)
        return failed("error: interrupted", 130)
    except SystemExit:
        files = sys.modules.get("bpe_core.files")  # only what wrote files takes over SIGTERM (`--version` did not)
        if files is not None:
            files.end_if_terminated()  # by SIGTERM or SIGHUP: cleaned up, ends here without waiting for pools
        raise


if __name__ == "__main__":
    sys.exit(main())
