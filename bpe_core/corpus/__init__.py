"""Encoding corpora with a trained tokenizer: shard sets and ids files (`shards`), and training
windows of at most `--max-length` tokens (`training_windows`). Reading ids back is `idfiles`.

The package imports nothing here, so each module is imported on its own.
"""
