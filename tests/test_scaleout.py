"""Scale-out: counts files, training from counts, and the Dask runner give a local run's answer.

The Dask tests run on a real LocalCluster of two worker processes, started and closed by the
module's fixture; the runner's own local cluster is tested through the command line.
"""

import json
import logging
import os
import signal
import sys
import threading
import time
import unicodedata
from pathlib import Path

import distributed
import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG as DNA
from helpers.dna import fasta_records
from helpers.midi import REMI_BPE_CONFIG as MIDI
from helpers.midi import pop909_paths
from helpers.paths import CHR17_PATH, ECOLI_PATH, LAMBDA_PATH
from helpers.text import GPT2_CONFIG as GPT2

import bpe_core
from bpe_core import training
from bpe_core.config import parse_runner
from bpe_core.corpus.shards import ShardOptions, encode_to_shards, shard_name
from bpe_core.corpus.streaming import corpus_reader
from bpe_core.counts import load_counts
from bpe_core.errors import BpeError
from bpe_core.plugins import registry
from bpe_core.training import count
from bpe_text.readers import TextReader


@pytest.fixture(scope="module")
def cluster():
    """The scheduler address of a LocalCluster with two worker processes."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as local:
        yield local.scheduler_address


def on(cluster, **options):
    return {"kind": "dask", "address": cluster, **options}


@pytest.fixture(scope="module")
def docs_plain(docs_text, tmp_path_factory):
    """The whole documentation as one plain UTF-8 file (byte ranges need an uncompressed file)."""
    path = tmp_path_factory.mktemp("plain") / "docs.txt"
    path.write_text(docs_text, encoding="utf-8", newline="")
    return path


@pytest.fixture(scope="module")
def docs_parts(docs_text, tmp_path_factory):
    """The first ~1.5 MB of the documentation in three files, cut at line starts."""
    directory = tmp_path_factory.mktemp("parts")
    paths = []
    start = 0
    for index in range(3):
        end = docs_text.index("\n", start + 500_000) + 1
        path = directory / f"part{index}.txt"
        path.write_text(docs_text[start:end], encoding="utf-8", newline="")
        paths.append(path)
        start = end
    return paths


@pytest.fixture(scope="module")
def song_dir(songs, tmp_path_factory):
    """A directory of 100 POP909 songs, one broken file among them, and a file that is not MIDI."""
    directory = tmp_path_factory.mktemp("songs")
    for path in songs[:100]:
        (directory / path.name).symlink_to(path)
    song = songs[0].read_bytes()
    (directory / "050-broken.mid").write_bytes(song[: len(song) // 3])
    (directory / "README.txt").write_text("not a song: the reader's suffixes leave it out on every runner\n")
    return directory


def test_counts_of_the_docs_on_dask_equal_local_counts_and_train_the_same_merges(cluster, docs_plain, docs_path):
    local = count(GPT2, [docs_plain], progress=False)
    ranged = count(GPT2, [docs_plain], runner=on(cluster, range_bytes=1 << 20), progress=False)  # 11 byte ranges
    assert len(local.chunks) > 40_000
    assert ranged.chunks == local.chunks
    assert ranged.inputs == local.inputs
    compressed = count(GPT2, [docs_path], runner=on(cluster), progress=False)  # .gz: one task
    assert compressed.chunks == local.chunks
    twice = count(GPT2, [docs_path, docs_path], runner=on(cluster), progress=False)  # as locally: counted twice
    assert twice.chunks == {key: 2 * times for key, times in local.chunks.items()}
    direct = bpe_core.train(GPT2, [docs_plain], {"trainer.vocab_size": 2048}, progress=False)
    from_counts = bpe_core.train(GPT2, counts=[ranged], overrides={"trainer.vocab_size": 2048}, progress=False)
    assert from_counts.merges == direct.merges
    assert from_counts.merge_counts == direct.merge_counts
    assert from_counts.token_usage == direct.token_usage


def test_local_counting_in_parts_read_by_each_process_equals_streaming_through_one(
    docs_plain, docs_parts, docs_path, tmp_path, monkeypatch
):
    parted = []
    monkeypatch.setattr(training, "count_packed_parts", spy(training.count_packed_parts, parted))
    monkeypatch.setattr(training, "LOCAL_PARTS_BYTES", 1 << 22)  # the docs, 11 MB, are below the real one
    streamed = count(GPT2, [docs_plain], workers=1, progress=False)
    in_parts = count(GPT2, [docs_plain], workers=2, progress=False)
    assert len(parted) == 1 and len(parted[0]) == 8  # 4 ranges a process
    assert in_parts.chunks == streamed.chunks
    assert in_parts.inputs == streamed.inputs
    # small files in groups, a .gz file whole, the same file named twice, a large one in ranges
    monkeypatch.setattr(training, "LOCAL_PARTS_BYTES", 1 << 20)
    files = [*docs_parts, docs_path, docs_parts[0], docs_plain]
    streamed = count(GPT2, files, workers=1, progress=False)
    in_parts = count(GPT2, files, workers=3, progress=False)
    assert len(parted) == 2 and {part.step > 0 for part in parted[1]} == {True, False}
    assert in_parts.chunks == streamed.chunks
    assert in_parts.inputs == streamed.inputs
    assert [item["path"] for item in in_parts.inputs] == list(dict.fromkeys(map(str, files)))  # each once
    broken = tmp_path / "latin1.txt"
    broken.write_bytes(docs_plain.read_bytes()[:3_000_000] + "caf\u00e9\n".encode("latin-1"))
    with pytest.raises(BpeError, match="latin1.txt.*not valid UTF-8"):
        count(GPT2, [docs_plain, broken], workers=2, progress=False)


def spy(function, calls):
    """`function`, noting the parts it is given."""

    def noted(parts, *rest, **options):
        calls.append(parts)
        return function(parts, *rest, **options)

    return noted


def test_a_worker_killed_while_counting_is_replaced_and_the_counts_stay_exact(docs_plain):
    """Dask reruns the lost worker's tasks (tasks are pure, sums copy): the counts equal a local run's."""
    local = count(GPT2, [docs_plain], progress=False)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.CRITICAL
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        result: dict[str, object] = {}
        runner = on(cluster.scheduler_address, range_bytes=1 << 20)
        counting = threading.Thread(
            target=lambda: result.update(counts=count(GPT2, [docs_plain], runner=runner, progress=False))
        )
        counting.start()
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and counting.is_alive() and time.monotonic() < deadline:
            busy = [
                worker for worker, keys in client.processing().items() if any("count_task" in str(key) for key in keys)
            ]
            victim = busy[0] if busy else None
            time.sleep(0.005)
        assert victim is not None, "no counting task was seen running"
        os.kill(pids[victim], signal.SIGKILL)
        counting.join(timeout=300)
        assert not counting.is_alive()
    assert result["counts"].chunks == local.chunks


@pytest.mark.parametrize("step", [4096, 65536])
def test_byte_ranges_tile_a_text_file_exactly_at_safe_cuts(docs_slice_path, step):
    text = docs_slice_path.read_text(encoding="utf-8")
    size = docs_slice_path.stat().st_size
    safe_cut = registry().pretokenizer("gpt2", {}).safe_cut
    parts = []
    for start in range(0, size, step):
        for document in TextReader().range_documents(str(docs_slice_path), start, step, safe_cut):
            parts.append("".join(document.blocks()))
    assert "".join(parts) == text
    assert len(parts) > size // step // 2  # most grid points found a boundary
    for before, part in zip(parts, parts[1:]):  # each starts where gpt2 allows a cut
        assert (before.endswith("\n") and before[-2:-1].strip() and part[0].isalpha()) or (
            before[-1].isalpha()
            and not part[0].isalpha()
            and part[0] != "'"
            and not unicodedata.category(part[0]).startswith("M")
        )


def test_jsonl_byte_ranges_count_like_the_whole_file(cluster, docs_text, tmp_path):
    path = tmp_path / "docs.jsonl"
    paragraphs = [paragraph for paragraph in docs_text[:2_000_000].split("\n\n") if paragraph.strip()]
    path.write_text("".join(json.dumps({"text": paragraph}) + "\n" for paragraph in paragraphs), encoding="utf-8")
    config = {"input": {"reader": "jsonl"}, "pretokenizer": {"name": "cl100k"}, "trainer": {"vocab_size": 1000}}
    local = count(config, [path], progress=False)
    ranged = count(config, [path], runner=on(cluster, range_bytes=1 << 16), progress=False)
    assert ranged.chunks == local.chunks
    assert ranged.total() == local.total() > 200_000


def test_genome_counts_on_dask_equal_local_counts_and_train_the_same_merges(cluster):
    genomes = [ECOLI_PATH, LAMBDA_PATH, CHR17_PATH]
    overrides = {"trainer.vocab_size": 512}
    local = count(DNA, genomes, overrides, progress=False)
    remote = count(DNA, genomes, overrides, runner=on(cluster, range_bytes=1 << 16), progress=False)
    assert remote.chunks == local.chunks
    assert remote.inputs == local.inputs
    assert local.symbols() == _acgt_bases(genomes)
    direct = bpe_core.train(DNA, genomes, overrides, progress=False)
    from_counts = bpe_core.train(DNA, counts=[remote], overrides=overrides, progress=False)
    assert from_counts.merges == direct.merges
    assert from_counts.merge_counts == direct.merge_counts


def _acgt_bases(paths):
    """A, C, G and T in the genomes, either case (what dna-nucleotides counts; N splits)."""
    return sum(
        sum(sequence.upper().count(base) for base in "ACGT") for path in paths for _, sequence in fasta_records(path)
    )


def test_midi_counts_on_dask_equal_local_counts_and_name_the_broken_file(cluster, song_dir, capsys):
    local = count(MIDI, [song_dir], progress=False)
    local_warnings = capsys.readouterr().err
    remote = count(MIDI, [song_dir], runner=on(cluster, range_bytes=1 << 18), progress=False)  # several tasks
    remote_warnings = capsys.readouterr().err
    assert remote.chunks == local.chunks
    assert remote.inputs == local.inputs and len(local.inputs) == 100
    assert remote.measures["files_skipped"] == local.measures["files_skipped"] == 1
    assert remote.measures["beats"] == pytest.approx(local.measures["beats"], abs=0.01)
    assert "050-broken.mid" in local_warnings and "050-broken.mid" in remote_warnings
    direct = bpe_core.train(MIDI, [song_dir], {"trainer.vocab_size": 700}, progress=False)
    from_counts = bpe_core.train(MIDI, counts=[remote], overrides={"trainer.vocab_size": 700}, progress=False)
    assert from_counts.merges == direct.merges
    assert from_counts.provenance["beats"] == pytest.approx(direct.provenance["beats"], abs=0.01)
    for runner in (None, on(cluster)):  # strict: the same error, naming the file
        with pytest.raises(BpeError, match="050-broken.mid"):
            count(MIDI, [song_dir], {"input.on_error": "error"}, runner=runner, progress=False)


def test_an_undecodable_text_file_is_named_by_both_runners(cluster, docs_parts, tmp_path):
    broken = tmp_path / "latin1.txt"
    broken.write_bytes("caf\u00e9 au lait\n".encode("latin-1") * 100)
    files = [docs_parts[0], broken, docs_parts[1]]
    for runner in ([], ["--address", cluster]):
        result = run_bpe("count", GPT2, *files, "-o", tmp_path / "out.counts", *runner, cwd=tmp_path)
        assert_clean_error(result, "latin1.txt", "not valid UTF-8")
        assert not (tmp_path / "out.counts").exists()


def test_counts_files_merge_in_any_order_to_the_same_bytes(docs_parts, tmp_path):
    names = []
    for index, part in enumerate(docs_parts):
        assert_ok(run_bpe("count", GPT2, part, "-o", f"{index}.counts", "-q", cwd=tmp_path))
        names.append(f"{index}.counts")
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        merged = f"merged-{''.join(map(str, order))}.counts"
        assert_ok(run_bpe("count", "--merge", *[names[index] for index in order], "-o", merged, "-q", cwd=tmp_path))
    assert_ok(run_bpe("count", GPT2, *docs_parts, "-o", "all.counts", "-q", cwd=tmp_path))
    reference = (tmp_path / "all.counts").read_bytes()
    for merged in ("merged-012.counts", "merged-201.counts", "merged-120.counts"):
        assert (tmp_path / merged).read_bytes() == reference
    # ((0 + 1) + 2) as well: merging is associative
    assert_ok(run_bpe("count", "--merge", "0.counts", "1.counts", "-o", "01.counts", "-q", cwd=tmp_path))
    assert_ok(run_bpe("count", "--merge", "01.counts", "2.counts", "-o", "nested.counts", "-q", cwd=tmp_path))
    assert (tmp_path / "nested.counts").read_bytes() == reference
    merged = load_counts(tmp_path / "all.counts")
    assert [Path(item["path"]).name for item in merged.inputs] == ["part0.txt", "part1.txt", "part2.txt"]
    # training from the files equals training on the text
    assert_ok(
        run_bpe(
            "train",
            GPT2,
            "--from-counts",
            *names,
            "-o",
            "a.json",
            "--set",
            "trainer.vocab_size=1024",
            "-q",
            cwd=tmp_path,
        )
    )
    assert_ok(
        run_bpe("train", GPT2, *docs_parts, "-o", "b.json", "--set", "trainer.vocab_size=1024", "-q", cwd=tmp_path)
    )
    first, second = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert first["merges"] == second["merges"] and first["token_usage"] == second["token_usage"]


def test_counts_that_do_not_fit_together_are_refused_by_name(docs_parts, tmp_path):
    assert_ok(run_bpe("count", GPT2, docs_parts[0], "-o", "gpt2.counts", "-q", cwd=tmp_path))
    assert_ok(
        run_bpe(
            "count", GPT2, docs_parts[0], "-o", "cl100k.counts", "-q", "--set", "pretokenizer.name=cl100k", cwd=tmp_path
        )
    )
    assert_clean_error(
        run_bpe("count", "--merge", "gpt2.counts", "gpt2.counts", "-o", "x", cwd=tmp_path), "part0.txt", "counted twice"
    )
    assert_clean_error(
        run_bpe("count", "--merge", "gpt2.counts", "cl100k.counts", "-o", "x", cwd=tmp_path),
        "cl100k.counts",
        "pretokenizer",
        "cl100k",
    )
    assert_clean_error(
        run_bpe("train", GPT2, "--from-counts", "cl100k.counts", "-o", "t.json", cwd=tmp_path), "cl100k.counts", "gpt2"
    )
    (tmp_path / "text.counts").write_text("hello\n")
    assert_clean_error(
        run_bpe("train", GPT2, "--from-counts", "text.counts", cwd=tmp_path),
        "text.counts",
        "not a bpe-core counts file",
    )
    whole = (tmp_path / "gpt2.counts").read_bytes()
    (tmp_path / "cut.counts").write_bytes(whole[: len(whole) // 2])
    assert_clean_error(run_bpe("count", "--merge", "cut.counts", "-o", "x", cwd=tmp_path), "cut.counts", "damaged")
    assert_clean_error(run_bpe("train", GPT2, docs_parts[0], "--from-counts", "gpt2.counts", cwd=tmp_path), "not both")
    assert_clean_error(run_bpe("count", "-o", "x", cwd=tmp_path), "give a config")
    assert not (tmp_path / "x").exists() and not (tmp_path / "t.json").exists()


def test_shards_on_dask_equal_local_shards_and_one_run_encoding(cluster, docs_parts, docs_slice_path, tmp_path):
    assert_ok(
        run_bpe(
            "train", GPT2, docs_slice_path, "-o", "tok.json", "--set", "trainer.vocab_size=1000", "-q", cwd=tmp_path
        )
    )
    common = ["encode", "-t", "tok.json", "--format", "bin", "--eos", "<|endoftext|>", "-q", *docs_parts]
    assert_ok(run_bpe(*common, "-o", "local/", cwd=tmp_path))
    assert_ok(run_bpe(*common, "-o", "remote/", "--address", cluster, cwd=tmp_path))
    assert_ok(run_bpe(*common, "-o", "one.bin", cwd=tmp_path))
    index = json.loads((tmp_path / "local" / "index.json").read_text())
    assert json.loads((tmp_path / "remote" / "index.json").read_text()) == index
    assert [entry["input"] for entry in index["shards"]] == [str(part) for part in docs_parts]
    joined = b""
    for entry in index["shards"]:
        shard = (tmp_path / "local" / entry["shard"]).read_bytes()
        assert (tmp_path / "remote" / entry["shard"]).read_bytes() == shard
        assert len(shard) == 2 * entry["tokens"] and entry["documents"] == 1
        joined += shard
    assert joined == (tmp_path / "one.bin").read_bytes()
    assert index["tokens"] == len(joined) // 2 > 300_000


def test_a_large_file_is_encoded_in_ranges_joined_into_the_same_shard(cluster, docs_text, docs_slice_path, tmp_path):
    text = docs_text[:3_000_000]
    plain = tmp_path / "docs.txt"
    plain.write_text(text, encoding="utf-8", newline="")
    lines = tmp_path / "docs.jsonl"
    lines.write_text(
        "".join(json.dumps({"text": paragraph}) + "\n" for paragraph in text.split("\n\n")), encoding="utf-8"
    )
    for path, reader in ((plain, "text"), (lines, "jsonl")):
        config = {"input": {"reader": reader}, "pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 1000}}
        config["special_tokens"] = {"tokens": ["<|endoftext|>"]}
        tokenizer = bpe_core.train(config, [docs_slice_path] if reader == "text" else [lines], progress=False)
        options = ShardOptions(eos_id=tokenizer.special_ids["<|endoftext|>"])
        local = encode_to_shards(
            tokenizer, [str(path)], str(tmp_path / f"local-{reader}"), options, parse_runner({}, "test")
        )
        ranged = encode_to_shards(
            tokenizer,
            [str(path)],
            str(tmp_path / f"dask-{reader}"),
            options,
            parse_runner(on(cluster, range_bytes=1 << 20), "test"),
        )
        assert ranged == local
        shard = local["shards"][0]["shard"]
        assert (tmp_path / f"dask-{reader}" / shard).read_bytes() == (tmp_path / f"local-{reader}" / shard).read_bytes()
        assert sorted(entry.name for entry in (tmp_path / f"dask-{reader}").iterdir()) == [
            shard,
            "index.json",
        ]  # parts removed
        assert local["documents"] == (1 if reader == "text" else len(text.split("\n\n")))
    with distributed.Client(cluster) as client:  # the ranges really ran as tasks of their own
        assert "encode_range_task" in client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))


def test_dna_and_midi_shards_on_dask_equal_encoding_each_document(cluster, song_dir, tmp_path):
    dna = bpe_core.train(DNA, [LAMBDA_PATH], {"trainer.vocab_size": 300}, progress=False)
    midi = bpe_core.train(MIDI, [song_dir], {"trainer.vocab_size": 600}, progress=False)
    cases = [
        (dna, [str(LAMBDA_PATH), str(CHR17_PATH)], "uint16"),
        (midi, [str(path) for path in pop909_paths()[:6]], "uint32"),
    ]
    for tokenizer, files, dtype in cases:
        options = ShardOptions(dtype=dtype, eos_id=tokenizer.special_ids.get("[SEP]", tokenizer.special_ids.get("EOS")))
        directory = tmp_path / tokenizer.name
        index = encode_to_shards(tokenizer, files, str(directory), options, parse_runner(on(cluster), "test"))
        width = 2 if dtype == "uint16" else 4
        for entry, path in zip(index["shards"], files):
            data = (directory / entry["shard"]).read_bytes()
            ids = [int.from_bytes(data[start : start + width], "little") for start in range(0, len(data), width)]
            expected = []
            for document in corpus_reader(tokenizer).documents([path], strict=True):
                expected += tokenizer.encode(document) + [options.eos_id]
            assert ids == expected
            assert entry["documents"] >= 1 and entry["tokens"] == len(ids)


def test_the_runner_starts_and_closes_its_own_local_cluster(docs_parts, tmp_path):
    result = run_bpe(
        "count", GPT2, docs_parts[0], "-o", "dask.counts", "--runner", "dask", "--workers", "2", cwd=tmp_path
    )
    assert_ok(result)
    assert "local cluster of 2 worker processes, dashboard http://" in result.stderr
    assert_ok(run_bpe("count", GPT2, docs_parts[0], "-o", "local.counts", "-q", cwd=tmp_path))
    assert (tmp_path / "dask.counts").read_bytes() == (tmp_path / "local.counts").read_bytes()
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"caf\xe9\n")
    failed = run_bpe("count", GPT2, docs_parts[0], broken, "-o", "x.counts", "--runner", "dask", "-q", cwd=tmp_path)
    assert_clean_error(failed, "broken.txt", "not valid UTF-8")  # the workers' own logs stay quiet


def test_without_dask_installed_the_error_says_how_to_install_it(docs_parts, tmp_path, monkeypatch, capsys):
    from bpe_core import cli

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    assert cli.main(["count", str(GPT2), str(docs_parts[0]), "-o", str(tmp_path / "x"), "--runner", "dask"]) == 2
    assert 'pip install "bpe-core[dask]"' in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_runner_settings_are_checked(docs_parts, tmp_path):
    config = tmp_path / "bad.yaml"
    for runner, fragment in [
        ({"kind": "spark"}, "runner.kind"),
        ({"kind": "local", "address": "tcp://127.0.0.1:8786"}, "runner.address"),
        ({"kind": "dask", "workrs": 2}, "did you mean 'workers'"),
        ({"kind": "dask", "workers": 0}, "runner.workers"),
    ]:
        config.write_text(json.dumps({"pretokenizer": {"name": "gpt2"}, "runner": runner}))
        assert_clean_error(run_bpe("validate", config, cwd=tmp_path), fragment)
    sampled = ["--set", "input.sample.fraction=0.5", "--set", "input.sample.seed=1"]
    assert_clean_error(
        run_bpe("count", GPT2, docs_parts[0], "-o", "x", "--runner", "dask", *sampled, cwd=tmp_path), "input.sample"
    )
    assert_clean_error(run_bpe("encode", "-t", "none.json", "--runner", "dask", cwd=tmp_path), "none.json")
    both = ["--runner", "local", "--address", "tcp://127.0.0.1:9"]
    assert_clean_error(run_bpe("count", GPT2, docs_parts[0], "-o", "x", *both, cwd=tmp_path), "--address")
    remote = tmp_path / "remote.yaml"  # --runner local runs here, whatever scheduler the config names
    remote.write_text(
        json.dumps({"pretokenizer": {"name": "gpt2"}, "runner": {"kind": "dask", "address": "tcp://127.0.0.1:9"}})
    )
    assert_ok(run_bpe("count", remote, docs_parts[0], "-o", "here.counts", "--runner", "local", "-q", cwd=tmp_path))
    assert load_counts(tmp_path / "here.counts").total() > 100_000


def test_a_scheduler_that_is_not_there_is_a_clean_error(docs_parts, tmp_path):
    result = run_bpe(
        "count", GPT2, docs_parts[0], "-o", "x", "--address", "tcp://127.0.0.1:9", cwd=tmp_path, timeout=120
    )
    assert_clean_error(result, "cannot reach the Dask scheduler at tcp://127.0.0.1:9")


def test_shard_names_sort_in_input_order():
    names = [shard_name(index, path) for index, path in enumerate(["b/z.txt", "a/y y.txt", "x.txt"])]
    assert names == ["00000-z.txt.bin", "00001-y_y.txt.bin", "00002-x.txt.bin"] == sorted(names)
