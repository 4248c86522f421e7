"""A config becomes a `Plan`: the config loaded and checked, its components built, its input
paths resolved; with a base tokenizer to continue from, `check_base` says whether training can.
This module reads no input and trains nothing (training.py does).
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bpe_core.config import Config, input_paths, load_config, parity_paths
from bpe_core.contract import Normalizer, Pretokenizer, Reader
from bpe_core.engine import mirror_tokens
from bpe_core.errors import BpeError, check_argument, path_argument
from bpe_core.plugins import registry
from bpe_core.strands import symbol_mirror
from bpe_core.tokenizer import Tokenizer

ConfigSource = str | os.PathLike[str] | dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """A validated config with its components built: everything training needs but the data."""

    settings: Config
    pretokenizer: Pretokenizer
    normalizers: list[Normalizer]
    reader: Reader
    paths: list[str]
    alphabet_size: int
    num_merges: int
    # the overrides changed trainer.vocab_size and left the name: the tokenizer is named after its size
    named_by_size: bool = False


def make_plan(
    config: ConfigSource,
    files: Sequence[str | os.PathLike[str]] | None = None,
    overrides: dict[str, Any] | None = None,
    need_paths: bool = True,
) -> Plan:
    """Load and check a config and build its components; a BpeError names the file and key."""
    if not isinstance(config, dict):
        path_argument(config, "config")
    if overrides is not None:
        check_argument(overrides, dict, "overrides", "a dict of dotted keys to values")
    settings = load_config(config, overrides)
    plugins = registry()
    try:
        pretokenizer = plugins.pretokenizer(settings.pretokenizer.name, settings.pretokenizer.options)
    except BpeError as error:
        raise BpeError(f"{settings.origin}: pretokenizer: {error}") from None
    try:
        reader = plugins.reader(settings.input.reader, settings.input.options)
    except BpeError as error:
        raise BpeError(f"{settings.origin}: input: {error}") from None
    normalizers = []
    for index, normalizer in enumerate(settings.normalizers):
        try:
            normalizers.append(plugins.normalizer(normalizer.name, normalizer.options))
        except BpeError as error:
            key = "normalizer" if len(settings.normalizers) == 1 else f"normalizer[{index}]"
            raise BpeError(f"{settings.origin}: {key}: {error}") from None
    if settings.trainer.residue is not None and symbol_mirror(pretokenizer) is not None:
        raise BpeError(
            f"{settings.origin}: trainer.residue: not with pretokenizer {pretokenizer.name!r}, which learns each "
            "merge with its mirror partner (reverse_complement: symmetric); a removal takes one token"
        )
    paths = _resolve_paths(settings, files)
    if settings.trainer.parity is not None:  # its groups' files replace input.paths
        if files:  # as documents and counts are refused
            raise BpeError(
                f"{settings.origin}: trainer.parity: training by group reads each group's files "
                f"(trainer.parity.groups); give no files ({paths[0]}"
                + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")
                + ")"
            )
        paths = [path for group in parity_paths(settings)[0].values() for path in group]
    if not paths and need_paths:
        raise BpeError(f"{settings.origin}: input.paths: no input files (give files or set input.paths)")
    alphabet_size = len(pretokenizer.alphabet())
    minimum = alphabet_size + len(settings.special_tokens.tokens)
    if settings.trainer.vocab_size < minimum:
        raise BpeError(
            f"{settings.origin}: trainer.vocab_size: {settings.trainer.vocab_size} is below the minimum {minimum} "
            f"({alphabet_size} base symbols + {len(settings.special_tokens.tokens)} special tokens)"
        )
    return Plan(
        settings,
        pretokenizer,
        normalizers,
        reader,
        paths,
        alphabet_size,
        settings.trainer.vocab_size - minimum,
        _resizes(overrides or {}),
    )


def _resizes(overrides: dict[str, Any]) -> bool:
    """Whether the overrides set the vocabulary size and not the name (`--set trainer.vocab_size=8192`
    of a config named `text-gpt2-32k`): the name the config gives would then say another size."""
    trainer = overrides.get("trainer")
    sized = "trainer.vocab_size" in overrides or (isinstance(trainer, dict) and "vocab_size" in trainer)
    return sized and "name" not in overrides


def check_base(plan: Plan, base: Tokenizer | None) -> None:
    """A BpeError naming the config key when training cannot continue from `base`: the alphabet,
    the normalizers and the special tokens must be the base's, and the vocabulary larger."""
    if base is None:
        return
    settings = plan.settings
    origin = settings.origin
    if plan.pretokenizer.alphabet() != base.alphabet:
        raise BpeError(
            f"{origin}: pretokenizer: {settings.pretokenizer.name!r} has another alphabet than the base tokenizer "
            f"{base.name!r} ({plan.alphabet_size} symbols, the base {base.alphabet_size}); continued training "
            "keeps the alphabet"
        )
    if settings.normalizers != base.spec.normalizers:
        shown = ", ".join(item.name for item in base.spec.normalizers) or "none"
        raise BpeError(f"{origin}: normalizer: the base tokenizer {base.name!r} normalizes with {shown}; keep that")
    if list(settings.special_tokens.tokens) != base.special_tokens or (
        base.special_tokens and settings.special_tokens.position != base.special_position
    ):
        raise BpeError(
            f"{origin}: special_tokens: the base tokenizer {base.name!r} has {base.special_tokens} at position "
            f"{base.special_position}; continued training keeps them (list the same)"
        )
    if not _made_by_merges(base):
        raise BpeError(
            f"the base tokenizer {base.name!r} is an imported vocabulary whose tokens are not all made by its "
            "merges, each merge a new token (continued training replays the merges); continue from a tokenizer "
            "whose vocabulary its merges make, as bpe-core's, cl100k_base's or o200k_base's"
        )
    limit = settings.trainer.max_token_length
    longest = max((len(base.token_symbols(token)) for token in base.merged_ids()), default=1)
    if limit is not None and longest > limit:
        raise BpeError(
            f"{origin}: trainer.max_token_length: {limit} is shorter than tokens of the base tokenizer {base.name!r} "
            f"(up to {longest} symbols); continued training keeps every base token, so allow at least {longest}"
        )
    mirror = symbol_mirror(plan.pretokenizer)
    if mirror is not None:
        try:
            mirror_tokens(mirror, plan.alphabet_size, list(base.spec.internal_merges))
        except ValueError as problem:
            raise BpeError(
                f"{origin}: pretokenizer: {settings.pretokenizer.name!r} learns merges with their mirror partners, "
                f"but the base tokenizer {base.name!r} was not trained so ({problem}); continue from a symmetric base"
            ) from None
    if plan.num_merges < len(base.spec.internal_merges):
        raise BpeError(
            f"{origin}: trainer.vocab_size: {settings.trainer.vocab_size} gives {plan.num_merges} merges, fewer than "
            f"the base tokenizer's {len(base.spec.internal_merges)}; continue to a larger vocabulary (or trim the base)"
        )


def _made_by_merges(base: Tokenizer) -> bool:
    """Whether every token of `base` is made by its merges, the k-th merge making the k-th new
    token, as training makes them: true of bpe-core's tokenizers, and of imports with no token
    that no merge makes and no merge that makes a token twice (tiktoken's cl100k_base and
    o200k_base, a `tokenizer.json` a BPE trainer wrote)."""
    if base.layout.orphans or base.layout.whole_chunks:
        return False
    results = base.spec.merge_results
    first = base.alphabet_size
    return results is None or list(results) == list(range(first, first + len(results)))


def _resolve_paths(config: Config, files: Sequence[str | os.PathLike[str]] | None) -> list[str]:
    if isinstance(files, (str, bytes, os.PathLike)):
        raise BpeError(f"files: one path, not a list of paths (give [{os.fsdecode(files)!r}])")
    if files is not None and not isinstance(files, Sequence):
        raise BpeError(
            f"files: a {type(files).__name__}, not a list of paths (to train on documents in memory, pass "
            "them as documents=)"
        )
    for index, path in enumerate(files or ()):
        if not isinstance(path, (str, os.PathLike)):
            raise BpeError(
                f"files[{index}]: a {type(path).__name__}, not a path (documents in memory go in documents=)"
            )
    if files:
        return [os.fspath(path) for path in files]
    return input_paths(config)
