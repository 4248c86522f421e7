"""bpe-core's version, in one place: the build reads it (pyproject.toml's dynamic version) and so
does `bpe --version`, without importing importlib.metadata, which costs more than the rest of
the command. It holds a literal and imports nothing, so the build reads it without running it."""

VERSION = "0.1.0"
