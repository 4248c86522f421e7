"""The `bpe` command line. Every failure on bad input is one `error: ...` line and exit status 2,
and no output file is created or truncated (outputs go to a temporary file, then a rename).

This module parses arguments and prints; the work happens in the library.
"""

import argparse
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import yaml

import bpe_core
from bpe_core import engine
from bpe_core.config import RunnerConfig
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, check_output
from bpe_core.shards import DTYPES, id_bytes

EXIT_BAD_INPUT = 2


def _version() -> str:
    mode = "compiled with mypyc" if engine.is_compiled() else "pure Python"
    return f"bpe-core {bpe_core.__version__} (engine: {mode})"


def _overrides(pairs: Sequence[str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BpeError(f"--set expects KEY=VALUE, got {pair!r}")
        try:
            overrides[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            overrides[key] = value
    return overrides


def _load(path: str) -> "bpe_core.Tokenizer":
    return bpe_core.load(path)


def _pipeline_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """--set, --strict and the runner options, as config overrides."""
    overrides = _overrides(args.set)
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
    tokenizer = bpe_core.train(
        args.config,
        args.files or None,
        _pipeline_overrides(args),
        workers=args.workers,
        progress=False if args.quiet else None,
        counts=args.from_counts or None,
    )
    output = args.output or tokenizer.config.get("output") or f"{tokenizer.name}.json"
    tokenizer.save(output)
    if not args.quiet:
        provenance = tokenizer.provenance
        print(
            f"trained {tokenizer.name}: vocab {tokenizer.vocab_size}, {provenance['merges_learned']} merges from "
            f"{provenance['unique_chunks']:,} unique chunks in {provenance['seconds']:.2f} s -> {output}",
            file=sys.stderr,
        )
    return 0


def _cmd_count(args: argparse.Namespace) -> int:
    from bpe_core.counts import load_counts, merge_all

    started = time.perf_counter()
    if args.merge:
        if args.config is not None:
            raise BpeError("--merge takes counts files only: give no config or input files")
        counts = merge_all((path, load_counts(path)) for path in args.merge)
    else:
        if args.config is None:
            raise BpeError("give a config (and input files), or --merge COUNTS...")
        counts = bpe_core.count(
            args.config, args.files or None, _pipeline_overrides(args), workers=args.workers, progress=False if args.quiet else None
        )
    counts.save(args.output)
    if not args.quiet:
        print(
            f"{len(counts.chunks):,} unique chunks ({counts.total():,} in all) from {len(counts.inputs)} input files "
            f"in {time.perf_counter() - started:.2f} s -> {args.output}",
            file=sys.stderr,
        )
    return 0


def _documents(tokenizer: "bpe_core.Tokenizer", files: list[str]) -> Iterator[Any]:
    from bpe_core.plugins import registry

    reader_name = str(tokenizer.config.get("input", {}).get("reader", "text"))
    recorded = {key: value for key, value in tokenizer.config.get("input", {}).items() if key not in ("reader", "paths", "sample")}
    reader = registry().reader(reader_name, recorded)
    return reader.documents(files or ["-"], strict=True)


def _runner(args: argparse.Namespace) -> RunnerConfig:
    from bpe_core.config import parse_runner

    return parse_runner({**_runner_choice(args), "workers": args.workers}, "command line")


def _shard_directory(args: argparse.Namespace) -> bool:
    """Whether -o names a directory of shards (an existing directory, or a path ending in /)."""
    output = args.output
    return output is not None and (os.path.isdir(output) or output.endswith(("/", os.sep)))


def _cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = _load(args.tokenizer)
    runner = _runner(args)
    shards = args.format == "bin" and _shard_directory(args)
    if runner.kind == "dask" and not shards:
        raise BpeError("runner dask writes one shard per input file: use --format bin -o DIR/")
    if args.format == "bin" and args.dtype == "uint16" and tokenizer.vocab_size > 65536:
        raise BpeError(f"--dtype uint16 holds ids below 65536, but the vocabulary has {tokenizer.vocab_size}; use uint32")
    eos_id: int | None = None
    if args.eos is not None:
        if args.eos not in tokenizer.special_ids:
            known = ", ".join(tokenizer.special_tokens) or "none"
            raise BpeError(f"--eos {args.eos!r} is not a special token of {args.tokenizer} (special tokens: {known})")
        eos_id = tokenizer.special_ids[args.eos]
    allowed: Any = "all" if args.allow_special else frozenset()
    disallowed: Any = () if args.ordinary else "all"
    from bpe_core import progress as progress_bars

    if shards:
        from bpe_core.shards import ShardOptions, encode_to_shards

        if not args.files:
            raise BpeError("shards are written per input file: name the input files")
        index = encode_to_shards(
            tokenizer,
            args.files,
            args.output,
            ShardOptions(args.dtype, eos_id, allowed, disallowed),
            runner,
            False if args.quiet else None,
        )
        if not args.quiet:
            print(
                f"{index['documents']:,} documents, {index['tokens']:,} tokens in {len(index['shards'])} shards "
                f"-> {os.path.join(args.output, 'index.json')}",
                file=sys.stderr,
            )
        return 0
    binary = args.format == "bin"
    with atomic_output(args.output, binary) as out, progress_bars.bar(
        False if args.quiet else None, "encoding", unit="doc"
    ) as bar:
        line_started = False  # text formats: one line per document, written piece by piece
        for ids, ends in tokenizer.encode_pieces(_documents(tokenizer, args.files), args.workers, allowed, disallowed):
            if ends and eos_id is not None:
                ids = [eos_id]
            if binary:
                out.write(id_bytes(ids, args.dtype))
            elif ids:
                show = str if args.format == "ids" else tokenizer.token_text
                out.write((" " if line_started else "") + " ".join(map(show, ids)))
                line_started = True
            if ends:
                if not binary:
                    out.write("\n")
                line_started = False
                bar.update(1)
    return 0


def _read_ids(args: argparse.Namespace) -> Iterator[tuple[int, list[int]]]:
    """(line number, ids) per document in an ids file (a bin file is one document)."""
    source = args.file or "-"
    if args.format == "bin":
        width = DTYPES[args.dtype]
        try:
            data = sys.stdin.buffer.read() if source == "-" else open(source, "rb").read()
        except OSError as error:
            raise BpeError(f"cannot read {source}: {error.strerror or error}") from error
        if len(data) % width:
            raise BpeError(f"{source}: {len(data)} bytes is not a whole number of {args.dtype} ids")
        yield 1, [int.from_bytes(data[index : index + width], "little") for index in range(0, len(data), width)]
        return
    try:
        handle = sys.stdin.buffer if source == "-" else open(source, "rb")
    except OSError as error:
        raise BpeError(f"cannot read {source}: {error.strerror or error}") from error
    with handle:
        for line_number, line in enumerate(handle, start=1):
            yield line_number, [_token_id(token, source, line_number) for token in line.split()]


# An id has at most this many digits: more is no id of any vocabulary (and Python refuses to
# convert over 4,300 digits), so such a token is echoed shortened.
_ID_DIGITS = 19


def _token_id(token: bytes, source: str, line_number: int) -> int:
    """One id of an ids file: ASCII digits only (no sign, no `_`, no other script's digits)."""
    if token.isdigit() and len(token) <= _ID_DIGITS:  # bytes.isdigit() is ASCII digits only
        return int(token)
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        raw = token if len(token) <= 40 else token[:20] + b"..." + token[-8:]
        raise BpeError(f"{source}, line {line_number}: {raw!r} is not a token id (the file is not UTF-8 text)") from None
    shown = repr(text if len(text) <= 40 else text[:20] + "..." + text[-8:])
    if token.isdigit():
        raise BpeError(f"{source}, line {line_number}: {shown} ({len(token)} digits) is too large for a token id")
    raise BpeError(f"{source}, line {line_number}: {shown} is not a token id (ids are ASCII digits 0-9)")


def _cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = _load(args.tokenizer)
    documents = []
    for line_number, ids in _read_ids(args):
        try:
            documents.append(tokenizer.decode(ids, errors=args.errors))
        except BpeError as error:
            raise BpeError(f"{args.file or '-'}, line {line_number}: {error}") from None
    if documents and not all(isinstance(document, str) for document in documents):
        # a domain's own file format (MIDI): one document per output file
        if args.output is None:
            raise BpeError(f"{args.tokenizer} decodes to {tokenizer.decoder.name} files: give -o OUT")
        if len(documents) > 1:
            raise BpeError(f"the input holds {len(documents)} documents; decode one per file (one line of ids)")
        tokenizer.decoder.write(documents[0], args.output)
        return 0
    # text is written exactly, adding nothing; other documents (DNA records) on lines of their own
    separator = "" if tokenizer.pretokenizer.byte_level else "\n"
    with atomic_output(args.output, binary=False) as out:
        out.write(separator.join(documents))
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    tokenizer = _load(args.tokenizer)
    show = tokenizer.token_text
    count = args.top
    print(f"name:          {tokenizer.name}")
    print(f"vocab size:    {tokenizer.vocab_size}")
    sample = " ".join(tokenizer.alphabet[:16]) + (" ..." if tokenizer.alphabet_size > 16 else "")
    print(f"alphabet:      {tokenizer.alphabet_size} base symbols: {sample}")
    print(f"merges:        {len(tokenizer.merges)}")
    specials = ", ".join(f"{token}={token_id}" for token, token_id in tokenizer.special_ids.items()) or "none"
    print(f"special:       {specials} (position {tokenizer.special_position})")
    options = tokenizer.pretokenizer.options()
    print(f"pretokenizer:  {tokenizer.pretokenizer.name}" + (f" {options}" if options else ""))
    if tokenizer.plugins:
        print("plugins:       " + ", ".join(f"{name} {version}" for name, version in tokenizer.plugins.items()))
    provenance = tokenizer.provenance
    if provenance:
        print(
            f"trained on:    {provenance.get('chunks', 0):,} chunks ({provenance.get('unique_chunks', 0):,} unique), "
            f"{provenance.get('symbols', 0):,} symbols, in {provenance.get('seconds', 0)} s"
        )
        unit = getattr(tokenizer.pretokenizer, "symbol_unit", "symbols")  # optional: what a base symbol is
        if provenance.get("tokens"):
            print(
                f"compression:   {provenance['symbols'] / provenance['tokens']:.2f} base symbols ({unit}) per token on the training data"
            )
        if provenance.get("tokens") and provenance.get("beats"):
            print(f"density:       {provenance['tokens'] / provenance['beats']:.2f} tokens per beat on the training data")
        for source in provenance.get("inputs", []):
            print(f"  {source['path']}  {source['size']:,} bytes  sha256 {source['sha256'][:16]}...")
    merged_ids = tokenizer.merged_ids()
    longest = sorted(merged_ids, key=lambda token: (-len(tokenizer.token_symbols(token)), token))[:count]
    print(f"longest tokens ({count}):")
    for token in longest:
        print(f"  {token:>7}  {len(tokenizer.token_symbols(token)):>5} symbols  {show(token)!r}")
    print(f"last learned ({count}):")
    for token in merged_ids[-count:]:
        print(f"  {token:>7}  {show(token)!r}")
    if tokenizer.token_usage:
        print(f"most used merged tokens on the training data ({count}):")
        for token, uses in tokenizer.most_used_tokens(count):
            print(f"  {token:>7}  used {uses:>8} times  {show(token)!r}")
    if tokenizer.merge_counts:
        rare = sorted(range(len(tokenizer.merge_counts)), key=lambda rank: (tokenizer.merge_counts[rank], rank))[:count]
        print(f"rarest in training ({count}; candidates for under-trained tokens):")
        for rank in rare:
            token = merged_ids[rank]
            print(f"  {token:>7}  seen {tokenizer.merge_counts[rank]:>6} times  {show(token)!r}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from bpe_core.pipeline import check_config

    summary = check_config(args.config, _overrides(args.set))
    print(f"ok: {args.config}: {summary}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    tokenizer = _load(args.tokenizer)
    if args.format == "hf":
        tokenizer.to_hf(args.output)
    else:
        tokenizer.to_tiktoken(args.output)
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    if args.format == "hf":
        tokenizer = bpe_core.from_hf(args.input)
    else:
        specials = {}
        for pair in args.special:
            token, sep, token_id = pair.rpartition("=")
            if not sep or not token or not token_id.isdigit():
                raise BpeError(f"--special expects TOKEN=ID, got {pair!r}")
            specials[token] = int(token_id)
        tokenizer = bpe_core.from_tiktoken(args.input, args.pattern, specials)
    tokenizer.save(args.output)
    unreachable = tokenizer.provenance.get("unreachable_tokens") or []
    if unreachable:
        print(f"note: {len(unreachable)} tokens no merge produces (kept for decoding): ids {unreachable[:10]}", file=sys.stderr)
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


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's error convention: one `error: ...` line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def _workers(value: str) -> int:
    """--workers of every command: a whole number of processes, at least 1."""
    if not (value.isascii() and value.isdigit()) or len(value) > 6 or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes, 1 or more; got {value[:40]!r}")
    return int(value)


def _check_output_path(args: argparse.Namespace) -> None:
    """Refuse an -o that cannot be written (a directory, a missing directory) before any work;
    a directory is the target only of `encode --format bin -o DIR/`."""
    output = getattr(args, "output", None)
    if output is None or (args.command == "encode" and args.format == "bin" and _shard_directory(args)):
        return
    check_output(output)


def _runner_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--runner", choices=("local", "dask"), help="where to run (default: the config's runner, else local)")
    command.add_argument("--address", metavar="tcp://HOST:PORT", help="Dask scheduler to submit to (implies --runner dask)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bpe", description="Train and apply byte-pair encoding to text, DNA and music.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    train = commands.add_parser("train", help="train a tokenizer from a YAML config")
    train.add_argument("config")
    train.add_argument("files", nargs="*", help="input files (replace input.paths)")
    train.add_argument("-o", "--output", help="tokenizer file to write (default: the config's output)")
    train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    train.add_argument("--workers", type=_workers, default=None, help="processes for counting (default: all cores)")
    train.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary")
    train.add_argument("--strict", action="store_true", help="an unreadable input file is an error (readers that skip)")
    train.add_argument("--from-counts", nargs="+", metavar="COUNTS", help="train from counts files (`bpe count`), read no input")
    _runner_options(train)
    train.set_defaults(run=_cmd_train)

    count = commands.add_parser("count", help="count the unique chunks of a corpus into a counts file")
    count.add_argument("config", nargs="?")
    count.add_argument("files", nargs="*", help="input files (replace input.paths)")
    count.add_argument("-o", "--output", required=True, help="counts file to write")
    count.add_argument("--merge", nargs="+", metavar="COUNTS", help="sum these counts files instead of counting")
    count.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    count.add_argument("--workers", type=_workers, default=None, help="processes (default: all cores)")
    count.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary")
    count.add_argument("--strict", action="store_true", help="an unreadable input file is an error (readers that skip)")
    _runner_options(count)
    count.set_defaults(run=_cmd_count)

    encode = commands.add_parser("encode", help="encode documents to ids")
    encode.add_argument("-t", "--tokenizer", required=True)
    encode.add_argument("files", nargs="*", help="input files, or - for standard input (the default)")
    encode.add_argument("--format", choices=("ids", "tokens", "bin"), default="ids")
    encode.add_argument("--dtype", choices=tuple(DTYPES), default="uint16", help="id width for --format bin")
    encode.add_argument("--eos", metavar="TOKEN", help="append this special token after each document")
    encode.add_argument(
        "-o", "--output", help="output file (default: standard output); with --format bin, DIR/ writes a shard per input"
    )
    encode.add_argument("--workers", type=_workers, default=None, help="processes (default: all cores)")
    _runner_options(encode)
    special = encode.add_mutually_exclusive_group()
    special.add_argument("--allow-special", action="store_true", help="special token strings in the text become special ids")
    special.add_argument("--ordinary", action="store_true", help="special token strings in the text are plain text")
    encode.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    encode.set_defaults(run=_cmd_encode)

    decode = commands.add_parser("decode", help="decode ids back to documents")
    decode.add_argument("-t", "--tokenizer", required=True)
    decode.add_argument("file", nargs="?", help="ids file (as `bpe encode` writes it), or - for standard input")
    decode.add_argument("--format", choices=("ids", "bin"), default="ids")
    decode.add_argument("--dtype", choices=tuple(DTYPES), default="uint16")
    decode.add_argument("-o", "--output", help="output file (default: standard output)")
    decode.add_argument(
        "--errors",
        choices=("replace", "strict"),
        default="replace",
        help="ids that make invalid UTF-8 (text): U+FFFD for each bad byte sequence, as tiktoken, or an error",
    )
    decode.set_defaults(run=_cmd_decode)

    inspect = commands.add_parser("inspect", help="describe a tokenizer file")
    inspect.add_argument("tokenizer")
    inspect.add_argument("--top", type=int, default=10, help="how many tokens to list per section")
    inspect.set_defaults(run=_cmd_inspect)

    validate = commands.add_parser("validate", help="check a config without training")
    validate.add_argument("config")
    validate.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    validate.set_defaults(run=_cmd_validate)

    export = commands.add_parser("export", help="write a tokenizer as Hugging Face tokenizer.json or .tiktoken")
    export.add_argument("-t", "--tokenizer", required=True)
    export.add_argument("--format", choices=("hf", "tiktoken"), required=True)
    export.add_argument("-o", "--output", required=True)
    export.set_defaults(run=_cmd_export)

    import_ = commands.add_parser("import", help="read a Hugging Face tokenizer.json or a .tiktoken file")
    import_.add_argument("input")
    import_.add_argument("--format", choices=("hf", "tiktoken"), required=True)
    import_.add_argument("-o", "--output", required=True, help="bpe-core tokenizer file to write")
    import_.add_argument("--pattern", default="cl100k", help="tiktoken: gpt2, cl100k, o200k or a regex")
    import_.add_argument("--special", action="append", default=[], metavar="TOKEN=ID", help="tiktoken: a special token")
    import_.set_defaults(run=_cmd_import)

    plugins = commands.add_parser("plugins", help="list installed plugins and their components")
    plugins.set_defaults(run=_cmd_plugins)

    demo = commands.add_parser("demo", help="train and show small tokenizers on samples shipped with bpe-core")
    demo.set_defaults(run=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_output_path(args)
        result: int = args.run(args)
        return result
    except BpeError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
