"""The `bpe` command line. Every failure on bad input is one `error: ...` line and exit status 2.

This module parses arguments and prints; the work happens in the library.
"""

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import yaml

import bpe_core
from bpe_core import engine
from bpe_core.errors import BpeError

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


def _cmd_train(args: argparse.Namespace) -> int:
    tokenizer = bpe_core.train(
        args.config, args.files or None, _overrides(args.set), workers=args.workers, progress=False if args.quiet else None
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


def _cmd_plugins(args: argparse.Namespace) -> int:
    from bpe_core.plugins import registry

    for info in registry().plugins():
        print(f"{info.name} ({info.distribution} {info.version}, module {info.module})")
        for kind, names in info.components.items():
            if names:
                print(f"  {kind}s: {', '.join(names)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bpe", description="Train and apply byte-pair encoding to text, DNA and music.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train a tokenizer from a YAML config")
    train.add_argument("config")
    train.add_argument("files", nargs="*", help="input files (replace input.paths)")
    train.add_argument("-o", "--output", help="tokenizer file to write (default: the config's output)")
    train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    train.add_argument("--workers", type=int, default=None, help="processes for counting (default: all cores)")
    train.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary")
    train.set_defaults(run=_cmd_train)

    plugins = commands.add_parser("plugins", help="list installed plugins and their components")
    plugins.set_defaults(run=_cmd_plugins)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.run(args)
        return result
    except BpeError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
