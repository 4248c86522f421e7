"""Pipeline configuration: YAML files and dicts of the same shape, dotted-key overrides, and what
every key does to the trained tokenizer.

Errors are BpeError with a message that names the file (or <dict>), the dotted key and what is
allowed. Training runs on slices of the Python documentation with small vocabularies.
"""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import regex
import yaml
from helpers.paths import CONFIGS_DIR
from helpers.patterns import GPT2_PATTERN
from helpers.text import EOT, paragraphs, training_text

import bpe_core
from bpe_core import BpeError
from bpe_core.config import (
    ComponentConfig,
    Config,
    InputConfig,
    SampleConfig,
    SpecialTokensConfig,
    TrainerConfig,
    load_config,
)

SHIPPED = ["gpt2-style.yaml", "cl100k-style.yaml", "o200k-style.yaml"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation slice as one text file."""
    path = tmp_path_factory.mktemp("config") / "docs.txt"
    path.write_text(training_text(), encoding="utf-8", newline="")
    return path


@pytest.fixture(scope="module")
def jsonl_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation slice as JSON Lines, one paragraph per record (field "text")."""
    path = tmp_path_factory.mktemp("config-jsonl") / "docs.jsonl"
    path.write_text(
        "".join(json.dumps({"text": paragraph}) + "\n" for paragraph in paragraphs(training_text())), encoding="utf-8"
    )
    return path


def gpt2_config(**sections: object) -> dict:
    config: dict = {"name": "test", "pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 400}}
    config.update(sections)
    return config


def train(config: dict | str | Path, files: list | None = None, overrides: dict | None = None) -> bpe_core.Tokenizer:
    return bpe_core.train(config, files, overrides, workers=1, progress=False)


def merged_ids(tokenizer: bpe_core.Tokenizer) -> range:
    first = tokenizer.alphabet_size + (len(tokenizer.special_tokens) if tokenizer.special_position == "start" else 0)
    return range(first, first + len(tokenizer.merges))


def config_error(source: dict | str | Path, overrides: dict | None = None) -> str:
    with pytest.raises(BpeError) as error:
        load_config(source, overrides)
    return str(error.value)


# ---------------------------------------------------------------- the shipped configs


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_loads_with_the_values_its_yaml_states(name: str) -> None:
    path = CONFIGS_DIR / name
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    config = load_config(path)
    assert config.origin == str(path)
    assert config.name == raw["name"]
    assert config.input.reader == raw["input"]["reader"]
    assert config.input.paths == tuple(raw["input"]["paths"])
    assert config.normalizers == ()
    assert config.pretokenizer == ComponentConfig(raw["pretokenizer"]["name"], {})
    assert config.trainer.vocab_size == raw["trainer"]["vocab_size"]
    assert config.trainer.min_frequency == raw["trainer"]["min_frequency"]
    assert config.trainer.tie_break == raw["trainer"]["tie_break"]
    assert config.trainer.max_token_length == raw["trainer"].get("max_token_length")
    assert config.trainer.pad_to_multiple_of == raw["trainer"].get("pad_to_multiple_of")
    assert config.special_tokens == SpecialTokensConfig(
        tuple(raw["special_tokens"]["tokens"]), raw["special_tokens"]["position"]
    )
    assert config.output == raw["output"]


# ---------------------------------------------------------------- every key


def test_a_config_with_every_key_trains_and_is_recorded_in_the_tokenizer(corpus: Path, tmp_path: Path) -> None:
    config = {
        "name": "every-key",
        "input": {"reader": "text", "paths": [str(corpus)], "sample": {"fraction": 1.0, "seed": 3}},
        "normalizer": ["nfc"],
        "pretokenizer": {"name": "regex", "pattern": GPT2_PATTERN},
        "trainer": {
            "vocab_size": 380,
            "min_frequency": 2,
            "max_token_length": 12,
            "tie_break": "largest",
            "pad_to_multiple_of": 64,
        },
        "special_tokens": {"tokens": [EOT, "<|pad|>"], "position": "start"},
        "output": "every-key.json",
    }
    tokenizer = train(config)
    assert tokenizer.name == "every-key"
    assert tokenizer.vocab_size == 384  # 380 rounded up to a multiple of 64
    assert len(tokenizer.merges) == 380 - 256 - 2
    assert tokenizer.special_ids == {EOT: 0, "<|pad|>": 1}
    assert min(tokenizer.merge_counts) >= 2
    assert max(len(tokenizer.token_symbols(token)) for token in merged_ids(tokenizer)) <= 12
    assert tokenizer.pretokenizer.name == "regex"
    assert tokenizer.provenance["sampled_fraction"] == 1.0
    # the recorded config describes the same pipeline, also after a save and load
    path = tmp_path / "every-key.json"
    tokenizer.save(path)
    for recorded in (tokenizer.config, bpe_core.load(path).config):
        assert dataclasses.replace(load_config(recorded), origin="x") == dataclasses.replace(
            load_config(config), origin="x"
        )


@pytest.mark.parametrize("name", SHIPPED)
def test_to_dict_gives_a_dict_config_equal_to_the_yaml_one(name: str) -> None:
    config = load_config(CONFIGS_DIR / name)
    assert load_config(config.to_dict()) == dataclasses.replace(config, origin="<dict>")


def test_name_becomes_the_tokenizer_name(corpus: Path) -> None:
    assert train(gpt2_config(name="docs-gpt2"), [corpus]).name == "docs-gpt2"


def test_input_paths_are_read_when_no_files_are_given(corpus: Path) -> None:
    tokenizer = train(gpt2_config(input={"paths": [str(corpus.parent / "*.txt")]}))
    assert [source["path"] for source in tokenizer.provenance["inputs"]] == [str(corpus)]


def test_files_argument_replaces_input_paths(corpus: Path) -> None:
    tokenizer = train(gpt2_config(input={"paths": ["/nonexistent/*.txt"]}), [corpus])
    assert [source["path"] for source in tokenizer.provenance["inputs"]] == [str(corpus)]


def test_relative_input_paths_resolve_against_the_config_files_directory(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project" / "data").mkdir(parents=True)
    shutil.copy(corpus, tmp_path / "project" / "data" / "docs.txt")
    config_path = tmp_path / "project" / "pipeline.yaml"
    config_path.write_text(yaml.safe_dump(gpt2_config(input={"paths": ["data/*.txt"]})), encoding="utf-8")
    (tmp_path / "elsewhere" / "data").mkdir(parents=True)  # a decoy beside the working directory
    (tmp_path / "elsewhere" / "data" / "decoy.txt").write_text("decoy", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "elsewhere")
    tokenizer = train(config_path)
    assert [Path(source["path"]).resolve() for source in tokenizer.provenance["inputs"]] == [
        (tmp_path / "project" / "data" / "docs.txt").resolve()
    ]


def test_relative_input_paths_of_a_dict_config_resolve_against_the_working_directory(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(corpus.parent)
    tokenizer = train(gpt2_config(input={"paths": ["docs.txt"]}))
    assert tokenizer.provenance["inputs"][0]["size"] == corpus.stat().st_size


def test_no_input_at_all_is_an_error_naming_input_paths() -> None:
    with pytest.raises(BpeError, match=r"<dict>: input\.paths"):
        train(gpt2_config())


def test_jsonl_reader_trains_on_the_configured_field_of_each_record(tmp_path: Path) -> None:
    documents = paragraphs(training_text())[:300]
    path = tmp_path / "records.jsonl"
    path.write_text(
        "".join(json.dumps({"body": text, "id": index}) + "\n" for index, text in enumerate(documents)),
        encoding="utf-8",
    )
    tokenizer = train(gpt2_config(input={"reader": "jsonl", "field": "body", "paths": [str(path)]}))
    chunks = [chunk for text in documents for chunk in regex.findall(GPT2_PATTERN, text)]
    assert tokenizer.provenance["chunks"] == len(chunks)
    assert tokenizer.provenance["unique_chunks"] == len(set(chunks))
    assert tokenizer.provenance["symbols"] == sum(len(text.encode("utf-8")) for text in documents)


@pytest.mark.parametrize("vocab_size", [257, 300, 456])
def test_vocab_size_is_the_size_of_the_trained_vocabulary(corpus: Path, vocab_size: int) -> None:
    tokenizer = train(gpt2_config(trainer={"vocab_size": vocab_size}, special_tokens={"tokens": [EOT]}), [corpus])
    assert tokenizer.vocab_size == vocab_size
    assert len(tokenizer.merges) == vocab_size - 257


@pytest.mark.parametrize("value", ["lots", 300.5, True, [300]])
def test_vocab_size_must_be_an_integer(value: object) -> None:
    message = config_error(gpt2_config(trainer={"vocab_size": value}))
    assert "<dict>" in message and "trainer.vocab_size" in message and repr(value) in message


def test_vocab_size_below_base_symbols_plus_special_tokens_names_the_minimum(corpus: Path) -> None:
    config = gpt2_config(trainer={"vocab_size": 258}, special_tokens={"tokens": [EOT, "<|a|>", "<|b|>"]})
    with pytest.raises(BpeError) as error:
        train(config, [corpus])
    assert "trainer.vocab_size" in str(error.value) and "259" in str(error.value)


def test_min_frequency_stops_training_before_the_first_rarer_pair(corpus: Path) -> None:
    everything = train(gpt2_config(trainer={"vocab_size": 2500}), [corpus])
    frequent = train(gpt2_config(trainer={"vocab_size": 2500, "min_frequency": 40}), [corpus])
    learned = len(frequent.merges)
    assert 0 < learned < len(everything.merges)
    # the largest pair count never grows during training, so the result is a prefix
    assert frequent.merges == everything.merges[:learned]
    assert min(frequent.merge_counts) >= 40
    assert everything.merge_counts[learned] < 40


@pytest.mark.parametrize("value", [0, -3, "often"])
def test_min_frequency_must_be_a_positive_integer(value: object) -> None:
    assert "trainer.min_frequency" in config_error(gpt2_config(trainer={"vocab_size": 300, "min_frequency": value}))


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_max_token_length_bounds_every_token_in_base_symbols(corpus: Path, limit: int) -> None:
    tokenizer = train(gpt2_config(trainer={"vocab_size": 500, "max_token_length": limit}), [corpus])
    assert max((len(tokenizer.token_symbols(token)) for token in merged_ids(tokenizer)), default=0) <= limit
    if limit == 1:
        assert tokenizer.merges == []


def test_without_max_token_length_long_tokens_are_learned(corpus: Path) -> None:
    tokenizer = train(gpt2_config(trainer={"vocab_size": 500}), [corpus])
    assert max(len(tokenizer.token_symbols(token)) for token in merged_ids(tokenizer)) > 5


@pytest.mark.parametrize(
    ("rule", "first_merge"), [("smallest", (ord("a"), ord("b"))), ("largest", (ord("y"), ord("z")))]
)
def test_tie_break_decides_between_pairs_of_equal_count(
    tmp_path: Path, rule: str, first_merge: tuple[int, int]
) -> None:
    path = tmp_path / "ties.txt"
    path.write_text("ab yz cd ab yz cd\n", encoding="utf-8")  # three pairs, each seen twice
    config = gpt2_config(pretokenizer={"name": "whitespace"}, trainer={"vocab_size": 257, "tie_break": rule})
    assert train(config, [path]).merges == [first_merge]


def test_tie_break_accepts_every_rule_the_design_names() -> None:
    for rule in ("smallest", "largest", "hf"):
        assert load_config(gpt2_config(trainer={"vocab_size": 300, "tie_break": rule})).trainer.tie_break == rule


def test_tie_break_unknown_rule_lists_the_allowed_ones() -> None:
    message = config_error(gpt2_config(trainer={"vocab_size": 300, "tie_break": "smalest"}))
    assert "trainer.tie_break" in message and "largest" in message and "did you mean 'smallest'" in message


def test_special_tokens_listed_twice_is_an_error() -> None:
    message = config_error(gpt2_config(special_tokens={"tokens": [EOT, "<|pad|>", EOT]}))
    assert "special_tokens.tokens" in message and EOT in message


@pytest.mark.parametrize("tokens", [[""], [EOT, 5], {"eot": EOT}])
def test_special_tokens_must_be_non_empty_strings(tokens: object) -> None:
    assert "special_tokens.tokens" in config_error(gpt2_config(special_tokens={"tokens": tokens}))


def test_special_tokens_position_must_be_start_or_end() -> None:
    message = config_error(gpt2_config(special_tokens={"tokens": [EOT], "position": "begin"}))
    assert "special_tokens.position" in message and "start" in message and "end" in message


def test_output_is_kept_in_the_config() -> None:
    assert load_config(gpt2_config(output="models/docs.json")).output == "models/docs.json"


def test_missing_pretokenizer_name_is_an_error() -> None:
    assert "pretokenizer.name" in config_error({"trainer": {"vocab_size": 300}})


# ---------------------------------------------------------------- normalizers


@pytest.mark.parametrize(
    ("setting", "names"),
    [
        (None, []),
        ("none", []),
        ("nfc", ["nfc"]),
        ({"name": "nfkc"}, ["nfkc"]),
        (["nfkc", "lowercase"], ["nfkc", "lowercase"]),
        ([{"name": "nfd"}, "lowercase"], ["nfd", "lowercase"]),
    ],
)
def test_normalizer_is_none_a_name_a_mapping_or_a_list(setting: object, names: list[str]) -> None:
    config = load_config(gpt2_config(normalizer=setting))
    assert [item.name for item in config.normalizers] == names


@pytest.mark.parametrize(
    ("setting", "text", "normalized"),
    [
        ("none", "ﬁ Café ℌ", "ﬁ Café ℌ"),
        ("nfc", "Cafe\u0301", "Café"),
        ("nfkc", "ﬁ ①", "fi 1"),
        ("lowercase", "Python DOCS", "python docs"),
        (["nfkc", "lowercase"], "ℌello", "hello"),  # NFKC turns ℌ into H, which lowercase turns into h
        (["lowercase", "nfkc"], "ℌello", "Hello"),  # ℌ has no lower case, so order matters
    ],
)
def test_normalizers_apply_in_order_when_encoding(corpus: Path, setting: object, text: str, normalized: str) -> None:
    tokenizer = train(gpt2_config(normalizer=setting, trainer={"vocab_size": 300}), [corpus])
    assert tokenizer.normalize(text) == normalized
    assert tokenizer.decode(tokenizer.encode(text)) == normalized
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == normalized


def test_normalizers_apply_to_the_training_text(corpus: Path) -> None:
    tokenizer = train(gpt2_config(normalizer="lowercase", trainer={"vocab_size": 600}), [corpus])
    learned = b"".join(tokenizer.token_bytes(token) for token in merged_ids(tokenizer))
    assert not any(ord("A") <= byte <= ord("Z") for byte in learned)


@pytest.mark.parametrize("setting", [5, {"nam": "nfc"}, [["nfc"]], [{"name": 3}]])
def test_normalizer_of_the_wrong_shape_is_an_error_naming_the_key(setting: object) -> None:
    assert "normalizer" in config_error(gpt2_config(normalizer=setting))


def test_unknown_normalizer_is_an_error_naming_the_key_and_the_known_ones(corpus: Path) -> None:
    with pytest.raises(BpeError) as error:
        train(gpt2_config(normalizer=["nfc", "nfkx"]), [corpus])
    message = str(error.value)
    assert "<dict>" in message and "normalizer" in message and "nfkx" in message and "nfkc" in message


def test_normalizer_with_an_unknown_option_is_an_error(corpus: Path) -> None:
    with pytest.raises(BpeError, match="form"):
        train(gpt2_config(normalizer={"name": "nfkc", "form": "NFC"}), [corpus])


# ---------------------------------------------------------------- input.sample


def sampled(jsonl_corpus: Path, **sample: object) -> bpe_core.Tokenizer:
    return train(
        gpt2_config(
            input={"reader": "jsonl", "paths": [str(jsonl_corpus)], "sample": sample}, trainer={"vocab_size": 500}
        )
    )


def jsonl_bytes(path: Path) -> int:
    return sum(len(json.loads(line)["text"].encode("utf-8")) for line in path.read_text(encoding="utf-8").splitlines())


def test_sample_with_the_same_seed_gives_identical_merges(jsonl_corpus: Path) -> None:
    first = sampled(jsonl_corpus, fraction=0.4, seed=7)
    second = sampled(jsonl_corpus, fraction=0.4, seed=7)
    assert first.merges == second.merges and first.merge_counts == second.merge_counts
    assert first.provenance["symbols"] == second.provenance["symbols"]


def test_sample_with_another_seed_usually_gives_other_merges(jsonl_corpus: Path) -> None:
    reference = sampled(jsonl_corpus, fraction=0.4, seed=0)
    others = [sampled(jsonl_corpus, fraction=0.4, seed=seed) for seed in (1, 2, 3)]
    assert any(other.merge_counts != reference.merge_counts or other.merges != reference.merges for other in others)


def test_sample_fraction_trains_on_about_that_fraction_of_the_input(jsonl_corpus: Path) -> None:
    full = sampled(jsonl_corpus, fraction=1.0)
    part = sampled(jsonl_corpus, fraction=0.3, seed=5)
    assert full.provenance["symbols"] == jsonl_bytes(jsonl_corpus)
    assert part.provenance["sampled_fraction"] == 0.3
    assert 0.2 < part.provenance["symbols"] / full.provenance["symbols"] < 0.4


def test_sample_bytes_trains_on_about_the_budget(jsonl_corpus: Path) -> None:
    total = jsonl_bytes(jsonl_corpus)
    tokenizer = sampled(jsonl_corpus, bytes=50_000, seed=1)
    assert tokenizer.provenance["sampled_fraction"] == pytest.approx(50_000 / total, rel=0.02)
    assert 30_000 < tokenizer.provenance["symbols"] < 70_000


def test_sample_bytes_larger_than_the_input_keeps_everything(jsonl_corpus: Path) -> None:
    tokenizer = sampled(jsonl_corpus, bytes=10**9)
    assert tokenizer.provenance["sampled_fraction"] == 1.0
    assert tokenizer.provenance["symbols"] == jsonl_bytes(jsonl_corpus)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sample_bytes_from_one_text_file_trains_on_about_the_budget(corpus: Path, seed: int) -> None:
    config = gpt2_config(input={"sample": {"bytes": 50_000, "seed": seed}}, trainer={"vocab_size": 400})
    tokenizer = train(config, [corpus])
    assert 25_000 < tokenizer.provenance["symbols"] < 100_000
    assert tokenizer.vocab_size == 400


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sample_fraction_of_one_text_file_trains_on_about_that_fraction(corpus: Path, seed: int) -> None:
    config = gpt2_config(input={"sample": {"fraction": 0.5, "seed": seed}}, trainer={"vocab_size": 400})
    tokenizer = train(config, [corpus])
    assert 0.25 < tokenizer.provenance["symbols"] / len(training_text().encode("utf-8")) < 0.75


def test_no_sample_records_no_sampled_fraction(corpus: Path) -> None:
    tokenizer = train(gpt2_config(trainer={"vocab_size": 300}), [corpus])
    assert tokenizer.provenance["sampled_fraction"] is None
    assert tokenizer.provenance["symbols"] == corpus.stat().st_size


@pytest.mark.parametrize(
    ("sample", "key"),
    [
        ({"fraction": 0.5, "bytes": 1000}, "input.sample"),
        ({"seed": 3}, "input.sample"),
        ({"fraction": 0}, "input.sample.fraction"),
        ({"fraction": 1.5}, "input.sample.fraction"),
        ({"fraction": "half"}, "input.sample.fraction"),
        ({"bytes": 0}, "input.sample.bytes"),
        ({"fraction": 0.5, "seed": -1}, "input.sample.seed"),
        ({"fraction": 0.5, "seeds": 1}, "did you mean 'seed'"),
    ],
)
def test_bad_sample_settings_are_errors_naming_the_key(sample: dict, key: str) -> None:
    assert key in config_error(gpt2_config(input={"sample": sample}))


# ---------------------------------------------------------------- pad_to_multiple_of


def test_pad_to_multiple_of_rounds_the_vocabulary_up_with_reserved_ids(corpus: Path) -> None:
    tokenizer = train(
        gpt2_config(trainer={"vocab_size": 400, "pad_to_multiple_of": 64}, special_tokens={"tokens": [EOT]}), [corpus]
    )
    assert tokenizer.vocab_size == 448
    assert tokenizer.special_ids[EOT] == 399  # specials come before the padding
    reserved = range(400, 448)
    for token in (reserved[0], reserved[-1]):
        with pytest.raises(BpeError, match="reserved|padding"):
            tokenizer.decode([104, token, 105])
    ids = tokenizer.encode(training_text(), allowed_special="all")
    assert max(ids) < 400


def test_pad_to_multiple_of_adds_nothing_when_already_a_multiple(corpus: Path) -> None:
    tokenizer = train(gpt2_config(trainer={"vocab_size": 384, "pad_to_multiple_of": 128}), [corpus])
    assert tokenizer.vocab_size == 384 and len(tokenizer.merges) == 128


def test_pad_to_multiple_of_survives_save_and_load(corpus: Path, tmp_path: Path) -> None:
    tokenizer = train(gpt2_config(trainer={"vocab_size": 300, "pad_to_multiple_of": 100}), [corpus])
    tokenizer.save(tmp_path / "padded.json")
    loaded = bpe_core.load(tmp_path / "padded.json")
    assert loaded.vocab_size == 300 and tokenizer.vocab_size == 300
    padded = train(gpt2_config(trainer={"vocab_size": 301, "pad_to_multiple_of": 100}), [corpus])
    padded.save(tmp_path / "padded.json")
    loaded = bpe_core.load(tmp_path / "padded.json")
    assert loaded.vocab_size == 400
    with pytest.raises(BpeError, match="reserved|padding"):
        loaded.decode([399])


@pytest.mark.parametrize("value", [0, "64", 1.5])
def test_pad_to_multiple_of_must_be_a_positive_integer(value: object) -> None:
    assert "trainer.pad_to_multiple_of" in config_error(
        gpt2_config(trainer={"vocab_size": 300, "pad_to_multiple_of": value})
    )


# ---------------------------------------------------------------- overrides


def test_overrides_set_dotted_keys_of_a_yaml_config() -> None:
    config = load_config(
        CONFIGS_DIR / "gpt2-style.yaml", {"trainer.vocab_size": 1234, "special_tokens.position": "start"}
    )
    assert config.trainer.vocab_size == 1234
    assert config.special_tokens.position == "start"
    assert config.special_tokens.tokens == (EOT,)  # untouched neighbours stay
    assert config.trainer.tie_break == "smallest"


def test_overrides_create_missing_sections() -> None:
    config = load_config({"pretokenizer": {"name": "gpt2"}}, {"trainer.vocab_size": 300, "input.sample.fraction": 0.5})
    assert config.trainer.vocab_size == 300
    assert config.input.sample == SampleConfig(fraction=0.5, bytes=None, seed=0)


def test_overrides_leave_the_given_dict_unchanged() -> None:
    raw = gpt2_config(trainer={"vocab_size": 400})
    before = json.dumps(raw, sort_keys=True)
    load_config(raw, {"trainer.vocab_size": 300, "special_tokens.tokens": [EOT]})
    assert json.dumps(raw, sort_keys=True) == before


def test_an_override_changes_only_the_key_it_names_where_a_dict_config_gives_one_mapping_twice() -> None:
    sizes = {"vocab_size": 400}
    config = load_config(
        {"pretokenizer": {"name": "gpt2", "sizes": sizes}, "trainer": sizes}, {"trainer.vocab_size": 300}
    )
    assert config.trainer.vocab_size == 300
    assert config.pretokenizer.options["sizes"] == {"vocab_size": 400}


def test_train_applies_overrides(corpus: Path) -> None:
    tokenizer = train(gpt2_config(), [corpus], {"trainer.vocab_size": 310, "name": "overridden"})
    assert (tokenizer.vocab_size, tokenizer.name) == (310, "overridden")


def test_override_of_an_unknown_key_suggests_the_closest() -> None:
    message = config_error(CONFIGS_DIR / "gpt2-style.yaml", {"trainer.vocab_sise": 300})
    assert "gpt2-style.yaml" in message and "trainer.vocab_sise" in message and "did you mean 'vocab_size'" in message


@pytest.mark.parametrize("key", ["trainer..vocab_size", ".name", "trainer."])
def test_override_key_that_is_not_a_dotted_path_is_an_error(key: str) -> None:
    assert key in config_error(gpt2_config(), {key: 1})


def test_override_below_a_scalar_is_an_error_naming_it() -> None:
    message = config_error(gpt2_config(), {"name.first": "x"})
    assert "name.first" in message and "name" in message


# ---------------------------------------------------------------- frozen objects and errors


@pytest.mark.parametrize(
    ("path", "attribute"),
    [
        ((), "name"),
        (("input",), "paths"),
        (("input", "sample"), "seed"),
        (("pretokenizer",), "name"),
        (("trainer",), "vocab_size"),
        (("special_tokens",), "position"),
    ],
)
def test_config_objects_are_frozen(path: tuple[str, ...], attribute: str) -> None:
    config = load_config(
        gpt2_config(input={"paths": ["a.txt"], "sample": {"fraction": 0.5}}, special_tokens={"tokens": [EOT]})
    )
    target = config
    for step in path:
        target = getattr(target, step)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(target, attribute, getattr(target, attribute))
    assert isinstance(config.input.paths, tuple) and isinstance(config.special_tokens.tokens, tuple)


def test_config_classes_are_the_documented_ones() -> None:
    config = load_config(gpt2_config(normalizer="nfc", input={"sample": {"bytes": 100}}))
    assert isinstance(config, Config)
    assert isinstance(config.input, InputConfig) and isinstance(config.input.sample, SampleConfig)
    assert isinstance(config.trainer, TrainerConfig) and isinstance(config.special_tokens, SpecialTokensConfig)
    assert all(isinstance(item, ComponentConfig) for item in config.normalizers)


def test_unknown_top_level_key_suggests_the_closest() -> None:
    message = config_error(gpt2_config(normalizers="nfc"))
    assert "normalizers" in message and "did you mean 'normalizer'" in message


def test_unknown_special_tokens_key_suggests_the_closest() -> None:
    assert "did you mean 'position'" in config_error(gpt2_config(special_tokens={"postion": "end"}))


def test_errors_in_a_yaml_file_name_the_file_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text("name: x\npretokenizer:\n  name: gpt2\ntrainer:\n  vocab_size: lots\n", encoding="utf-8")
    message = config_error(path)
    assert message.startswith(str(path)) and "trainer.vocab_size" in message and "'lots'" in message


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        "name: x\npretokenizer:\n  name: gpt2\ntrainer:\n  vocab_size: 300\n    tie_break: [smallest\n",
        encoding="utf-8",
    )
    message = config_error(path)
    assert str(path) in message and "line 6" in message


@pytest.mark.parametrize(("text", "key"), [("- gpt2\n- 300\n", "top level"), ("pretokenizer: gpt2\n", "pretokenizer")])
def test_yaml_of_the_wrong_shape_names_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "shape.yaml"
    path.write_text(text, encoding="utf-8")
    message = config_error(path)
    assert str(path) in message and key in message


def test_missing_config_file_names_it(tmp_path: Path) -> None:
    assert "nothing.yaml" in config_error(tmp_path / "nothing.yaml")
