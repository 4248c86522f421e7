"""Encoding: the Encoder (the one place that chooses how a chunk is merged), its merge table,
merge loops, unit reader and caches."""
