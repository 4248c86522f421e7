"""A config's YAML -> plain data: safe YAML with no aliases and bounded nesting, and errors that
name the file, the line and the column.

Apart from config.py, which imports it on use, so that only what reads a config file or a
`--set` value imports YAML: loading a tokenizer and encoding read none. This module does not
check what the data means (config.py does).
"""

from typing import Any

import yaml

from bpe_core.errors import BpeError

MAX_CONFIG_BYTES = 16 << 20


class ConfigLoader(yaml.SafeLoader):
    """Safe YAML without aliases and at most `max_depth` levels deep.

    Aliases are refused because a few hundred bytes of them expand to billions of values (and an
    alias inside its own anchor to a cycle); deep nesting is refused because composing is
    recursive. A config never needs either.
    """

    def __init__(self, stream: Any, max_depth: int) -> None:
        super().__init__(stream)
        self.depth = 0
        self.max_depth = max_depth

    def compose_node(self, parent: Any, index: Any) -> Any:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]  # (types-PyYAML leaves it untyped)
        mark: Any = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, f"alias *{event.anchor} is not allowed in a config; write the value out", mark
            )
        self.depth += 1
        try:
            if self.depth > self.max_depth:
                raise yaml.composer.ComposerError(None, None, f"nested more than {self.max_depth} levels deep", mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load_yaml(data: str | bytes, max_depth: int) -> Any:
    """The one document of `data` (what yaml.load does, with a ConfigLoader); raises yaml.YAMLError."""
    loader = ConfigLoader(data, max_depth)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_yaml(path: str, max_depth: int) -> dict[str, Any]:
    """The mapping a config file holds (empty for an empty file); a file that cannot be read, is
    not YAML text or not a mapping is an error naming it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise BpeError(f"{path}: a config is at most {MAX_CONFIG_BYTES >> 20} MiB; this one is larger")
        # bytes, so YAML decodes UTF-8 or (with a byte order mark) UTF-16 itself
        raw: Any = load_yaml(data, max_depth)
    except OSError as error:
        raise BpeError(f"cannot read config {path}: {error.strerror or error}") from error
    except yaml.reader.ReaderError as error:
        raise BpeError(
            f"{path}: position {error.position}: not YAML text ({error.reason}; "
            "a config is UTF-8, or UTF-16 with a byte order mark)"
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(error, "problem", None) or error).split())
        raise BpeError(f"{path}:{where}: YAML syntax error: {problem}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise BpeError(f"{path}: top level: expected a mapping of keys, got {type(raw).__name__}")
    return raw
