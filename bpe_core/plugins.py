"""The plugin manager: loads plugins from the `bpe_core` entry-point group and looks up components.

Built-in plugins are found through the same entry points as third-party ones; this module never
imports a plugin by name. Names are unique per kind across plugins: a clash names both plugins,
an unknown name lists the known ones and the closest match.
"""

import difflib
import importlib.metadata
import os
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
            close = difflib.get_close_matches(name, known, n=1)
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
    for entry_point in importlib.metadata.entry_points(group=hookspecs.PROJECT):
        dist = entry_point.dist
        dist_name = dist.metadata["Name"] if dist is not None else "?"
        if builtin_only and dist_name != BUILTIN_DISTRIBUTION:
            continue
        if manager.has_plugin(entry_point.name):
            continue
        try:
            plugin = entry_point.load()
        except Exception as error:  # a broken third-party plugin must not take the CLI down unexplained
            raise BpeError(f"plugin {entry_point.name!r} ({entry_point.value}) failed to load: {error}") from error
        manager.register(plugin, name=entry_point.name)
        plugin_dists[entry_point.name] = (dist_name, dist.version if dist is not None else "?")
    return Registry(manager, plugin_dists)
