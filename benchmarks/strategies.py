"""Each encoding strategy the engine keeps, against the one it would fall back to, on real input.

`engine/encode/encoder.py` chooses between three merge loops and two ways of reading a chunk; a
strategy stays only if it wins by 10% or more somewhere real. Each row times the strategy and its
fallback on the same input, in this process, the fastest of `--repeats` runs, and checks that
both give the same ids:

- heap loop vs scan, for chunks of HEAP_CHUNK symbols or more: the unique chunks of 24 bytes or
  more of the Japanese Debian Reference under o200k_base (a sentence with no space is one chunk);
- bucket encoder vs the kernel's heap loop, for a genome: E. coli's first 1 Mbp with a DNA
  vocabulary of 4096 trained on phage lambda;
- windows vs one window, for a genome: the same, the bucket encoder with and without windows;
- units vs bytes: a cold pass over the Japanese text with o200k_base, units read or not;
- renting vs buckets at once: the same pass, long byte ranges taken by the kernel's heap until
  they add up to as many symbols as there are merges, or the bucket encoder set up first (its
  set-up timed with the pass).

    .venv/bin/python benchmarks/strategies.py [--repeats N]

Prints a markdown table. Asserts nothing about timings.
"""

import argparse
import gzip
import time
from collections.abc import Callable
from pathlib import Path

from _common import TUNING_TEXTS
from encode_text import published_file

import bpe_core
from bpe_core import packing
from bpe_core.engine import Encoder, Trainer, is_compiled
from bpe_core.engine.encode.buckets import BucketEncoder

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
HEAP_FROM = 24  # kernel.HEAP_CHUNK


def fastest(work: Callable[[], object], repeats: int) -> tuple[float, object]:
    """The fastest time of `repeats` runs, and what the last run gave."""
    best = float("inf")
    result: object = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def o200k() -> bpe_core.Tokenizer:
    return bpe_core.from_tiktoken(published_file("o200k_base"), pattern="o200k")


def japanese() -> str:
    return gzip.open(TUNING_TEXTS["ja"], "rt", encoding="utf-8").read()


def heap_against_scan(repeats: int) -> tuple[str, float, float]:
    tokenizer = o200k()
    encoder = Encoder(256, tokenizer.spec.internal_merges)
    chunks = sorted({chunk.encode("utf-8") for chunk in tokenizer.pretokenizer.split(japanese())})
    long_chunks = [chunk for chunk in chunks if len(chunk) >= HEAP_FROM]
    kernel = encoder.kernel

    def run(heap: bool) -> list[list[int]]:
        results = []
        for chunk in long_chunks:
            kernel.room(len(chunk))
            count = kernel.read_bytes(chunk, 0, len(chunk))
            if heap:
                left = kernel.merge(count)
            else:
                left = kernel.scan(kernel.parts, kernel.ranks, count, None, -1, -1, False, 0.0, None)
            results.append(kernel.tokens(left))
        return results

    heap_time, heap_ids = fastest(lambda: run(True), repeats)
    scan_time, scan_ids = fastest(lambda: run(False), repeats)
    assert heap_ids == scan_ids
    label = f"heap loop vs scan: {len(long_chunks)} unique Japanese chunks of {HEAP_FROM}+ bytes, o200k_base"
    return label, heap_time, scan_time


def ecoli_megabase() -> list[int]:
    with gzip.open(SHARED / "dna" / "ecoli_k12_mg1655.fa.gz", "rt") as handle:
        sequence = "".join(line.strip() for line in handle if not line.startswith(">"))[:1_000_000]
    return ["ACGT".index(base) for base in sequence]


def lambda_merges() -> list[tuple[int, int]]:
    with gzip.open(SHARED / "dna" / "lambda_phage.fa.gz", "rt") as handle:
        sequence = "".join(line.strip() for line in handle if not line.startswith(">"))
    symbols = ["ACGT".index(base) for base in sequence if base in "ACGT"]
    return Trainer(4, [symbols], [1], 4100).run(4092)


def buckets_against_heap(repeats: int) -> list[tuple[str, float, float]]:
    merges = lambda_merges()
    genome = ecoli_megabase()
    encoder = Encoder(4, merges)
    buckets_time, bucket_ids = fastest(lambda: encoder.encode_symbols(genome), repeats)
    heap_time, heap_ids = fastest(lambda: encoder.kernel.encode_list(genome), repeats)
    assert bucket_ids == heap_ids
    whole = Encoder(4, merges)
    whole.encode_symbols(genome[:10])  # sets the bucket encoder up
    assert whole.buckets is not None
    whole.buckets.window = len(genome)
    whole_time, whole_ids = fastest(lambda: whole.encode_symbols(genome), repeats)
    assert whole_ids == bucket_ids
    return [
        ("bucket encoder vs kernel heap: E. coli 1 Mbp, 4092 merges from lambda", buckets_time, heap_time),
        ("windows vs one window: E. coli 1 Mbp, bucket encoder", buckets_time, whole_time),
    ]


def units_against_bytes(repeats: int) -> tuple[str, float, float]:
    tokenizer = o200k()
    pretokenizer = tokenizer.pretokenizer
    text = japanese()

    def fresh(units: bool) -> Encoder:
        encoder = Encoder(256, tokenizer.spec.internal_merges)
        if units:
            packing.prepare(encoder, pretokenizer)
        else:
            encoder.prepare_ranges()
        return encoder

    # a fresh encoder for each run (built before it is timed), so every pass is cold
    encoders = {units: [fresh(units) for _ in range(repeats)] for units in (True, False)}

    def cold(units: bool) -> list[list[int]]:
        return packing.encode_documents(encoders[units].pop(), pretokenizer, [text])

    units_time, units_ids = fastest(lambda: cold(True), repeats)
    bytes_time, bytes_ids = fastest(lambda: cold(False), repeats)
    assert units_ids == bytes_ids
    return "units vs bytes: a cold pass over the Japanese text, o200k_base", units_time, bytes_time


def renting_against_buckets(repeats: int) -> tuple[str, float, float]:
    tokenizer = o200k()
    pretokenizer = tokenizer.pretokenizer
    text = japanese()

    def fresh() -> Encoder:
        encoder = Encoder(256, tokenizer.spec.internal_merges)
        packing.prepare(encoder, pretokenizer)
        return encoder

    encoders = {renting: [fresh() for _ in range(repeats)] for renting in (True, False)}

    def cold(renting: bool) -> list[list[int]]:
        encoder = encoders[renting].pop()
        if not renting:
            encoder.buckets = BucketEncoder(encoder.table)
        return packing.encode_documents(encoder, pretokenizer, [text])

    renting_time, renting_ids = fastest(lambda: cold(True), repeats)
    buckets_time, buckets_ids = fastest(lambda: cold(False), repeats)
    assert renting_ids == buckets_ids
    return "renting vs buckets at once: a cold pass over the Japanese text, o200k_base", renting_time, buckets_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    assert is_compiled(), "measure the compiled engine"
    rows = [heap_against_scan(options.repeats), *buckets_against_heap(options.repeats)]
    rows.append(units_against_bytes(options.repeats))
    rows.append(renting_against_buckets(options.repeats))
    print("| strategy vs fallback | strategy s | fallback s | fallback / strategy |")
    print("| --- | ---: | ---: | ---: |")
    for label, strategy, fallback in rows:
        print(f"| {label} | {strategy:.4f} | {fallback:.4f} | {fallback / strategy:.2f} |")


if __name__ == "__main__":
    main()
