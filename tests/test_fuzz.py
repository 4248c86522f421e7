"""Fuzzing what users hand us: tokenizer files, configs and MIDI files, mutated from valid ones.

Every mutation (a key dropped, a value of another type, a huge or negative number, deep
nesting, aliases; for MIDI a flipped byte, a cut, a huge delta time) must give a clean error (a
BpeError in the library, one `error:` line and exit 2 from the CLI) or a correct result, never
any other exception. The library is called in-process (fast), under a bound on this process's
address space, so a blow-up is a MemoryError and a failed example rather than a dead machine; a
few examples run the `bpe` command itself, bounded in time and memory.
"""

import contextlib
import copy
import json
import resource
import shutil
import signal
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli_runner import assert_clean_error, run_bpe_bounded
from helpers.midi import REMI_BPE_CONFIG, pop909_paths
from helpers.paths import CONFIGS_DIR, LAMBDA_PATH
from helpers.text import training_text
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import bpe_core
import bpe_core.training
from bpe_core.errors import BpeError
from bpe_core.plugins import registry

# Shrinking reruns a failing example many times, and a failing example here may take seconds
# before it fails (a memory blow-up): report the first one found, as found.
FUZZ = settings(
    max_examples=60,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    deadline=None,
)
CLI_EXAMPLES = settings(FUZZ, max_examples=4)
HEADROOM_MB = 1536  # address space an in-process call may take beyond what the test process has
SECONDS = 20  # time an in-process example may take (valid inputs take well under a second)
SAMPLE = "Decoding must give back exactly this: tabs\t, accents é, emoji 🎵 and a last line\n"


@contextlib.contextmanager
def bounded(megabytes: int = HEADROOM_MB, seconds: float = SECONDS) -> Iterator[None]:
    """For the block: this process's address space capped at its current size plus `megabytes`
    (a blow-up is a MemoryError), and a TimeoutError after `seconds` (a hang is a failure)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as handle:
        current = int(handle.read().split()[0]) * resource.getpagesize()
    limit = current + megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))

    def too_long(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the example ran over {seconds} s")

    previous = signal.signal(signal.SIGALRM, too_long)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class Inputs(dict[str, Any]):
    """The valid inputs; shown short, since hypothesis prints a failing test's arguments."""

    def __repr__(self) -> str:
        return f"<valid inputs: {', '.join(self)}>"


def fresh(tmp_path: Path) -> Path:
    """A new directory per example: hypothesis runs every example in the same `tmp_path`."""
    return Path(tempfile.mkdtemp(dir=tmp_path))


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Valid inputs to mutate: text, DNA and MIDI tokenizer files (parsed), three configs (parsed),
    MIDI songs (bytes), and a small text corpus."""
    directory = tmp_path_factory.mktemp("fuzz-valid")
    corpus = directory / "corpus.txt"
    corpus.write_text(training_text()[:50_000], encoding="utf-8", newline="")
    songs = pop909_paths()[:3]
    tokenizers = {
        "text": bpe_core.train(
            str(CONFIGS_DIR / "gpt2-style.yaml"), [str(corpus)], {"trainer.vocab_size": 300}, progress=False
        ),
        "dna": bpe_core.train(
            str(CONFIGS_DIR / "dnabert2-style.yaml"), [str(LAMBDA_PATH)], {"trainer.vocab_size": 280}, progress=False
        ),
        "midi": bpe_core.train(
            str(REMI_BPE_CONFIG), [str(path) for path in songs], {"trainer.vocab_size": 500}, progress=False
        ),
    }
    files = {}
    for name, tokenizer in tokenizers.items():
        tokenizer.save(str(directory / f"{name}.json"))
        files[name] = json.loads((directory / f"{name}.json").read_text(encoding="utf-8"))
    configs = {
        name: yaml.safe_load((CONFIGS_DIR / name).read_text(encoding="utf-8"))
        for name in ("gpt2-style.yaml", "dnabert2-style.yaml", "midi-remi-bpe.yaml")
    }
    return Inputs(
        {
            "directory": directory,
            "corpus": corpus,
            "tokenizer_files": files,
            "midi_tokenizer": directory / "midi.json",
            "configs": configs,
            "songs": [path.read_bytes() for path in songs],
        }
    )


# ---------------------------------------------------------------------------------------------
# structural mutations of parsed JSON and YAML


def _deep(depth: int) -> Any:
    nested: Any = 0
    for _ in range(depth):
        nested = [nested]
    return nested


REPLACEMENTS = st.one_of(
    st.sampled_from([None, True, False, "", "x", "<|endoftext|>", [], {}, [5], {"a": 1}, [[1, 2]], ["a"]]),
    st.sampled_from([0, -1, -5, 1.5, -0.0, 2**31, 2**32 + 7, 2**63, -(2**63) - 1, 10**10, 10**30, 1e30, float("inf")]),
    st.integers(-3, 70_000),
    st.text(max_size=8),
)


@dataclass(frozen=True)
class Mutation:
    """One change to a JSON or YAML document: at `path` (keys from the root), `replace` the node
    by `value`, `drop` it, `nest` it `value` lists deep, or `duplicate` it in its list. Its repr
    is what hypothesis reports for a failing example (the documents are far too long to print)."""

    path: tuple[Any, ...]
    action: str
    value: Any = None

    def __repr__(self) -> str:
        shown = repr(self.value)
        return f"{self.action} at {list(self.path)}" + ("" if self.action == "drop" else f": {shown[:60]}")

    def apply(self, document: Any) -> Any:
        if not self.path:
            return _deep(self.value) if self.action == "nest" else self.value
        result = copy.deepcopy(document)
        parent = result
        for key in self.path[:-1]:
            parent = parent[key]
        key = self.path[-1]
        if self.action == "drop":
            del parent[key]
        elif self.action == "nest":
            parent[key] = _deep(self.value)
        elif self.action == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[key] = self.value
        return result


@st.composite
def mutations(draw: st.DrawFn, document: Any) -> Mutation:
    """A mutation somewhere in `document`, deeper nodes as likely as shallow ones."""
    path: list[Any] = []
    node = document
    while isinstance(node, (dict, list)) and node and draw(st.integers(0, 3)) > 0:  # descend most of the time
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    action = draw(st.sampled_from(["replace", "drop", "nest", "duplicate"]))
    if not path and action in ("drop", "duplicate"):
        action = "replace"
    if action == "nest":
        return Mutation(tuple(path), action, draw(st.sampled_from([2, 50, 100_000])))
    if action == "replace":
        return Mutation(tuple(path), action, draw(REPLACEMENTS))
    return Mutation(tuple(path), action)


def _json_text(document: Any) -> str:
    """JSON text, even for documents nested deeper than the json module writes."""
    try:
        return json.dumps(document, ensure_ascii=False)
    except RecursionError:
        return _json_by_hand(document)


def _json_by_hand(document: Any) -> str:
    parts: list[str] = []
    stack: list[Any] = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and item in ("\0[", "\0]", "\0,", "\0:", "\0{", "\0}"):
            parts.append(item[1])
        elif isinstance(item, list):
            stack.append("\0]")
            for index, element in reversed(list(enumerate(item))):
                stack.append(element)
                if index:
                    stack.append("\0,")
            stack.append("\0[")
        elif isinstance(item, dict):
            stack.append("\0}")
            for index, (name, value) in reversed(list(enumerate(item.items()))):
                stack.append(value)
                stack.append("\0:")
                stack.append(str(name))
                if index:
                    stack.append("\0,")
            stack.append("\0{")
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "".join(parts)


def _yaml_text(document: Any) -> str:
    try:
        return yaml.safe_dump(document, allow_unicode=True, sort_keys=False)
    except RecursionError:
        return _json_by_hand(document)  # JSON is YAML


# ---------------------------------------------------------------------------------------------
# tokenizer files


def _check_loaded(tokenizer: bpe_core.Tokenizer, kind: str) -> None:
    """A tokenizer file that loads must work: text round-trips exactly, DNA and MIDI ids decode."""
    if kind == "text":
        assert tokenizer.decode(tokenizer.encode(SAMPLE)) == SAMPLE
    elif kind == "dna":
        sequence = "ACGTTGCAACGTNACGT"
        assert tokenizer.decode(tokenizer.encode(sequence)) == sequence
    ids = list(range(min(tokenizer.vocab_size, 64)))
    try:
        tokenizer.decode(ids)
    except BpeError:
        pass  # ids of special tokens or padding may be refused, with a clean error


@pytest.mark.both_modes
@FUZZ
@given(data=st.data(), kind=st.sampled_from(["text", "dna", "midi"]))
def test_a_mutated_tokenizer_file_loads_and_works_or_is_a_clean_error(
    valid: dict[str, Any], tmp_path: Path, data: st.DataObject, kind: str
) -> None:
    tmp_path = fresh(tmp_path)
    mutation = data.draw(mutations(valid["tokenizer_files"][kind]))
    path = tmp_path / "tokenizer.json"
    path.write_text(_json_text(mutation.apply(valid["tokenizer_files"][kind])), encoding="utf-8")
    with bounded():
        try:
            tokenizer = bpe_core.load(str(path))
        except BpeError:
            return
        try:
            _check_loaded(tokenizer, kind)
        except BpeError:
            return


@pytest.mark.both_modes
@CLI_EXAMPLES
@given(data=st.data())
def test_bpe_inspect_of_a_mutated_tokenizer_file_succeeds_or_is_one_error_line(
    valid: dict[str, Any], tmp_path: Path, data: st.DataObject
) -> None:
    tmp_path = fresh(tmp_path)
    mutation = data.draw(mutations(valid["tokenizer_files"]["text"]))
    (tmp_path / "tokenizer.json").write_text(
        _json_text(mutation.apply(valid["tokenizer_files"]["text"])), encoding="utf-8"
    )
    result = run_bpe_bounded("inspect", "tokenizer.json", cwd=tmp_path, timeout=30, memory_mb=1024)
    if result.returncode != 0:
        assert_clean_error(result, "tokenizer.json")


# ---------------------------------------------------------------------------------------------
# configs

RAW_YAML = [
    "name: x\nlist: &r [1, *r]\n",
    "name: x\ntrainer: " + "[" * 20_000 + "]" * 20_000 + "\n",
    "a: &a [1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, "
    "*b]\nd: [*c, *c, *c]\n",
    "name: x\ntrainer: {vocab_size: 1e30}\n",
    "name: x\ntrainer: {vocab_size: .inf}\n",
    "!!python/object/apply:os.system ['true']\n",
    "name: x\nname: y\n",
    "- just\n- a list\n",
    "",
    "\t\x00\x01",
]


@dataclass(frozen=True)
class ConfigText:
    """A config file: one of RAW_YAML (`raw` its index), or a shipped config with a mutation,
    written in an encoding (`latin-1-bytes`: UTF-8 with a Latin-1 byte in a comment)."""

    config: str
    mutation: Mutation | None
    encoding: str
    raw: int = -1

    def text(self, configs: dict[str, Any]) -> bytes:
        if self.raw >= 0:
            return RAW_YAML[self.raw].encode("utf-8")
        assert self.mutation is not None
        text = _yaml_text(self.mutation.apply(configs[self.config]))
        if self.encoding == "latin-1-bytes":
            return text.encode("utf-8") + b"\n# caf\xe9\n"
        return text.encode(self.encoding)


@st.composite
def config_texts(draw: st.DrawFn, configs: dict[str, Any]) -> ConfigText:
    if draw(st.integers(0, 9)) == 0:
        return ConfigText("", None, "utf-8", draw(st.integers(0, len(RAW_YAML) - 1)))
    name = draw(st.sampled_from(sorted(configs)))
    encoding = draw(st.sampled_from(["utf-8"] * 6 + ["utf-16", "latin-1-bytes"]))
    return ConfigText(name, draw(mutations(configs[name])), encoding)


@pytest.mark.both_modes
@FUZZ
@given(data=st.data())
def test_a_mutated_config_validates_or_is_a_clean_error(
    valid: dict[str, Any], tmp_path: Path, data: st.DataObject
) -> None:
    tmp_path = fresh(tmp_path)
    path = tmp_path / "config.yaml"
    path.write_bytes(data.draw(config_texts(valid["configs"])).text(valid["configs"]))
    with bounded():
        try:
            summary = bpe_core.training.check_config(str(path), files=[str(valid["corpus"])])
        except BpeError:
            return
    assert "vocab" in summary


@pytest.mark.both_modes
@CLI_EXAMPLES
@given(data=st.data())
def test_bpe_train_with_a_mutated_config_trains_or_is_one_error_line(
    valid: dict[str, Any], tmp_path: Path, data: st.DataObject
) -> None:
    tmp_path = fresh(tmp_path)
    (tmp_path / "config.yaml").write_bytes(data.draw(config_texts(valid["configs"])).text(valid["configs"]))
    shutil.copy(valid["corpus"], tmp_path / "corpus.txt")
    result = run_bpe_bounded(
        "train", "config.yaml", "corpus.txt", "-o", "out.json", "-q", cwd=tmp_path, timeout=30, memory_mb=1024
    )
    if result.returncode == 0:
        tokenizer = bpe_core.load(str(tmp_path / "out.json"))
        assert tokenizer.vocab_size > 0
    else:
        # a reader that skips (MIDI on a text corpus) names each skipped file in a warning first
        errors = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
        assert "Traceback" not in result.stderr and result.returncode == 2, result.stderr
        assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
        assert not (tmp_path / "out.json").exists()


# ---------------------------------------------------------------------------------------------
# MIDI files


def _vlq(value: int) -> bytes:
    """A MIDI variable-length quantity (at most 2^28 - 1)."""
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(groups))


@dataclass(frozen=True)
class MidiMutation:
    """Changes to a valid song (`song` its index): each (action, position, value), positions
    taken modulo the length at the time. Short to print, unlike the bytes."""

    song: int
    changes: tuple[tuple[str, int, int], ...]

    def apply(self, songs: list[bytes]) -> bytes:
        data = bytearray(songs[self.song])
        for action, position, value in self.changes:
            if not data:
                break
            position %= len(data)
            if action == "flip":
                data[position] ^= 1 << value
            elif action == "cut":
                del data[position:]
            elif action == "delta":
                # a note after a huge delta time, spliced in as the first track's first event
                track = data.find(b"MTrk")
                if track >= 0 and track + 8 < len(data):
                    event = _vlq(value) + bytes([0x90, 60, 64])
                    data[track + 8 : track + 8] = event
                    length = int.from_bytes(data[track + 4 : track + 8], "big") + len(event)
                    data[track + 4 : track + 8] = length.to_bytes(4, "big")
            elif action == "zeros":
                data[position : position + 16] = bytes(16)
            elif action == "one-tick-beats" and len(data) > 13:  # huge deltas become huge songs
                data[12:14] = (1).to_bytes(2, "big")
            elif len(data) > 13:  # a header byte: format, track count or ticks per beat
                data[8 + position % 6] = value
        return bytes(data)


@st.composite
def midi_mutations(draw: st.DrawFn, songs: list[bytes]) -> MidiMutation:
    changes = []
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["flip", "cut", "delta", "zeros", "header", "one-tick-beats"]))
        position = draw(st.integers(0, 1 << 20))
        value = {
            "flip": st.integers(0, 7),
            "delta": st.sampled_from([2**14, 2**21 - 1, 2**28 - 1]),
            "header": st.sampled_from([0, 1, 0x7F, 0x80, 0xFF]),
        }.get(action, st.just(0))
        changes.append((action, position, draw(value)))
    return MidiMutation(draw(st.integers(0, len(songs) - 1)), tuple(changes))


@pytest.fixture(scope="module")
def midi_tokenizer(valid: dict[str, Any]) -> bpe_core.Tokenizer:
    return bpe_core.load(str(valid["midi_tokenizer"]))


@pytest.mark.both_modes
@FUZZ
@given(data=st.data())
def test_a_mutated_midi_file_encodes_and_decodes_or_is_a_clean_error(
    valid: dict[str, Any], midi_tokenizer: bpe_core.Tokenizer, tmp_path: Path, data: st.DataObject
) -> None:
    tmp_path = fresh(tmp_path)
    song = tmp_path / "song.mid"
    song.write_bytes(data.draw(midi_mutations(valid["songs"])).apply(valid["songs"]))
    reader = registry().reader("midi", {"on_error": "error"})
    with bounded():
        try:
            documents = list(reader.documents([str(song)], strict=True))
            ids = [token for document in documents for token in midi_tokenizer.encode(document)]
        except BpeError:
            return
        assert all(0 <= token < midi_tokenizer.vocab_size for token in ids)
        decoded = midi_tokenizer.decode(ids)
        midi_tokenizer.decoder.write(decoded, str(tmp_path / "decoded.mid"))
    assert (tmp_path / "decoded.mid").read_bytes()[:4] == b"MThd"


@pytest.mark.both_modes
@CLI_EXAMPLES
@given(data=st.data())
def test_bpe_encode_of_a_mutated_midi_file_succeeds_or_is_one_error_line(
    valid: dict[str, Any], tmp_path: Path, data: st.DataObject
) -> None:
    tmp_path = fresh(tmp_path)
    (tmp_path / "song.mid").write_bytes(data.draw(midi_mutations(valid["songs"])).apply(valid["songs"]))
    result = run_bpe_bounded(
        "encode",
        "-t",
        valid["midi_tokenizer"],
        "song.mid",
        "-o",
        "song.ids",
        "-q",
        cwd=tmp_path,
        timeout=30,
        memory_mb=1024,
    )
    if result.returncode != 0:
        assert_clean_error(result, "song.mid")
        assert not (tmp_path / "song.ids").exists()
