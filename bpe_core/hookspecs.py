"""The plugin contract (pluggy project "bpe_core"): hooks that register named components.

A plugin is a module with `@hookimpl` functions, registered under the entry-point group
`bpe_core`. Each hook returns a dict from component name to a factory that takes the
component's options (a dict from the YAML config) and returns the component. This module only
declares the hooks; `bpe_core.plugins` loads and checks implementations.
"""

import pluggy

from bpe_core.contract import DecoderFactory, NormalizerFactory, PretokenizerFactory, ReaderFactory

PROJECT = "bpe_core"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def bpe_core_pretokenizers() -> dict[str, PretokenizerFactory]:  # type: ignore[empty-body]
    """Pretokenizers this plugin provides, by name.

    >>> @hookimpl
    ... def bpe_core_pretokenizers():
    ...     return {"protein": ProteinPretokenizer}
    """


@hookspec
def bpe_core_readers() -> dict[str, ReaderFactory]:  # type: ignore[empty-body]
    """Readers (paths -> documents) this plugin provides, by name."""


@hookspec
def bpe_core_decoders() -> dict[str, DecoderFactory]:  # type: ignore[empty-body]
    """Decoders (base symbols -> a document, and a document -> a file) this plugin provides, by name."""


@hookspec
def bpe_core_normalizers() -> dict[str, NormalizerFactory]:  # type: ignore[empty-body]
    """Normalizers (text -> text, before pretokenization) this plugin provides, by name."""
