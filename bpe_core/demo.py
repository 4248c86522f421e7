"""`bpe demo`: train small tokenizers on samples shipped inside the package and show what they learned.

No arguments, no network, a few seconds. Each domain's part uses only built-in components.
"""

import tempfile
from importlib.resources import as_file, files
from typing import Any

from bpe_core.loading import load
from bpe_core.tokenizer import Tokenizer
from bpe_core.training import train


def _heading(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def _show_merges(tokenizer: Tokenizer, count: int) -> None:
    merged = tokenizer.merged_ids()[:count]
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
    print(
        f"the sample: {len(text.encode('utf-8')):,} bytes -> {len(ids):,} tokens "
        f"({len(text.encode('utf-8')) / len(ids):.2f} bytes per token)"
    )
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
        reloaded = load(path)
        print(f"saved and reloaded: same ids = {reloaded.encode(example) == tokenizer.encode(example)}")


def dna_demo() -> None:
    _heading("DNA: DNABERT-2-style BPE on the phage lambda genome (48,502 bp, one sequence)")
    config: dict[str, Any] = {
        "name": "demo-dna",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 512, "min_frequency": 2},
        "special_tokens": {"tokens": ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"], "position": "start"},
    }
    with as_file(files("bpe_core") / "samples" / "lambda_phage.fa.gz") as sample:
        tokenizer = train(config, [sample], progress=False, workers=1)
    provenance = tokenizer.provenance
    print(
        f"trained vocab {tokenizer.vocab_size} in {provenance['seconds']:.2f} s: "
        f"{provenance['symbols'] / provenance['tokens']:.2f} nucleotides per token on the genome"
    )
    merged = tokenizer.merged_ids()
    longest = sorted(merged, key=lambda token: -len(tokenizer.token_symbols(token)))[:5]
    print("longest tokens:  " + "  ".join(tokenizer.token_text(token) for token in longest))
    sequence = "GGGCGGCGACCTCGCGGGTTTTCGCTATTTATGAAAATTTTCCGGTTTAAGGCGTTTCCGTTCNNNACGT"
    ids, spans = tokenizer.encode_with_offsets(sequence)
    print(f"encode {sequence[:40]}... ({len(sequence)} bp) -> {len(ids)} tokens:")
    print("  " + " ".join(f"{tokenizer.token_text(token)}@{start}" for token, (start, _) in zip(ids, spans)))
    print(f"  decode round trip exact: {tokenizer.decode(ids) == sequence}")


def midi_demo() -> None:
    _heading("MIDI: REMI events with BPE per bar on six POP909 songs (MIT, Music X Lab)")
    config: dict[str, Any] = {
        "name": "demo-midi",
        "input": {"reader": "midi"},
        "pretokenizer": {"name": "midi-events"},
        "trainer": {"vocab_size": 900},
    }
    songs = files("bpe_core") / "samples" / "pop909"
    with as_file(songs) as folder:
        tokenizer = train(config, [folder], progress=False, workers=1)
        first = sorted(folder.glob("*.mid"))[0]
        ids = tokenizer.encode(first)
        report = tokenizer.encoding_report(first)
        back = tokenizer.decode(ids)
    provenance = tokenizer.provenance
    print(
        f"trained {len(tokenizer.merges)} merges over {tokenizer.alphabet_size} events in "
        f"{provenance['seconds']:.2f} s: "
        f"{provenance['symbols'] / provenance['tokens']:.2f} events per token "
        f"({1 - provenance['tokens'] / provenance['symbols']:.0%} fewer tokens)"
    )
    for token, uses in tokenizer.most_used_tokens(3):
        print(f"  used {uses:>5}x: {tokenizer.token_text(token)}")
    print(
        f"{first.name}: {report['notes']} notes -> {len(ids)} tokens; quantization moved "
        f"{report.get('onsets_moved', 0)} onsets"
    )
    print(f"  (at most {report['max_onset_shift_beats']} beat), binned {report.get('velocities_binned', 0)} velocities")
    notes = sum(1 for track in back.tracks for message in track if message.type == "note_on")
    print(f"  decoded back to a MIDI file with {len(back.tracks)} tracks and {notes} notes")


def run_demo() -> None:
    text_demo()
    dna_demo()
    midi_demo()
