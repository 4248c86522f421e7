"""MIDI end to end: bpe-core's midi-remi-bpe pipeline against MidiTok 3 on the POP909 songs.

Both tools do the same job in one fresh interpreter each: read every song, turn it into REMI-style
events, learn BPE up to a 2000-token vocabulary over all songs, then encode every song with it.
bpe-core runs `bpe_core.train` with configs/midi-remi-bpe.yaml (vocab 2000) and `Tokenizer.encode`
per song in one process, and again with 2 worker processes (`train(workers=2)` and
`encode_batch(paths, workers=2)`). MidiTok runs `REMI(TokenizerConfig(use_programs=True,
beat_res={(0, 4): 8, (4, 12): 4}))`, `tokenizer.train(vocab_size=2000, model="BPE",
files_paths=paths)` and `tokenizer.encode(path)` per song; its BPE trainer (Hugging Face
tokenizers, Rust) uses every core unless told otherwise, so it also runs with one thread.
bpe-core in one process also runs with `parser: symusic` (symusic reads the files) and with the
TSD and MIDILike grammars at the same vocabulary size (how the grammars compress); every
one-process run prints the time of each stage (parse, tokenize, train, encode).

Counted per tool: seconds per stage and in total, base tokens (events before BPE) and BPE tokens
over all songs, and the compression 1 - BPE/base. The single-process bpe-core run also splits its
time into parse (reading MIDI files), tokenize (songs to events), train (counting and merging) and
encode (applying the merges). The two grammars differ (MidiTok repeats the time signature in every
bar, bpe-core writes it where it changes), so base counts differ; BPE tokens per song is what a
model sees.

Prints a table and writes the "MIDI" section of docs/benchmarks.md. Asserts nothing.

    .venv/bin/python benchmarks/midi.py [--repeats N] [--songs N]
"""

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import ChildJob, markdown_table, ratio

SONGS_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "midi" / "pop909"
CONFIG = _common.REPO_ROOT / "configs" / "midi-remi-bpe.yaml"
VOCAB_SIZE = 2000
SECTION_HEADING = "## MIDI (benchmarks/midi.py)"
ONE_THREAD = {"RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1", "TOKENIZERS_PARALLELISM": "false"}
OUR_ALPHABET = 426  # midi-events with the config's options; checked against the child's result
OUR_SPECIAL_TOKENS = 4
FRADET_PIANO_REDUCTION = "45-50%"  # Fradet et al. (EMNLP 2023): fewer tokens at a 1k vocabulary, piano


def song_paths(directory: str, count: int) -> list[Path]:
    paths = sorted(Path(directory).glob("*.mid"))
    return paths[:count] if count > 0 else paths


# ---------------------------------------------------------------------------------------------
# children


def run_bpe_core(args: list[str]) -> dict[str, Any]:
    directory, count, vocab_size, workers = args[0], int(args[1]), int(args[2]), int(args[3])
    grammar, parser = (args[4], args[5]) if len(args) > 4 else ("remi", "fast")
    import bpe_core
    import bpe_midi.events as events_module
    import bpe_midi.reader as reader_module
    import bpe_midi.song as song_module
    from bpe_core import engine

    paths = song_paths(directory, count)
    # Stage timers: reading files (read_song, wherever it is called from) and songs to events
    # (MidiEventPretokenizer.tokenize). With workers > 1 they see only this process's share.
    spent = {"parse": 0.0, "tokenize": 0.0}
    read_song = song_module.read_song
    tokenize = events_module.MidiEventPretokenizer.tokenize_bars

    def timed_read_song(*call_args: Any, **call_kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return read_song(*call_args, **call_kwargs)
        finally:
            spent["parse"] += time.perf_counter() - started

    def timed_tokenize(*call_args: Any, **call_kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return tokenize(*call_args, **call_kwargs)
        finally:
            spent["tokenize"] += time.perf_counter() - started

    if workers == 1:
        song_module.read_song = timed_read_song
        reader_module.read_song = timed_read_song  # type: ignore[attr-defined]
        events_module.MidiEventPretokenizer.tokenize_bars = timed_tokenize  # type: ignore[method-assign]

    started = time.perf_counter()
    overrides = {
        "trainer.vocab_size": vocab_size,
        "pretokenizer.grammar": grammar,
        "pretokenizer.parser": parser,
        "input.parser": parser,
    }
    tokenizer = bpe_core.train(CONFIG, paths, overrides, workers=workers, progress=False)
    trained = time.perf_counter()
    train_parse, train_tokenize = spent["parse"], spent["tokenize"]
    if workers == 1:
        encoded = [tokenizer.encode(path) for path in paths]
    else:
        encoded = tokenizer.encode_batch(paths, workers=workers)
    finished = time.perf_counter()

    # not timed: base events per id
    lengths: dict[int, int] = {}
    base_tokens = 0
    for ids in encoded:
        for token in ids:
            length = lengths.get(token)
            if length is None:
                length = lengths[token] = len(tokenizer.token_symbols(token))
            base_tokens += length
    bpe_tokens = sum(len(ids) for ids in encoded)
    result: dict[str, Any] = {
        "seconds": finished - started,
        "train_seconds": trained - started,
        "encode_seconds": finished - trained,
        "songs": len(paths),
        "vocab_size": tokenizer.vocab_size,
        "base_vocabulary": tokenizer.alphabet_size,
        "merges": len(tokenizer.merges),
        "base_tokens": base_tokens,
        "bpe_tokens": bpe_tokens,
        "compiled": engine.is_compiled(),
        "bpe_core_location": bpe_core.__file__,
        "engine_build": _common.engine_build_stamp(),
    }
    if workers == 1:
        result["stages"] = {
            "parse": spent["parse"],
            "tokenize": spent["tokenize"],
            "train": (trained - started) - train_parse - train_tokenize,
            "encode": (finished - trained) - (spent["parse"] - train_parse) - (spent["tokenize"] - train_tokenize),
        }
    return result


def run_miditok(args: list[str]) -> dict[str, Any]:
    directory, count, vocab_size = args[0], int(args[1]), int(args[2])
    from miditok import REMI, TokenizerConfig  # type: ignore[import-untyped]

    paths = song_paths(directory, count)
    started = time.perf_counter()
    tokenizer = REMI(TokenizerConfig(use_programs=True, beat_res={(0, 4): 8, (4, 12): 4}))
    base_vocabulary = len(tokenizer.vocab)
    tokenizer.train(vocab_size=vocab_size, model="BPE", files_paths=paths)
    trained = time.perf_counter()
    sequences = [tokenizer.encode(path) for path in paths]
    finished = time.perf_counter()

    def flat(sequence: Any) -> list[Any]:
        return sequence if isinstance(sequence, list) else [sequence]  # one sequence per track without one_token_stream

    base_tokens = sum(len(part.tokens) for sequence in sequences for part in flat(sequence))
    bpe_tokens = sum(len(part.ids) for sequence in sequences for part in flat(sequence))
    return {
        "seconds": finished - started,
        "train_seconds": trained - started,
        "encode_seconds": finished - trained,
        "songs": len(paths),
        "vocab_size": tokenizer.vocab_size,
        "base_vocabulary": base_vocabulary,
        "merges": tokenizer.vocab_size - base_vocabulary,
        "base_tokens": base_tokens,
        "bpe_tokens": bpe_tokens,
    }


def miditok_base_vocabulary(args: list[str]) -> dict[str, Any]:
    """The size of MidiTok's event vocabulary for this config (not timed)."""
    from miditok import REMI, TokenizerConfig

    tokenizer = REMI(TokenizerConfig(use_programs=True, beat_res={(0, 4): 8, (4, 12): 4}))
    return {"seconds": 0.0, "base_vocabulary": len(tokenizer.vocab)}


def symusic_agreement(args: list[str]) -> dict[str, Any]:
    """Songs where symusic's reading differs from the compiled parser's (which tests/test_midi.py
    proves equal to mido's on every song): notes as a multiset, tempos, time signatures (not timed)."""
    from collections import Counter

    from bpe_midi.song import read_song

    paths = song_paths(args[0], int(args[1]))
    differing = []
    for path in paths:
        ours, theirs = read_song(str(path)), read_song(str(path), "symusic")

        def music(song: Any) -> tuple[Any, ...]:
            notes = Counter(note[:6] for note in song.notes)
            return song.ticks_per_beat, notes, song.tempos, song.time_signatures

        if music(ours) != music(theirs):
            differing.append(path.name)
    return {"seconds": 0.0, "songs": len(paths), "differing": differing}


CHILD_TASKS = {
    "bpe-core": run_bpe_core,
    "miditok": run_miditok,
    "miditok-vocabulary": miditok_base_vocabulary,
    "symusic-agreement": symusic_agreement,
}


# ---------------------------------------------------------------------------------------------
# parent


def compression(result: dict[str, Any]) -> float:
    return 1 - ratio(result["bpe_tokens"], result["base_tokens"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # one run each by default: a run of MidiTok takes about two minutes (make bench's time on 2 cores)
    parser.add_argument("--repeats", type=int, default=1, help="runs per measurement; the fastest counts")
    parser.add_argument("--songs", type=int, default=0, help="use the first N songs (default: all)")
    options = parser.parse_args()
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()
    songs = song_paths(str(SONGS_DIR), options.songs)
    print(f"songs: {len(songs)} from {SONGS_DIR}, vocab {VOCAB_SIZE}")
    common = (str(SONGS_DIR), str(options.songs), str(VOCAB_SIZE))
    with tempfile.TemporaryDirectory(prefix="bpe-bench-midi-") as temporary:
        work_dir = Path(temporary)
        # bpe-core's alphabet is larger than MidiTok's, so at one vocabulary size it learns fewer
        # merges; one more row gives it as many merges as MidiTok learns
        their_base = _common.run_child(script, ChildJob("miditok-vocabulary"), work_dir).result["base_vocabulary"]
        agreement = _common.run_child(script, ChildJob("symusic-agreement", common[:2]), work_dir).result
        ours_base = OUR_ALPHABET + OUR_SPECIAL_TOKENS
        same_merges_vocab = ours_base + VOCAB_SIZE - their_base
        jobs = {
            "bpe-core, 1 process": ChildJob("bpe-core", (*common, "1")),
            "bpe-core, 2 workers": ChildJob("bpe-core", (*common, "2")),
            "bpe-core, 1 process, parser symusic": ChildJob("bpe-core", (*common, "1", "remi", "symusic")),
            "bpe-core, 1 process, grammar tsd": ChildJob("bpe-core", (*common, "1", "tsd", "fast")),
            "bpe-core, 1 process, grammar midilike": ChildJob("bpe-core", (*common, "1", "midilike", "fast")),
            f"bpe-core, 1 process, vocab {same_merges_vocab} (MidiTok's merge count)": ChildJob(
                "bpe-core", (str(SONGS_DIR), str(options.songs), str(same_merges_vocab), "1")
            ),
            "MidiTok 3 (default threads)": ChildJob("miditok", common),
            "MidiTok 3 (1 thread)": ChildJob("miditok", common, env=ONE_THREAD),
        }
        results = _common.run_interleaved(script, jobs, options.repeats, work_dir)

    ours = results["bpe-core, 1 process"].best
    if ours["base_vocabulary"] != OUR_ALPHABET:
        print(
            f"WARNING: the midi-remi-bpe alphabet has {ours['base_vocabulary']} events, not {OUR_ALPHABET}: update "
            "OUR_ALPHABET"
        )
    same_merges = next(summary.best for name, summary in results.items() if "merge count" in name)
    reference = results["MidiTok 3 (default threads)"]
    rows = []
    for name, summary in results.items():
        best = summary.best
        rows.append(
            [
                name,
                f"{best['train_seconds']:.2f}",
                f"{best['encode_seconds']:.2f}",
                f"{best['seconds']:.2f}",
                f"{ratio(best['seconds'], reference.seconds()):.2f}",
                f"{best['base_vocabulary']} + {best['merges']}",
                f"{best['base_tokens']:,}",
                f"{best['bpe_tokens']:,}",
                f"{compression(best):.1%}",
                f"{best['bpe_tokens'] / best['songs']:,.0f}",
                f"{summary.peak_tree_mb:.0f}",
            ]
        )
    table = markdown_table(
        [
            "tool",
            "read + tokenize + train s",
            "encode all s",
            "total s",
            "total / MidiTok (default)",
            "vocabulary (base + merges)",
            "base tokens",
            "BPE tokens",
            "compression (1 - BPE/base)",
            "BPE tokens per song",
            "peak MB (process tree)",
        ],
        rows,
    )
    # every one-process run times its stages; the columns are those runs
    staged = {name: summary.best for name, summary in results.items() if "stages" in summary.best}
    stage_table = markdown_table(
        ["stage", *(name.replace("bpe-core, 1 process", "").strip(", ") or "remi, fast" for name in staged)],
        [
            [stage]
            + [
                f"{best['stages'][stage]:.2f} s ({ratio(best['stages'][stage], best['seconds']):.0%})"
                for best in staged.values()
            ]
            for stage in ours["stages"]
        ]
        + [["total"] + [f"{best['seconds']:.2f} s" for best in staged.values()]],
    )
    for name, best in staged.items():
        print(f"{name}: " + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in best["stages"].items()))
    by_grammar = {
        grammar: results[name].best
        for grammar, name in (
            ("remi", "bpe-core, 1 process"),
            ("tsd", "bpe-core, 1 process, grammar tsd"),
            ("midilike", "bpe-core, 1 process, grammar midilike"),
        )
    }
    symusic_run = results["bpe-core, 1 process, parser symusic"]
    theirs = reference.best
    faster = ratio(reference.seconds(), results["bpe-core, 1 process"].seconds())
    faster_two = ratio(reference.seconds(), results["bpe-core, 2 workers"].seconds())
    faster_one_thread = ratio(results["MidiTok 3 (1 thread)"].seconds(), results["bpe-core, 1 process"].seconds())
    verdict = [
        (
            f"- End to end, bpe-core in one process takes {1 / faster:.2f}x MidiTok's time "
            f"({'faster' if faster > 1 else 'slower'}); with 2 workers {1 / faster_two:.2f}x. "
            f"Against MidiTok restricted to one thread, one-process bpe-core takes {1 / faster_one_thread:.2f}x its "
            "time."
        ),
        (
            f"- Compression at vocab {VOCAB_SIZE}: bpe-core {compression(ours):.1%} fewer tokens than its events, "
            "MidiTok "
            f"{compression(theirs):.1%} than its own; per song bpe-core emits "
            f"{ours['bpe_tokens'] / ours['songs']:,.0f} "
            f"tokens, MidiTok {theirs['bpe_tokens'] / theirs['songs']:,.0f} "
            f"({ratio(ours['bpe_tokens'], theirs['bpe_tokens']):.2f}x). Fradet et al. report {FRADET_PIANO_REDUCTION} "
            "fewer tokens at a 1k vocabulary on piano."
        ),
        (
            f"- Alphabet: bpe-core's events for this config are {ours['base_vocabulary']} (+ {OUR_SPECIAL_TOKENS} "
            "special tokens), "
            f"MidiTok's {theirs['base_vocabulary']}, so at vocab {VOCAB_SIZE} bpe-core learns {ours['merges']} "
            "merges and MidiTok "
            f"{theirs['merges']}. With MidiTok's merge count (vocab {same_merges['vocab_size']}) bpe-core emits "
            f"{same_merges['bpe_tokens'] / same_merges['songs']:,.0f} tokens per song ({compression(same_merges):.1%} "
            f"fewer than its events; {ratio(same_merges['bpe_tokens'], theirs['bpe_tokens']):.3f}x MidiTok's tokens)."
        ),
        (
            "- Grammars at vocab "
            f"{VOCAB_SIZE} (each its own alphabet, the rest merges): BPE tokens per song "
            + ", ".join(
                f"{grammar} {best['bpe_tokens'] / best['songs']:,.0f} "
                f"({best['base_tokens'] / best['songs']:,.0f} events, {compression(best):.1%} fewer)"
                for grammar, best in by_grammar.items()
            )
            + "."
        ),
        (
            f"- symusic reads {agreement['songs'] - len(agreement['differing'])} of {agreement['songs']} songs exactly "
            "as the compiled parser (= mido): notes, tempos, time signatures"
            + (f" (differing: {', '.join(agreement['differing'][:5])})" if agreement["differing"] else "")
            + ". "
            f"Reading with symusic (`parser: symusic`): end to end {symusic_run.seconds():.2f} s against "
            f"{results['bpe-core, 1 process'].seconds():.2f} s with the compiled parser; its parse stage "
            f"{symusic_run.best['stages']['parse']:.2f} s against {ours['stages']['parse']:.2f} s."
        ),
        (
            f"- Issue 16 target (at least 4x faster than MidiTok end to end, one process, tokens per song at most "
            f"MidiTok's): {faster:.2f}x faster, {'met' if faster >= 4 else 'NOT met'}; tokens per song "
            f"{ratio(ours['bpe_tokens'], theirs['bpe_tokens']):.3f}x MidiTok's."
        ),
        (
            f"- Acceptance (issue 6: faster end to end, compression at least as good at the same vocabulary): "
            f"speed {'met' if faster > 1 else 'NOT met'} (one process against MidiTok's default); compression "
            f"{'met' if compression(ours) >= compression(theirs) else 'NOT met'} by each tool's 1 - BPE/base; "
            f"bpe-core emits {'fewer' if ours['bpe_tokens'] < theirs['bpe_tokens'] else 'more'} BPE tokens per song."
        ),
    ]
    command = ".venv/bin/python benchmarks/midi.py" + (f" --repeats {options.repeats}" if options.repeats != 1 else "")
    command += f" --songs {options.songs}" if options.songs else ""
    _common.publish_report(
        SECTION_HEADING,
        command=command,
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=ours,
        peers=["miditok", "symusic", "tokenizers", "mido"],
        summaries=list(results.values()),
        blocks=[
            f"### POP909, {len(songs)} songs, vocab {VOCAB_SIZE}",
            table,
            "\n".join(verdict),
            "### Where bpe-core's time goes (one process; the other readers and grammars beside)",
            stage_table,
        ],
        notes=[
            (
                "Each row: fastest of the runs, each in a fresh interpreter, timed inside the child from before the "
                "first file is read to the last song encoded (start-up and imports excluded). Training reads and "
                "tokenizes every song, and encoding reads and tokenizes every song again, for both tools."
            ),
            (
                "bpe-core: `bpe_core.train('configs/midi-remi-bpe.yaml', paths, {'trainer.vocab_size': 2000})` "
                "(BPE within bars, 426 events + 4 special tokens + 1570 merges), then `encode(path)` per song; "
                "2 workers: `train(..., workers=2)` and `encode_batch(paths, workers=2)`. Stages (one process): "
                "parse = time in `read_song` (the compiled SMF parser and note pairing), tokenize = time in "
                "`MidiEventPretokenizer.tokenize`, train = the rest of `train` (counting unique bars, merging), "
                "encode = the rest of encoding (applying merges, with a cache of repeated bars)."
            ),
            (
                "MidiTok: `REMI(TokenizerConfig(use_programs=True, beat_res={(0, 4): 8, (4, 12): 4}))`, "
                "`train(vocab_size=2000, model='BPE', files_paths=paths)` (its BPE also within bars), `encode(path)` "
                "per "
                "song (symusic reads the files). Base tokens: `len(seq.tokens)`, BPE tokens: `len(seq.ids)`. "
                "'1 thread': RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false."
            ),
            (
                "Base tokens of bpe-core: the events behind the BPE ids (`token_symbols`). The grammars differ, so "
                "compare BPE tokens per song as well as each tool's own ratio."
            ),
        ],
        trial_run=f"--songs {options.songs} is a trial run" if options.songs else None,
    )


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
