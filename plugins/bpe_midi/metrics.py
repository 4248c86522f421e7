"""Metrics of a MIDI tokenizer on songs: base events per BPE token, tokens per beat, and the most
used merged tokens shown as their events (what `bpe inspect` shows from the training data)."""

from collections import Counter
from collections.abc import Iterable
from typing import Any


def metrics(tokenizer: Any, songs: Iterable[Any], top: int = 10) -> dict[str, Any]:
    """Measure a trained midi-events tokenizer on songs (paths, mido.MidiFiles or Songs).

    >>> metrics(tok, ["a.mid", "b.mid"])["events_per_token"]
    2.1
    """
    # imported here: the plugin's package imports this module, and a text command that finds the
    # plugins should not pay for MIDI's reading modules
    from bpe_midi.song import song_of

    events = tokens = 0
    beats = 0.0
    usage: Counter[int] = Counter()
    merged = set(tokenizer.merged_ids())
    for document in songs:
        song = song_of(document)
        ids = tokenizer.encode(song)
        chunks = tokenizer.pretokenizer.split(song)
        events += sum(len(chunk) for chunk in chunks)
        tokens += len(ids)
        last = max([note.end for note in song.notes] + [song.end, 0])
        beats += last / song.ticks_per_beat
        usage.update(token for token in ids if token in merged)
    return {
        "events": events,
        "tokens": tokens,
        "beats": round(beats, 3),
        "events_per_token": round(events / tokens, 4) if tokens else 0.0,
        "tokens_per_beat": round(tokens / beats, 4) if beats else 0.0,
        "most_used": [(token, count, tokenizer.token_symbols(token)) for token, count in usage.most_common(top)],
    }
