"""Where work runs: forked worker processes on this machine (`local`), or a Dask cluster (`dask`).

The runners know nothing about tokenizers or training: they run the functions they are given.
The choice between them is made by the callers (`training`, `corpus.shards`).
"""
