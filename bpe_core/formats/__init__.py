"""Tokenizer file formats: our own versioned JSON file (more formats arrive with the interop work)."""
