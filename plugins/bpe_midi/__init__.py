"""Built-in MIDI plugin: the `midi` reader (a compiled exact parser, or mido), the `midi-events`
event pretokenizer (REMI, TSD, MIDILike) and the `midi` decoder (mido.MidiFile out). Registered through the
`bpe_core` entry-point group.

Each component's module is imported when the component is built, not when the plugin is found:
every command that builds a component finds all plugins, and one of text should not pay for
MIDI's modules. `metrics` is imported here: its name is also its module's.
"""

from typing import Any

from bpe_core.contract import Decoder, DecoderFactory, Pretokenizer, PretokenizerFactory, Reader, ReaderFactory
from bpe_core.hookspecs import hookimpl
from bpe_midi.metrics import metrics

__version__ = "0.1.0"
__all__ = ["metrics"]


def event_pretokenizer(options: dict[str, Any]) -> Pretokenizer:
    from bpe_midi.events import MidiEventPretokenizer

    return MidiEventPretokenizer(options)


def midi_reader(options: dict[str, Any]) -> Reader:
    from bpe_midi.reader import MidiReader

    return MidiReader(options)


def midi_decoder(options: dict[str, Any]) -> Decoder:
    from bpe_midi.decoding import MidiDecoder

    return MidiDecoder(options)


@hookimpl
def bpe_core_pretokenizers() -> dict[str, PretokenizerFactory]:
    return {"midi-events": event_pretokenizer}


@hookimpl
def bpe_core_readers() -> dict[str, ReaderFactory]:
    return {"midi": midi_reader}


@hookimpl
def bpe_core_decoders() -> dict[str, DecoderFactory]:
    return {"midi": midi_decoder}
