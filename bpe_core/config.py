"""Pipeline configuration: YAML (or a dict of the same shape) -> typed, frozen, validated objects.

Every error names the file, the dotted key path, the bad value and what is allowed, and suggests
the closest key for a misspelt one. Component options (a pretokenizer's own keys) are checked by
the component itself, not here. This module does not run anything.
"""

import difflib
import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from bpe_core.engine import TIE_RULES
from bpe_core.errors import BpeError

SPECIAL_POSITIONS = ("end", "start")


@dataclass(frozen=True)
class InputConfig:
    reader: str = "text"
    paths: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ComponentConfig:
    name: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainerConfig:
    vocab_size: int = 32768
    min_frequency: int = 1
    max_token_length: int | None = None
    tie_break: str = "smallest"


@dataclass(frozen=True)
class SpecialTokensConfig:
    tokens: tuple[str, ...] = ()
    position: str = "end"


@dataclass(frozen=True)
class Config:
    name: str
    input: InputConfig
    pretokenizer: ComponentConfig
    trainer: TrainerConfig
    special_tokens: SpecialTokensConfig
    output: str | None
    origin: str = "<dict>"

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data, in the YAML shape (for tokenizer files)."""
        return {
            "name": self.name,
            "input": {"reader": self.input.reader, "paths": list(self.input.paths), **self.input.options},
            "pretokenizer": {"name": self.pretokenizer.name, **self.pretokenizer.options},
            "trainer": {
                "vocab_size": self.trainer.vocab_size,
                "min_frequency": self.trainer.min_frequency,
                "max_token_length": self.trainer.max_token_length,
                "tie_break": self.trainer.tie_break,
            },
            "special_tokens": {"tokens": list(self.special_tokens.tokens), "position": self.special_tokens.position},
            "output": self.output,
        }


SECTIONS: dict[str, tuple[str, ...]] = {
    "": ("name", "input", "pretokenizer", "trainer", "special_tokens", "output"),
    "trainer": ("vocab_size", "min_frequency", "max_token_length", "tie_break"),
    "special_tokens": ("tokens", "position"),
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
            raise self.fail(key or "top level", f"expected a mapping of keys, got {type(raw).__name__} {raw!r}")
        return raw

    def only_keys(self, raw: dict[str, Any], section: str) -> None:
        allowed = SECTIONS[section]
        for key in raw:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                path = f"{section}.{key}" if section else str(key)
                raise self.fail(path, f"unknown key; allowed: {', '.join(allowed)}{hint}")

    def integer(self, raw: dict[str, Any], key: str, path: str, default: int | None, minimum: int) -> int | None:
        value = raw.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer >= {minimum}, got {value!r}")
        if value < minimum:
            raise self.fail(path, f"must be at least {minimum}, got {value}")
        return value

    def choice(self, raw: dict[str, Any], key: str, path: str, default: str, allowed: tuple[str, ...]) -> str:
        value = raw.get(key, default)
        if value not in allowed:
            close = difflib.get_close_matches(str(value), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise self.fail(path, f"{value!r} is not allowed; allowed: {', '.join(allowed)}{hint}")
        return str(value)

    def string(self, raw: dict[str, Any], key: str, path: str, default: str | None) -> str | None:
        value = raw.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {value!r}")
        return value

    def strings(self, raw: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
        value = raw.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise self.fail(path, f"expected a list of non-empty strings, got {value!r}")
        return tuple(value)


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


def _deep_copy(raw: Any) -> Any:
    if isinstance(raw, dict):
        return {key: _deep_copy(value) for key, value in raw.items()}
    if isinstance(raw, list):
        return [_deep_copy(value) for value in raw]
    return raw


def read_yaml(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            raw: Any = yaml.safe_load(handle)
    except OSError as error:
        raise BpeError(f"cannot read config {path}: {error.strerror or error}") from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise BpeError(f"{path}:{where}: YAML syntax error: {problem}") from error
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise BpeError(f"{path}: top level: expected a mapping of keys, got {type(raw).__name__}")
    return raw


def load_config(source: str | os.PathLike[str] | dict[str, Any], overrides: dict[str, Any] | None = None) -> Config:
    """Validate a YAML file or a dict of the same shape, with dotted-key overrides applied first."""
    if isinstance(source, dict):
        origin, raw = "<dict>", source
    else:
        origin = os.fspath(source)
        raw = read_yaml(origin)
    raw = apply_overrides(raw, overrides or {}, origin)
    return parse_config(raw, origin)


def parse_config(raw: dict[str, Any], origin: str) -> Config:
    check = _Checker(origin)
    raw = check.mapping(raw, "")
    check.only_keys(raw, "")

    input_raw = dict(check.mapping(raw.get("input"), "input"))
    reader = check.string(input_raw, "reader", "input.reader", "text") or "text"
    paths = check.strings(input_raw, "paths", "input.paths")
    input_options = {key: value for key, value in input_raw.items() if key not in ("reader", "paths")}

    pretokenizer_raw = dict(check.mapping(raw.get("pretokenizer"), "pretokenizer"))
    if "name" not in pretokenizer_raw:
        raise check.fail("pretokenizer.name", "missing; name the pretokenizer (`bpe plugins` lists them)")
    pretokenizer_name = check.string(pretokenizer_raw, "name", "pretokenizer.name", None) or ""
    pretokenizer_options = {key: value for key, value in pretokenizer_raw.items() if key != "name"}

    trainer_raw = check.mapping(raw.get("trainer"), "trainer")
    check.only_keys(trainer_raw, "trainer")
    vocab_size = check.integer(trainer_raw, "vocab_size", "trainer.vocab_size", 32768, 2)
    assert vocab_size is not None
    trainer = TrainerConfig(
        vocab_size=vocab_size,
        min_frequency=check.integer(trainer_raw, "min_frequency", "trainer.min_frequency", 1, 1) or 1,
        max_token_length=check.integer(trainer_raw, "max_token_length", "trainer.max_token_length", None, 1),
        tie_break=check.choice(trainer_raw, "tie_break", "trainer.tie_break", "smallest", TIE_RULES),
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

    return Config(
        name=check.string(raw, "name", "name", None) or "tokenizer",
        input=InputConfig(reader=reader, paths=paths, options=input_options),
        pretokenizer=ComponentConfig(pretokenizer_name, pretokenizer_options),
        trainer=trainer,
        special_tokens=special,
        output=check.string(raw, "output", "output", None),
        origin=origin,
    )
