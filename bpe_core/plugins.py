"""The plugin manager: loads plugins from the `bpe_core` entry-point group and looks up components.

Built-in plugins are found through the same entry points as third-party ones; this module never
imports a plugin by name. Names are unique per kind across plugins: a clash names both plugins,
an unknown name lists the known ones and the closest match.

The entry points are read from the installed distributions' `entry_points.txt` files the way
`importlib.metadata` finds them (the folders on `sys.path` in order, the first distribution of a
name winning), without importing `importlib.metadata`, which costs a process more than loading a
large tokenizer does. A `sys.path` entry that is not a folder (a zip) makes it ask
`importlib.metadata` instead.
"""

import importlib
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pluggy

from bpe_core import hookspecs
from bpe_core.contract import Decoder, Normalizer, Pretokenizer, Reader
from bpe_core.errors import BpeError

BUILTIN_DISTRIBUTION = "bpe-core"
# kind -> the hook that registers it
HOOKS = {
    "pretokenizer": "bpe_core_pretokenizers",
    "reader": "bpe_core_readers",
    "decoder": "bpe_core_decoders",
    "normalizer": "bpe_core_normalizers",
}

Factory = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class PluginInfo:
    name: str
    module: str
    distribution: str
    version: str
    components: dict[str, list[str]]


class Registry:
    """Every component that the loaded plugins provide, by kind and name, with its plugin."""

    def __init__(self, manager: pluggy.PluginManager, plugin_dists: dict[str, tuple[str, str]]) -> None:
        self.manager = manager
        self.plugin_dists = plugin_dists
        self.components: dict[str, dict[str, tuple[str, Factory]]] = {kind: {} for kind in HOOKS}
        for kind, hook_name in HOOKS.items():
            table = self.components[kind]
            for impl in getattr(manager.hook, hook_name).get_hookimpls():
                plugin_name = manager.get_name(impl.plugin) or "?"
                provided = impl.function()
                if not isinstance(provided, dict):
                    raise BpeError(f"plugin {plugin_name!r}: {hook_name} must return a dict of name -> factory")
                for name, factory in provided.items():
                    if name in table:
                        raise BpeError(
                            f"{kind} {name!r} is provided by two plugins: {table[name][0]!r} and {plugin_name!r}; "
                            "uninstall one of them"
                        )
                    table[name] = (plugin_name, factory)

    def names(self, kind: str) -> list[str]:
        return sorted(self.components[kind])

    def plugin_of(self, kind: str, name: str) -> str:
        return self.components[kind][name][0]

    def build(self, kind: str, name: str, options: dict[str, Any]) -> Any:
        """The component `name` of `kind`, built with its options."""
        table = self.components[kind]
        if name not in table:
            known = sorted(table)
            from difflib import get_close_matches  # for an error message only

            close = get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise BpeError(f"unknown {kind} {name!r}; known: {', '.join(known) or 'none'}{hint}")
        return table[name][1](options)

    def pretokenizer(self, name: str, options: dict[str, Any]) -> Pretokenizer:
        pretokenizer: Pretokenizer = self.build("pretokenizer", name, options)
        return pretokenizer

    def reader(self, name: str, options: dict[str, Any]) -> Reader:
        reader: Reader = self.build("reader", name, options)
        return reader

    def decoder(self, name: str, options: dict[str, Any]) -> Decoder:
        decoder: Decoder = self.build("decoder", name, options)
        return decoder

    def normalizer(self, name: str, options: dict[str, Any]) -> Normalizer:
        normalizer: Normalizer = self.build("normalizer", name, options)
        return normalizer

    def plugins(self) -> list[PluginInfo]:
        infos = []
        for plugin_name, plugin in self.manager.list_name_plugin():
            dist, version = self.plugin_dists.get(plugin_name, ("?", "?"))
            components = {
                kind: sorted(name for name, (owner, _) in table.items() if owner == plugin_name)
                for kind, table in self.components.items()
            }
            infos.append(PluginInfo(plugin_name, getattr(plugin, "__name__", "?"), dist, version, components))
        return sorted(infos, key=lambda info: info.name)

    def plugin_versions(self) -> dict[str, str]:
        return {name: version for name, (_, version) in self.plugin_dists.items()}


@cache
def registry() -> Registry:
    """The registry of installed plugins, loaded once per process.

    With BPE_CORE_DISABLE_PLUGIN_AUTOLOAD=1 only the plugins shipped in bpe-core itself load.
    """
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    builtin_only = os.environ.get("BPE_CORE_DISABLE_PLUGIN_AUTOLOAD") == "1"
    plugin_dists: dict[str, tuple[str, str]] = {}
    for found in entry_points(hookspecs.PROJECT):
        if builtin_only and found.distribution != BUILTIN_DISTRIBUTION:
            continue
        if manager.has_plugin(found.name):
            continue
        try:
            plugin = found.load()
        except Exception as error:  # a broken third-party plugin must not take the CLI down unexplained
            raise BpeError(f"plugin {found.name!r} ({found.value}) failed to load: {error}") from error
        manager.register(plugin, name=found.name)
        plugin_dists[found.name] = (found.distribution, found.version)
    return Registry(manager, plugin_dists)


@dataclass(frozen=True)
class EntryPoint:
    """An entry point of an installed distribution (its name and version as its metadata says)."""

    name: str
    value: str  # module, or module:attribute
    distribution: str
    version: str

    def load(self) -> Any:
        module_name, _, attribute = self.value.partition(":")
        found: Any = importlib.import_module(module_name.strip())
        for part in attribute.split("[")[0].strip().split(".") if attribute.strip() else []:
            found = getattr(found, part)
        return found


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of `group`, in the order `importlib.metadata.entry_points` gives them."""
    if not all(os.path.isdir(folder or ".") for folder in sys.path if os.path.exists(folder or ".")):
        return _entry_points_from_metadata(group)
    found: list[EntryPoint] = []
    seen: set[str] = set()
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            stem = name.removesuffix(".dist-info").removesuffix(".egg-info")
            unique = re.sub(r"[-_.]+", "-", stem.split("-")[0]).lower()
            if unique in seen:
                continue
            seen.add(unique)
            found.extend(_group_of(os.path.join(folder or ".", name), group))
    return found


def _group_of(metadata_folder: str, group: str) -> list[EntryPoint]:
    """The entry points of `group` that one distribution's metadata folder declares."""
    try:
        with open(os.path.join(metadata_folder, "entry_points.txt"), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:  # none declared (or an egg-info file, not a folder)
        return []
    declared: list[tuple[str, str]] = []
    section = None
    for line in (line.strip() for line in lines):
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line:
            name, value = line.split("=", 1)
            declared.append((name.strip(), value.strip()))
    if not declared:
        return []
    headers = _headers(metadata_folder)
    distribution = headers.get("Name", "?")
    version = headers.get("Version", "?")
    return [EntryPoint(name, value, distribution, version) for name, value in declared]


def _headers(metadata_folder: str) -> dict[str, str]:
    """The Name and Version of a distribution's METADATA (or PKG-INFO), read up to its first blank line."""
    headers: dict[str, str] = {}
    for file_name in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(metadata_folder, file_name), encoding="utf-8") as handle:
                for line in handle:
                    if not line.strip():
                        break
                    key, _, value = line.partition(":")
                    if key in ("Name", "Version") and key not in headers:
                        headers[key] = value.strip()
        except OSError:
            continue
        return headers
    return headers


def _entry_points_from_metadata(group: str) -> list[EntryPoint]:
    import importlib.metadata  # noqa: PLC0415 (only for a sys.path this module does not read itself)

    found: list[EntryPoint] = []
    for entry_point in importlib.metadata.entry_points(group=group):
        dist = entry_point.dist
        name = dist.metadata["Name"] if dist is not None else "?"
        found.append(EntryPoint(entry_point.name, entry_point.value, name, dist.version if dist is not None else "?"))
    return found
