"""`bpe demo`: train small tokenizers on samples shipped inside the package and show what they learned.

No arguments, no network, a few seconds. Each domain's part uses only built-in components.
"""

import tempfile
from importlib.resources import as_file, files
from typing import Any

from bpe_core.pipeline import Tokenizer, train


def _heading(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def _show_merges(tokenizer: Tokenizer, count: int) -> None:
    merged = [tokenizer.alphabet_size + rank for rank in range(min(count, len(tokenizer.merges)))]
    print(f"first {len(merged)} merges:  " + "  ".join(repr(tokenizer.token_text(token)) for token in merged))


def text_demo() -> None:
    _heading("text: GPT-2-style byte-level BPE on public-domain US founding texts")
    config: dict[str, Any] = {
        "name": "demo-text",
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 256 + 200 + 1},
        "special_tokens": {"tokens": ["<|endoftext|>"], "position": "end"},
    }
    with as_file(files("bpe_core") / "samples" / "us-founding-texts.txt") as sample:
        tokenizer = train(config, [sample], progress=False, workers=1)
        text = sample.read_text(encoding="utf-8")
    provenance = tokenizer.provenance
    print(
        f"trained vocab {tokenizer.vocab_size} on {provenance['inputs'][0]['size']:,} bytes "
        f"({provenance['unique_chunks']} unique chunks) in {provenance['seconds']:.2f} s"
    )
    _show_merges(tokenizer, 12)
    ids = tokenizer.encode(text)
    print(f"the sample: {len(text.encode('utf-8')):,} bytes -> {len(ids):,} tokens ({len(text.encode('utf-8')) / len(ids):.2f} bytes per token)")
    example = "We hold these truths to be self-evident; ünïcode and 42 are fine too."
    example_ids = tokenizer.encode(example + "<|endoftext|>", allowed_special={"<|endoftext|>"})
    print(f"encode {example!r} + <|endoftext|>:")
    print("  ids:    " + " ".join(map(str, example_ids)))
    print("  tokens: " + " | ".join(tokenizer.token_text(token) for token in example_ids))
    decoded = tokenizer.decode(example_ids)
    print(f"  decode: {decoded!r}  (round trip exact: {decoded == example + '<|endoftext|>'})")
    with tempfile.TemporaryDirectory() as directory:
        path = f"{directory}/demo-text.json"
        tokenizer.save(path)
        from bpe_core.formats.native import load

        reloaded = load(path)
        print(f"saved and reloaded: same ids = {reloaded.encode(example) == tokenizer.encode(example)}")


def run_demo() -> None:
    text_demo()
