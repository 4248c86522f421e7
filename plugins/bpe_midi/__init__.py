"""Built-in MIDI plugin: the `midi` reader (a compiled exact parser, or mido), the `midi-events`
event pretokenizer (REMI, TSD, MIDILike) and the `midi` decoder (mido.MidiFile out). Registered through the
`bpe_core` entry-point group."""

from bpe_core.contract import DecoderFactory, PretokenizerFactory, ReaderFactory
from bpe_core.hookspecs import hookimpl
from bpe_midi.decoding import MidiDecoder
from bpe_midi.events import MidiEventPretokenizer
from bpe_midi.metrics import metrics
from bpe_midi.reader import MidiReader

__version__ = "0.1.0"
__all__ = ["metrics"]


@hookimpl
def bpe_core_pretokenizers() -> dict[str, PretokenizerFactory]:
    return {"midi-events": MidiEventPretokenizer}


@hookimpl
def bpe_core_readers() -> dict[str, ReaderFactory]:
    return {"midi": MidiReader}


@hookimpl
def bpe_core_decoders() -> dict[str, DecoderFactory]:
    return {"midi": MidiDecoder}
