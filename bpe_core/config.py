"""Pipeline configuration: YAML (or a dict of the same shape) -> typed, frozen, validated objects.

Every error names the file, the dotted key path, the bad value and what is allowed, and suggests
the closest key for a misspelt one. The keys of the runner, trainer, special_tokens and
input.sample sections are the fields of their dataclasses, in the YAML and in `Config.to_dict`
alike. Component options (a pretokenizer's own keys) are checked by the component itself, not
here. This module does not run anything.

A config file names files (`input.paths`, `output`): they are data, not instructions, so each
must stay inside the config's directory (`files.contained_path`: no absolute path, no `..`, no
symbolic link out of it), and `output` inside the working directory, where it is written. Files
elsewhere are given on the command line (files, `-o`, or `--set input.paths=...`, `--set
output=...`: the user's own, not checked). A dict config is code, and its paths are not checked.
"""

import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from bpe_core.engine import TIE_RULES
from bpe_core.errors import BpeError
from bpe_core.files import contained_path
from bpe_core.spec import ComponentConfig

SPECIAL_POSITIONS = ("end", "start")
RUNNER_KINDS = ("local", "dask")
SIZE_SUFFIX = re.compile(r"-[0-9]+k?$")  # the size a name ends with: -32k, -4096
RANGE_BYTES = 64 << 20  # a large plain-text file is counted in ranges of about this size

# Bounds that keep a hostile config from asking for the impossible: ids stay below 2**31 (the
# vocabulary plus padding), counts and seeds in 64 bits, and YAML small and shallow enough to
# parse without recursion trouble.
MAX_VOCAB_SIZE = 1 << 30
MAX_PAD_MULTIPLE = 1 << 20
MAX_I64 = (1 << 63) - 1
MAX_WORKERS = 1024
MAX_RANGE_BYTES = 1 << 40
MAX_DEPTH = 64


@dataclass(frozen=True)
class SampleConfig:
    """Train on a seeded sample: a fraction of the input, or about `bytes` bytes of it."""

    fraction: float | None = None
    bytes: int | None = None
    seed: int = 0


@dataclass(frozen=True)
class InputConfig:
    reader: str = "text"
    paths: tuple[str, ...] = ()
    sample: SampleConfig | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ParityConfig:
    """Group-parity training (Parity-aware BPE): each group's training files and parallel dev
    files (the same content in every group), by group name, in the config's order."""

    groups: dict[str, tuple[str, ...]]
    dev: dict[str, tuple[str, ...]]
    warmup_merges: int = 0
    window: int | None = None


@dataclass(frozen=True)
class TrainerConfig:
    vocab_size: int = 32768
    min_frequency: int = 1
    max_token_length: int | None = None
    forbid: tuple[str, ...] = ()
    tie_break: str = "smallest"
    pad_to_multiple_of: int | None = None
    parity: ParityConfig | None = None
    residue: float | None = None  # Picky BPE's removal while training: R, tau = 1 - R


@dataclass(frozen=True)
class SpecialTokensConfig:
    tokens: tuple[str, ...] = ()
    position: str = "end"


@dataclass(frozen=True)
class RunnerConfig:
    """Where counting and encoding run: `local` forked processes, or a Dask cluster (the one at
    `address`, or a local one with `workers` processes started for the run)."""

    kind: str = "local"
    address: str | None = None
    workers: int | None = None
    range_bytes: int = RANGE_BYTES


@dataclass(frozen=True)
class Config:
    name: str
    input: InputConfig
    normalizers: tuple[ComponentConfig, ...]
    pretokenizer: ComponentConfig
    trainer: TrainerConfig
    special_tokens: SpecialTokensConfig
    output: str | None
    runner: RunnerConfig = RunnerConfig()
    origin: str = "<dict>"
    overridden: frozenset[str] = frozenset()  # the dotted keys set by overrides (--set), not by the file
    max_length: int | None = None  # the longest input of a model, in tokens: the HF export's model_max_length

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data, in the YAML shape (for tokenizer files). The runner is left
        out: it changes no result (docs/config.md)."""
        sample = self.input.sample
        sample_dict = None
        if sample is not None:
            sample_dict = _section_dict(sample)
            del sample_dict["bytes" if sample.fraction is not None else "fraction"]  # only the one given
        return {
            "name": self.name,
            "input": {
                "reader": self.input.reader,
                "paths": list(self.input.paths),
                "sample": sample_dict,
                **self.input.options,
            },
            "normalizer": [{"name": item.name, **item.options} for item in self.normalizers],
            "pretokenizer": {"name": self.pretokenizer.name, **self.pretokenizer.options},
            "trainer": _trainer_dict(self.trainer),
            "special_tokens": _section_dict(self.special_tokens),
            "output": self.output,
            "max_length": self.max_length,
        }


def _trainer_dict(trainer: TrainerConfig) -> dict[str, Any]:
    """The trainer section; `parity` and `residue` only when given (the configs written before them
    stay as they were)."""
    section = _section_dict(trainer)
    del section["parity"]
    if trainer.residue is None:
        del section["residue"]
    parity = trainer.parity
    if parity is not None:
        section["parity"] = {
            "groups": {name: list(paths) for name, paths in parity.groups.items()},
            "dev": {name: list(paths) for name, paths in parity.dev.items()},
            "warmup_merges": parity.warmup_merges,
            "window": parity.window,
        }
    return section


def _section_dict(section: SampleConfig | TrainerConfig | SpecialTokensConfig) -> dict[str, Any]:
    """A section's fields as YAML data, in field order; tuples become lists."""
    return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(section).items()}


# The keys each section allows, in the order errors list them. The top level is written out: its
# YAML keys are not the field names (`normalizer` holds `normalizers`; `origin` is no key).
SECTIONS: dict[str, tuple[str, ...]] = {
    "": ("name", "input", "normalizer", "pretokenizer", "trainer", "special_tokens", "output", "max_length", "runner"),
    "runner": tuple(item.name for item in fields(RunnerConfig)),
    "trainer": tuple(item.name for item in fields(TrainerConfig)),
    "special_tokens": tuple(item.name for item in fields(SpecialTokensConfig)),
    "input.sample": tuple(item.name for item in fields(SampleConfig)),
    "trainer.parity": tuple(item.name for item in fields(ParityConfig)),
}


class _Checker:
    """Reads values out of the raw mapping, raising errors that name the origin and key path."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def fail(self, key: str, message: str) -> BpeError:
        return BpeError(f"{self.origin}: {key}: {message}")

    def mapping(self, raw: Any, key: str) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise self.fail(key or "top level", f"expected a mapping of keys, got {type(raw).__name__} {_short(raw)}")
        return raw

    def only_keys(self, raw: dict[str, Any], section: str) -> None:
        allowed = SECTIONS[section]
        for key in raw:
            if key not in allowed:
                from difflib import get_close_matches  # for an error message only

                close = get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                shown = (
                    key if isinstance(key, str) and key.isprintable() and len(key) <= 60 else _short(key)
                )  # one line
                path = f"{section}.{shown}" if section else shown
                raise self.fail(path, f"unknown key; allowed: {', '.join(allowed)}{hint}")

    def integer(
        self, raw: dict[str, Any], key: str, path: str, default: int | None, minimum: int, maximum: int = MAX_I64
    ) -> int | None:
        value = raw.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer from {minimum} to {maximum}, got {_short(value)}")
        if value < minimum:
            raise self.fail(path, f"must be at least {minimum}, got {value}")
        if value > maximum:
            raise self.fail(path, f"must be at most {maximum}, got {_short(value)}")
        return value

    def choice(self, raw: dict[str, Any], key: str, path: str, default: str, allowed: tuple[str, ...]) -> str:
        value = raw.get(key, default)
        if value not in allowed:
            from difflib import get_close_matches  # for an error message only

            close = get_close_matches(str(value), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise self.fail(path, f"{_short(value)} is not allowed; allowed: {', '.join(allowed)}{hint}")
        return str(value)

    def string(self, raw: dict[str, Any], key: str, path: str, default: str | None) -> str | None:
        value = raw.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_short(value)}")
        return value

    def strings(self, raw: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
        value = raw.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise self.fail(path, f"expected a list of non-empty strings, got {_short(value)}")
        return tuple(value)


def sized_name(name: str, vocab_size: int) -> str:
    """A name that says the vocabulary size: a trailing size (`-32k`, `-4096`) replaced by this
    one, else this one appended (`text-gpt2-32k` of 8192 ids is `text-gpt2-8192`)."""
    return f"{SIZE_SUFFIX.sub('', name)}-{vocab_size}"


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any], origin: str) -> dict[str, Any]:
    """A copy of raw with dotted keys set (`{"trainer.vocab_size": 8192}`)."""
    result: dict[str, Any] = _deep_copy(raw)
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        if not all(parts):
            raise BpeError(f"{origin}: override key {dotted!r} is not a dotted key path like trainer.vocab_size")
        node = result
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise BpeError(f"{origin}: cannot set {dotted}: {'.'.join(parts[: depth + 1])} is not a mapping")
            node = child
        node[parts[-1]] = value
    return result


def _deep_copy(raw: Any, depth: int = 0) -> Any:
    # a dict given from Python may contain itself; YAML files are bounded by config_yaml's loader already.
    # Not copy.deepcopy: the depth guard needs this walk anyway, and deepcopy would keep a mapping
    # given twice as one shared copy (an override of one place would change the other), keep dict
    # subclasses, and fail on values it cannot copy (a lock) that this shares.
    if depth > MAX_DEPTH:
        raise BpeError(f"the config is nested more than {MAX_DEPTH} levels deep (or contains itself)")
    if isinstance(raw, dict):
        return {key: _deep_copy(value, depth + 1) for key, value in raw.items()}
    if isinstance(raw, list):
        return [_deep_copy(value, depth + 1) for value in raw]
    return raw


def _short(value: Any) -> str:
    """A value for an error message, cut short: a hostile value may be megabytes long."""
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + f"... ({len(text)} characters)"


def yaml_value(text: str) -> Any:
    """A value written in YAML (a `--set` value), parsed as config files are: no aliases, bounded
    depth; raises yaml.YAMLError."""
    from bpe_core.config_yaml import load_yaml  # imported on use: see config_yaml's docstring

    return load_yaml(text, MAX_DEPTH)


def load_config(source: str | os.PathLike[str] | dict[str, Any], overrides: dict[str, Any] | None = None) -> Config:
    """Validate a YAML file or a dict of the same shape, with dotted-key overrides applied first."""
    if isinstance(source, dict):
        origin = "<dict>"
        raw = source
    else:
        origin = os.fspath(source)
        from bpe_core.config_yaml import read_yaml  # imported on use: see config_yaml's docstring

        raw = read_yaml(origin, MAX_DEPTH)
    raw = apply_overrides(raw, overrides or {}, origin)
    return replace(parse_config(raw, origin), overridden=frozenset(overrides or {}))


def output_path(config: Config) -> str | None:
    """The config's `output`, a file's inside the working directory (see the module docstring)."""
    if config.origin == "<dict>" or not config.output or "output" in config.overridden:
        return config.output
    return contained_path("", config.output, config.origin, "output")


def input_paths(config: Config) -> list[str]:
    """The config's `input.paths`, a file's relative to its directory and inside it (see the
    module docstring); "-" is standard input."""
    return _found(config, config.input.paths, {"input", "input.paths"}, "input.paths")


def parity_paths(config: Config) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(training, dev) files of `trainer.parity`, by group, found as `input_paths` finds input.paths."""
    parity = config.trainer.parity
    if parity is None:
        return {}, {}
    found: list[dict[str, list[str]]] = []
    for key, section in (("groups", parity.groups), ("dev", parity.dev)):
        by_group = {}
        for name, paths in section.items():
            what = f"trainer.parity.{key}.{name}"
            by_group[name] = _found(config, paths, {"trainer", "trainer.parity", f"trainer.parity.{key}", what}, what)
        found.append(by_group)
    return found[0], found[1]


def _found(config: Config, paths: Sequence[str], overriding: set[str], what: str) -> list[str]:
    """`paths` of the config's key `what`: as given in a dict config; relative to the config's
    directory when an override (a key of `overriding`) gave them; else relative to it and inside it.
    "-" (standard input) stays itself."""
    if config.origin == "<dict>":
        return list(paths)
    base = os.path.dirname(config.origin)
    if config.overridden & overriding:  # the user's own, relative to the config all the same
        return [path if os.path.isabs(path) or path == "-" else os.path.join(base, path) for path in paths]
    return [
        path if path == "-" else _files_inside(base, path, config.origin, f"{what}[{number}]")
        for number, path in enumerate(paths)
    ]


def _files_inside(base: str, path: str, origin: str, what: str) -> str:
    """`path` joined to `base` (see `contained_path`), once every file it names (a glob's matches,
    a directory's files) is found inside `base` too, symbolic links resolved."""
    import glob  # for naming inputs only

    joined = contained_path(base, path, origin, what)
    named = glob.glob(joined, recursive=True) if glob.has_magic(path) else [joined]
    for found in named:
        files = [found]
        if os.path.isdir(found):
            files = [os.path.join(root, name) for root, _, names in os.walk(found) for name in names]
        for file in files:
            contained_path(base, os.path.relpath(file, base or "."), origin, f"{what} ({file})")
    return joined


def parse_config(raw: dict[str, Any], origin: str) -> Config:
    check = _Checker(origin)
    raw = check.mapping(raw, "")
    check.only_keys(raw, "")

    input_raw = dict(check.mapping(raw.get("input"), "input"))
    reader = check.string(input_raw, "reader", "input.reader", "text") or "text"
    paths = check.strings(input_raw, "paths", "input.paths")
    sample = _sample(check, input_raw.get("sample"))
    input_options = {key: value for key, value in input_raw.items() if key not in ("reader", "paths", "sample")}
    normalizers = _normalizers(check, raw.get("normalizer"))

    pretokenizer_raw = dict(check.mapping(raw.get("pretokenizer"), "pretokenizer"))
    if "name" not in pretokenizer_raw:
        raise check.fail("pretokenizer.name", "missing; name the pretokenizer (`bpe plugins` lists them)")
    pretokenizer_name = check.string(pretokenizer_raw, "name", "pretokenizer.name", None) or ""
    pretokenizer_options = {key: value for key, value in pretokenizer_raw.items() if key != "name"}

    trainer_raw = check.mapping(raw.get("trainer"), "trainer")
    check.only_keys(trainer_raw, "trainer")
    vocab_size = check.integer(trainer_raw, "vocab_size", "trainer.vocab_size", 32768, 2, MAX_VOCAB_SIZE)
    if vocab_size is None:  # written as null
        raise check.fail("trainer.vocab_size", f"expected an integer from 2 to {MAX_VOCAB_SIZE}, got null")
    trainer = TrainerConfig(
        vocab_size=vocab_size,
        min_frequency=check.integer(trainer_raw, "min_frequency", "trainer.min_frequency", 1, 1) or 1,
        max_token_length=check.integer(
            trainer_raw, "max_token_length", "trainer.max_token_length", None, 1, MAX_VOCAB_SIZE
        ),
        forbid=_patterns(check, trainer_raw, "forbid", "trainer.forbid"),
        tie_break=check.choice(trainer_raw, "tie_break", "trainer.tie_break", "smallest", TIE_RULES),
        pad_to_multiple_of=check.integer(
            trainer_raw, "pad_to_multiple_of", "trainer.pad_to_multiple_of", None, 1, MAX_PAD_MULTIPLE
        ),
        parity=_parity(check, trainer_raw.get("parity")),
        residue=_residue(check, trainer_raw.get("residue")),
    )
    if trainer.residue is not None and trainer.parity is not None:
        raise check.fail(
            "trainer.residue",
            "not with trainer.parity: a removal would change the counts the groups keep; give one of them",
        )

    special_raw = check.mapping(raw.get("special_tokens"), "special_tokens")
    check.only_keys(special_raw, "special_tokens")
    tokens = check.strings(special_raw, "tokens", "special_tokens.tokens")
    if len(set(tokens)) != len(tokens):
        duplicate = next(token for token in tokens if tokens.count(token) > 1)
        raise check.fail("special_tokens.tokens", f"{duplicate!r} is listed twice")
    special = SpecialTokensConfig(
        tokens=tokens,
        position=check.choice(special_raw, "position", "special_tokens.position", "end", SPECIAL_POSITIONS),
    )

    name = check.string(raw, "name", "name", None) or "tokenizer"
    if "/" in name or "\\" in name or name in (".", ".."):  # `bpe train` writes NAME.json by default
        raise check.fail(
            "name", f"{name!r} is not a plain name (the default output is NAME.json): no / or \\, not . or .."
        )
    return Config(
        name=name,
        input=InputConfig(reader=reader, paths=paths, sample=sample, options=input_options),
        normalizers=normalizers,
        pretokenizer=ComponentConfig(pretokenizer_name, pretokenizer_options),
        trainer=trainer,
        special_tokens=special,
        output=check.string(raw, "output", "output", None),
        runner=parse_runner(raw.get("runner"), origin),
        origin=origin,
        max_length=check.integer(raw, "max_length", "max_length", None, 1, MAX_VOCAB_SIZE),
    )


def _residue(check: _Checker, raw: Any) -> float | None:
    """`trainer.residue`: R, a number above 0 and below 1 (Picky BPE's threshold tau is 1 - R)."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw < 1:
        raise check.fail(
            "trainer.residue",
            f"expected a number above 0 and below 1 (a token goes when fewer than this share of its "
            f"occurrences are left after a merge; Picky BPE's tau is 1 minus it), got {_short(raw)}",
        )
    return float(raw)


def parse_runner(raw: Any, origin: str) -> RunnerConfig:
    """The `runner:` section (also what the command line's --runner, --address, --workers give)."""
    check = _Checker(origin)
    raw = check.mapping(raw, "runner")
    check.only_keys(raw, "runner")
    kind = check.choice(raw, "kind", "runner.kind", "local", RUNNER_KINDS)
    address = check.string(raw, "address", "runner.address", None)
    if address is not None and kind != "dask":
        raise check.fail("runner.address", f"a scheduler address needs kind: dask, not {kind!r}")
    return RunnerConfig(
        kind=kind,
        address=address,
        workers=check.integer(raw, "workers", "runner.workers", None, 1, MAX_WORKERS),
        range_bytes=check.integer(raw, "range_bytes", "runner.range_bytes", RANGE_BYTES, 1 << 10, MAX_RANGE_BYTES)
        or RANGE_BYTES,
    )


def _patterns(check: _Checker, raw: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
    """A list of regexes (the `regex` package's syntax), each compiled once here to check it."""
    import regex  # for checking patterns only

    patterns = check.strings(raw, key, path)
    for index, pattern in enumerate(patterns):
        try:
            regex.compile(pattern)
        except regex.error as error:
            problem = " ".join(str(error).split())  # one line
            raise check.fail(f"{path}[{index}]", f"{_short(pattern)} is not a valid regex: {problem}") from None
    return patterns


def _parity(check: _Checker, raw: Any) -> ParityConfig | None:
    """`trainer.parity`: groups and dev, each a mapping of the same group names to file lists."""
    if raw is None:
        return None
    raw = check.mapping(raw, "trainer.parity")
    check.only_keys(raw, "trainer.parity")
    named: list[dict[str, tuple[str, ...]]] = []
    for key in ("groups", "dev"):
        path = f"trainer.parity.{key}"
        if key not in raw:
            raise check.fail(path, "missing; map each group's name to its files")
        section = check.mapping(raw[key], path)
        files = {}
        for name in section:
            if not isinstance(name, str) or not name:
                raise check.fail(path, f"a group's name must be a non-empty string, got {_short(name)}")
            files[name] = check.strings(section, name, f"{path}.{name}")
            if not files[name]:
                raise check.fail(f"{path}.{name}", "no files; give at least one")
        named.append(files)
    groups, dev = named
    if not groups:
        raise check.fail("trainer.parity.groups", "no groups; give at least one, NAME: [files]")
    for name in dev:
        if name not in groups:
            raise check.fail(f"trainer.parity.dev.{name}", f"not a group; the groups: {', '.join(groups)}")
    for name in groups:
        if name not in dev:
            raise check.fail("trainer.parity.dev", f"no dev files for group {name!r} (each group needs its own)")
    return ParityConfig(
        groups=groups,
        dev={name: dev[name] for name in groups},
        warmup_merges=check.integer(raw, "warmup_merges", "trainer.parity.warmup_merges", 0, 0, MAX_VOCAB_SIZE) or 0,
        window=check.integer(raw, "window", "trainer.parity.window", None, 1, MAX_VOCAB_SIZE),
    )


def _sample(check: _Checker, raw: Any) -> SampleConfig | None:
    if raw is None:
        return None
    raw = check.mapping(raw, "input.sample")
    check.only_keys(raw, "input.sample")
    if ("fraction" in raw) == ("bytes" in raw):
        raise check.fail("input.sample", "give exactly one of fraction (0 < f <= 1) or bytes (a budget), and a seed")
    fraction = raw.get("fraction")
    if fraction is not None and (
        isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1
    ):
        raise check.fail("input.sample.fraction", f"expected a number with 0 < fraction <= 1, got {_short(fraction)}")
    budget = check.integer(raw, "bytes", "input.sample.bytes", None, 1)
    seed = check.integer(raw, "seed", "input.sample.seed", 0, 0)
    return SampleConfig(fraction=None if fraction is None else float(fraction), bytes=budget, seed=seed or 0)


def _normalizers(check: _Checker, raw: Any) -> tuple[ComponentConfig, ...]:
    """`normalizer:` is none, a name, a mapping with a name and options, or a list of those."""
    if raw is None or raw == "none":
        return ()
    items = raw if isinstance(raw, list) else [raw]
    result = []
    for index, item in enumerate(items):
        path = f"normalizer[{index}]" if isinstance(raw, list) else "normalizer"
        if isinstance(item, str):
            if item != "none":
                result.append(ComponentConfig(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise check.fail(path, f"expected none, a normalizer name or a mapping with a name, got {_short(item)}")
        result.append(ComponentConfig(item["name"], {key: value for key, value in item.items() if key != "name"}))
    return tuple(result)
