"""A tokenizer's content SHA-256: what shard indexes, `--names` ids files and `TokenShards` compare
to tell whether ids are read with the tokenizer that made them.

The digest is of what the ids mean, never of a file's bytes: the same tokenizer read from our
JSON, from a Hugging Face `tokenizer.json` or from a `.tiktoken` file, with whatever name or
provenance, has the same digest. It covers the pretokenizer (name and options, which fix the
alphabet and the decoder), the normalizers, the alphabet's labels, and for every id what it
decodes to: its base symbols, a special token's text, or nothing (a reserved padding id). Two
tokenizers with the same digest decode every id alike; the order of the merges is left out,
since it changes how text is cut into ids, not what an id stands for.

This module reads no file and writes none.
"""

import hashlib
import json
import sys
from array import array

from bpe_core import pieces
from bpe_core.tokenizer import Tokenizer

# bumped when what the digest covers changes: an old digest then never equals a new one
DIGEST_VERSION = 1


def tokenizer_digest(tokenizer: Tokenizer) -> str:
    """The SHA-256 (hex) of the tokenizer's content, as the module docstring says."""
    spec = tokenizer.spec
    header = {
        "digest": DIGEST_VERSION,
        "pretokenizer": [spec.pretokenizer.name, spec.pretokenizer.options],
        "normalizers": [[item.name, item.options] for item in spec.normalizers],
        "alphabet": tokenizer.alphabet,
        "special_ids": sorted((token_id, text) for text, token_id in tokenizer.special_ids.items()),
        "vocab_size": tokenizer.vocab_size,
    }
    digest = hashlib.sha256(json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass"))
    table = pieces.build(
        tokenizer.alphabet_size,
        spec.internal_merges,
        spec.merge_results,
        tokenizer.layout,
        tokenizer.reserved_ids.start,
        {},  # special tokens are in the header, whatever the decoder makes of them
    )
    code = pieces.symbol_code(tokenizer.alphabet_size)
    for piece in table:
        if piece is None:
            digest.update(b"\xff\xff\xff\xff")
            continue
        if code != "B" and sys.byteorder == "big":  # the pieces are in this machine's order
            swapped = array(code, piece)
            swapped.byteswap()
            piece = swapped.tobytes()
        digest.update(len(piece).to_bytes(4, "little"))
        digest.update(piece)
    return digest.hexdigest()
