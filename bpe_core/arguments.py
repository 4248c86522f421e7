"""The grammar of the `bpe` command line: its subcommands, their arguments and help. A usage error
is one `error: ...` line and exit status 2, as every other error of the command line.

This module only describes the grammar; `cli` runs the commands.
"""

import argparse
from typing import Any, NoReturn

from bpe_core.idfiles import DTYPES

EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's error convention: one `error: ...` line, exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # an option's prefix must not silently mean another option
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def workers(value: str) -> int:
    """--workers of every command: a whole number of processes, at least 1."""
    if not (value.isascii() and value.isdigit()) or len(value) > 6 or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes, 1 or more; got {value[:40]!r}")
    return int(value)


def whole_number(value: str) -> int:
    """A count or a size: a whole number, 0 or more."""
    if not (value.isascii() and value.isdigit()) or len(value) > 10:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more; got {value[:40]!r}")
    return int(value)


def share(value: str) -> float:
    """A share: a number from 0 to 1."""
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1; got {value[:40]!r}")
    return number


def positive(value: str) -> int:
    """A length: a whole number, 1 or more."""
    if not (value.isascii() and value.isdigit()) or len(value) > 10 or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number, 1 or more; got {value[:40]!r}")
    return int(value)


def augment_options(value: str) -> dict[str, float]:
    """`--augment KEY=VALUE,...`: numbers by key (whole numbers as int); the pretokenizer checks the keys."""
    options: dict[str, float] = {}
    for pair in value.split(","):
        key, sep, number = pair.strip().partition("=")
        try:
            options[key.strip()] = int(number) if number.strip().lstrip("+-").isdigit() else float(number)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected KEY=NUMBER,..., got {pair.strip()!r}") from None
        if not sep or not key.strip():
            raise argparse.ArgumentTypeError(f"expected KEY=NUMBER,..., got {pair.strip()!r}")
    return options


def trim_options_problem(args: argparse.Namespace) -> str:
    """What is wrong with `bpe trim`'s options taken together, or "" (each alone argparse checks)."""
    if args.min_count is not None and not args.on:
        return "--min-count needs --on FILES: the files whose encoding counts how often each token is made"
    if args.residue and not args.on:
        return "--residue needs --on FILES: the files whose encoding tells residue tokens"
    if args.on and args.min_count is None and not args.residue:
        return "--on FILES is what --min-count and --residue count on: give --min-count C or --residue too"
    if args.threshold is not None and not args.residue:
        return "--threshold R is for --residue: give --residue too"
    if args.vocab_size is None and not args.drop and args.min_count is None and not args.residue:
        return "nothing to trim: give --vocab-size N, --drop ID|TOKEN ..., --min-count C or --residue"
    return ""


def runner_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--runner", choices=("local", "dask"), help="where to run (default: the config's runner, else local)"
    )
    command.add_argument(
        "--address", metavar="tcp://HOST:PORT", help="Dask scheduler to submit to (implies --runner dask)"
    )


def build_parser(version: str) -> argparse.ArgumentParser:
    """The whole grammar of `bpe`: each subcommand's name is `args.command`."""
    parser = Parser(prog="bpe", description="Train and apply byte-pair encoding to text, DNA and music.")
    parser.add_argument("--version", action="version", version=version)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    train = commands.add_parser("train", help="train a tokenizer from a YAML config")
    train.add_argument("config")
    train.add_argument("files", nargs="*", help="input files (replace input.paths)")
    train.add_argument("-o", "--output", help="tokenizer file to write (default: the config's output)")
    train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    train.add_argument("--workers", type=workers, default=None, help="processes for counting (default: all cores)")
    train.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary")
    train.add_argument("--strict", action="store_true", help="an unreadable input file is an error (readers that skip)")
    train.add_argument(
        "--from-counts", nargs="+", metavar="COUNTS", help="train from counts files (`bpe count`), read no input"
    )
    train.add_argument(
        "--from",
        dest="base",
        metavar="BASE",
        help="continue training from this tokenizer file: its ids stay, new merges get the ids after its last",
    )
    train.add_argument(
        "--name",
        help="the tokenizer's name (default: the config's; with --set trainer.vocab_size, its size in place of "
        "the one the config's name ends with)",
    )
    runner_options(train)

    count = commands.add_parser("count", help="count the unique chunks of a corpus into a counts file")
    count.add_argument("config", nargs="?")
    count.add_argument("files", nargs="*", help="input files (replace input.paths)")
    count.add_argument("-o", "--output", required=True, help="counts file to write")
    count.add_argument("--merge", nargs="+", metavar="COUNTS", help="sum these counts files instead of counting")
    count.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    count.add_argument("--workers", type=workers, default=None, help="processes (default: all cores)")
    count.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary")
    count.add_argument("--strict", action="store_true", help="an unreadable input file is an error (readers that skip)")
    runner_options(count)

    encode = commands.add_parser("encode", help="encode documents to ids")
    encode.add_argument("-t", "--tokenizer", required=True)
    encode.add_argument("files", nargs="*", help="input files, or - for standard input (the default)")
    encode.add_argument(
        "--format", choices=("ids", "tokens", "bin"), help="default: bin for -o FILE.bin or DIR/, else ids"
    )
    encode.add_argument(
        "--dtype",
        choices=tuple(DTYPES),
        help="id width for --format bin (default: uint16 if the vocabulary fits, else uint32)",
    )
    encode.add_argument("--eos", metavar="TOKEN", help="append this special token after each document")
    encode.add_argument(
        "--bos", metavar="TOKEN", help="put this special token at the start of each document (and each window)"
    )
    encode.add_argument(
        "--augment",
        type=augment_options,
        metavar="KEY=VALUE,...",
        help="also write augmented copies of each document, named in the index (MIDI: pitch=K,velocity=V,duration=D "
        "as the training option augment takes them)",
    )
    encode.add_argument(
        "--strict",
        action="store_true",
        help="a document that encoding loses part of (MIDI notes outside the pitch range) is an error, not a warning",
    )
    encode.add_argument(
        "--max-length",
        type=positive,
        metavar="N",
        help="cut each document into windows of at most N tokens (the --bos and --eos tokens included), each one a "
        "document, "
        "starting at bar lines for MIDI (else beat lines, chunk boundaries, anywhere: the cuts are reported)",
    )
    encode.add_argument(
        "-o",
        "--output",
        help="output file (default: standard output); with --format bin, DIR/ writes a shard per input",
    )
    encode.add_argument("--workers", type=workers, default=None, help="processes (default: all cores)")
    runner_options(encode)
    special = encode.add_mutually_exclusive_group()
    special.add_argument(
        "--allow-special", action="store_true", help="special token strings in the text become special ids"
    )
    special.add_argument("--ordinary", action="store_true", help="special token strings in the text are plain text")
    encode.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    encode.add_argument(
        "--names", action="store_true", help="ids, tokens: a first column NAME<TAB> with each record's id (FASTA/FASTQ)"
    )
    encode.add_argument(
        "--keep-description",
        action="store_true",
        help="with --names or shards: name each record by its whole header (id and description), which "
        "decoding to FASTA writes back",
    )

    decode = commands.add_parser("decode", help="decode ids back to documents")
    decode.add_argument("-t", "--tokenizer", required=True)
    decode.add_argument(
        "file", nargs="?", help="ids file (as `bpe encode` writes it), a shard directory, or - for standard input"
    )
    decode.add_argument("--format", choices=("ids", "bin"), help="default: bin for FILE.bin, else ids")
    decode.add_argument(
        "--dtype",
        choices=tuple(DTYPES),
        help="default: the shard index's dtype, else uint16 if the vocabulary fits, else uint32",
    )
    decode.add_argument(
        "-o",
        "--output",
        help="output file (default: standard output); DNA: x.fa (.fasta, .fna, .gz) writes FASTA records",
    )
    decode.add_argument(
        "--errors",
        choices=("replace", "strict"),
        default="replace",
        help="ids that make invalid UTF-8 (text): U+FFFD for each bad byte sequence, as tiktoken, or an error",
    )
    decode.add_argument(
        "--force",
        action="store_true",
        help="decode even if the shard index or --names header says another tokenizer made the ids",
    )

    inspect = commands.add_parser("inspect", help="describe a tokenizer file")
    inspect.add_argument("tokenizer", nargs="?", help="tokenizer file (or -t TOKENIZER)")
    inspect.add_argument("-t", "--tokenizer", dest="tokenizer_option", metavar="TOKENIZER", help="tokenizer file")
    inspect.add_argument("--top", type=int, default=10, help="how many tokens (and input files) to list per section")
    inspect.add_argument(
        "--on", nargs="+", metavar="FILE", help="also encode these files and report the compression on them"
    )
    inspect.add_argument("--workers", type=int, default=None, help="processes for --on (default: all cores)")
    inspect.add_argument(
        "--html",
        metavar="OUT.html",
        help="write a self-contained page instead: the sample (the first document of --on, or the package's sample "
        "for the domain) cut into tokens, and charts",
    )
    inspect.add_argument(
        "--compare", metavar="OTHER", help="with --html: cut the sample with this tokenizer too, side by side"
    )

    trim = commands.add_parser("trim", help="drop merged tokens from a tokenizer and renumber its ids compactly")
    trim.add_argument("tokenizer", nargs="?", help="tokenizer file (or -t TOKENIZER)")
    trim.add_argument("-t", "--tokenizer", dest="tokenizer_option", metavar="TOKENIZER", help="tokenizer file")
    trim.add_argument("-o", "--output", required=True, help="trimmed tokenizer file to write")
    trim.add_argument(
        "--vocab-size",
        type=whole_number,
        metavar="N",
        help="drop the last-learned merges until there are at most N ids",
    )
    trim.add_argument(
        "--drop",
        nargs="+",
        action="extend",
        default=[],
        metavar="ID|TOKEN",
        help="drop these merged tokens (an id, or the text `--format tokens` shows) and every merge built on them",
    )
    trim.add_argument(
        "--min-count",
        type=whole_number,
        metavar="C",
        help="drop the merged tokens that encoding the --on files makes fewer than C times",
    )
    trim.add_argument(
        "--residue",
        action="store_true",
        help="remove the residue tokens of encoding the --on files (given alone in fewer than --threshold of the "
        "times they are made), keeping every longer token",
    )
    trim.add_argument(
        "--threshold",
        type=share,
        metavar="R",
        help="with --residue: the share of makings given alone below which a token is residue (default 0.1)",
    )
    trim.add_argument("--on", nargs="+", metavar="FILE", help="the files --min-count and --residue count on")
    trim.add_argument("--map", metavar="MAP.tsv", help="write old_id<TAB>new_id for every id kept, in new-id order")
    trim.add_argument(
        "--pad-to-multiple-of",
        type=whole_number,
        metavar="M",
        help="reserve ids after all others so the vocabulary is a multiple of M (default: no reserved ids)",
    )
    trim.add_argument("--workers", type=workers, default=None, help="processes for --on (default: all cores)")
    trim.add_argument("-q", "--quiet", action="store_true", help="do not list what went")

    evaluate = commands.add_parser(
        "eval", help="measure tokenizers on files: compression, tokens per word, Rényi efficiency, parity, unused ids"
    )
    evaluate.add_argument(
        "tokenizers", nargs="+", metavar="TOK", help="tokenizer files (ours, tokenizer.json, .tiktoken)"
    )
    evaluate.add_argument("--on", nargs="+", action="extend", default=[], metavar="FILE", help="inputs, a row each")
    evaluate.add_argument(
        "--groups",
        nargs="+",
        action="extend",
        default=[],
        metavar="NAME=PATH|GROUPS.yaml",
        help="named groups of files, globs or directories (a name given twice gathers its paths), or a YAML/JSON "
        "file mapping names to paths: a row each, and the parity Gini across them",
    )
    evaluate.add_argument(
        "--parallel",
        action="store_true",
        help="the groups hold the same content (translations): a group's parity cost is its tokens, not tokens "
        "per symbol",
    )
    evaluate.add_argument(
        "--rare-below", type=positive, default=10, metavar="R", help="a token made fewer than R times is rare"
    )
    evaluate.add_argument(
        "--residue-threshold",
        type=float,
        default=0.1,
        metavar="R",
        help="a merged token given alone in fewer than R of the times it is made is residue (LiteToken's measure, "
        "as `bpe trim --residue`; counted in total, from a second encoding of the files)",
    )
    evaluate.add_argument("--json", metavar="OUT.json", help="write every number as JSON")
    evaluate.add_argument("--html", metavar="OUT.html", help="write a self-contained page of tables and charts")
    evaluate.add_argument("--workers", type=workers, default=None, help="processes (default: all cores)")
    evaluate.add_argument("-q", "--quiet", action="store_true", help="no progress bars")

    validate = commands.add_parser("validate", help="check a config without training")
    validate.add_argument("config")
    validate.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    validate.add_argument(
        "--from", dest="base", metavar="BASE", help="also check that training can continue from this tokenizer file"
    )

    export = commands.add_parser("export", help="write a tokenizer as Hugging Face tokenizer.json or .tiktoken")
    export.add_argument("-t", "--tokenizer", required=True)
    export.add_argument(
        "--format", choices=("hf", "tiktoken"), help="default: tiktoken for OUT.tiktoken, hf for OUT.json or DIR/"
    )
    export.add_argument("-o", "--output", required=True)
    export.add_argument(
        "--max-length",
        type=positive,
        metavar="N",
        help="hf: the longest input of the model, in tokens: transformers' model_max_length (default: the "
        "config's max_length, else none)",
    )

    import_ = commands.add_parser("import", help="read a Hugging Face tokenizer.json or a .tiktoken file")
    import_.add_argument("input")
    import_.add_argument(
        "--format", choices=("hf", "tiktoken"), help="default: tiktoken for .tiktoken(.gz), hf for .json"
    )
    import_.add_argument("-o", "--output", required=True, help="bpe-core tokenizer file to write")
    import_.add_argument(
        "--pattern",
        help="tiktoken: gpt2, cl100k, o200k, a published vocabulary's name (cl100k_base) or a regex "
        "(default: the published file's own; required for others)",
    )
    import_.add_argument(
        "--special",
        action="append",
        default=[],
        metavar="TOKEN=ID",
        help="tiktoken: a special token (adds to a published file's)",
    )
    import_.add_argument("-q", "--quiet", action="store_true", help="no summary")

    commands.add_parser("plugins", help="list installed plugins and their components")

    commands.add_parser("demo", help="train and show small tokenizers on samples shipped with bpe-core")
    return parser
