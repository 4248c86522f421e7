"""Tokenizer files: our own versioned JSON file (`native`), Hugging Face's `tokenizer.json` (`hf`,
with `hf_folder` for what `transformers` needs beside it) and tiktoken's `.tiktoken` (`tiktoken`);
`layout` checks the ids any of them give, `suffixes` tells a file's format from its name.

Readers return a `TokenizerSpec` and writers take a tokenizer's read-only view
(`spec.TokenizerView`); none of them imports the `Tokenizer` class.
"""
