"""Shared machinery for the benchmark scripts: measured child runs, tables, docs/benchmarks.md sections.

Every measurement runs in a fresh interpreter: the script re-invokes itself as
`python SCRIPT --child TASK ARGS...`. The child imports what it needs, times only the work
(interpreter start-up and imports excluded, reading input included) and prints one result line.
The parent polls the child's process tree with psutil every ~10 ms and keeps the largest sum of
RSS over the child and all its descendants (forked workers included).

It knows the texts: the Python docs of the shared data, split once into a part to train on
and a part held back (`training_docs`, `held_back_docs`), so every script measures encoding on
text its vocabulary never saw; and the texts of benchmarks/data/, split (issue 35) into the
texts used while optimising (`TUNING_TEXTS`, with the held-back docs) and the validation texts
that only the report reads (`VALIDATION_TEXTS`). Otherwise it knows no tool or data set (only the
split patterns OpenAI publishes, which the scripts feed to the peers), and it asserts nothing
about timings.
"""

import functools
import gzip
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

import psutil  # type: ignore[import-untyped]

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_DOC = REPO_ROOT / "docs" / "benchmarks.md"
DOC_TITLE = "# Benchmarks"
DOC_INTRO = (
    "One report, regenerated whole by `make bench`: each script in `benchmarks/` rewrites its own section and "
    "draws its figures into `docs/img/`. Ratios compare tools measured in the same run on the same machine; "
    "absolute seconds are only meaningful next to them. Paths are relative to the repository."
)

RESULT_MARKER = "BENCH-RESULT "
POLL_SECONDS = 0.01
MEGABYTE = 1024 * 1024
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
# A reinstall of the package (`make install`) can briefly leave it unimportable.
IMPORT_RETRIES = 3
IMPORT_RETRY_SECONDS = 5.0
# A run during which other processes used more than BUSY_CORES is run again, at most BUSY_RERUNS
# more times (issue 35): a busy machine moves absolute seconds and, less, the ratios.
BUSY_CORES = 0.3
BUSY_RERUNS = 3

# The published split patterns, spelled as OpenAI publishes them: GPT-2's in the gpt-2 release's
# src/encoder.py, cl100k_base's and o200k_base's in tiktoken_ext/openai_public.py. The peers get these, never a
# pattern read from bpe-core's plugins, so a change there cannot move the peers along with us.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501 (as published)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# The Python 3.11 docs (the reStructuredText sources, file after file) and the share held back.
DOCS_CORPUS = REPO_ROOT.parent / "shared" / "data" / "text" / "python-3.11-docs.txt.gz"
HELD_BACK_SHARE = 0.2
# benchmarks/data/ (its README says where each text comes from): the texts an optimisation may be
# tuned and checked on, and the validation texts only the report reads
DATA_DIR = Path(__file__).resolve().parent / "data"
TUNING_DIR = DATA_DIR / "tuning"
VALIDATION_DIR = DATA_DIR / "validation"
TUNING_TEXTS = {"ja": TUNING_DIR / "debian-reference.ja.txt.gz", "de": TUNING_DIR / "debian-reference.de.txt.gz"}
VALIDATION_TEXTS = {
    "en": VALIDATION_DIR / "debian-guides.en.txt.gz",
    "ru": VALIDATION_DIR / "debian-guides.ru.txt.gz",
    "ko": VALIDATION_DIR / "libreoffice-help.ko.txt.gz",
}
# A document's title in the Python docs: a line of stars above and below it (reST "chapter"
# level: each source file has one), with the reference label just before it that belongs to it.
DOCUMENT_TITLE = re.compile(r"^(?:\.\. _[^\n]+:\n\n)?(\*{3,})\n[^\n]+\n\1\n", re.MULTILINE)

ChildTask = Callable[[list[str]], dict[str, Any]]
Key = TypeVar("Key")


class ChildFailed(RuntimeError):
    """A measured child exited with an error; the message carries the end of its stderr."""


@dataclass(frozen=True)
class Measurement:
    """One child run: what it reported, and its memory as seen from outside and by the kernel."""

    result: dict[str, Any]
    peak_tree_mb: float  # largest polled sum of RSS over the child and its descendants
    peak_main_mb: float  # the child's own peak (VmHWM: exact, but excludes its workers)
    wall_seconds: float  # parent's view, including interpreter start-up
    other_cores: float  # CPU other processes on the machine used meanwhile, in cores
    timed_out: bool = False


@dataclass
class Summary:
    """Several runs of one job: the fastest run's result, the highest memory of any run."""

    best: dict[str, Any]
    peak_tree_mb: float
    peak_main_mb: float
    runs: int
    other_cores: float  # during the fastest run
    timed_out: bool = False
    all_seconds: list[float] = field(default_factory=list)
    busy_reruns: int = 0  # runs thrown away and run again because the machine was busy
    busy_counted: int = 0  # runs kept although still busy after BUSY_RERUNS reruns

    def seconds(self, key: str = "seconds") -> float:
        return float(self.best[key])


@dataclass(frozen=True)
class ChildJob:
    """A child invocation: task name and arguments, extra environment, optional time limit."""

    task: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_seconds: float | None = None


# ---------------------------------------------------------------------------------------------
# data


@functools.cache
def _docs_parts() -> tuple[str, str]:
    text = gzip.open(DOCS_CORPUS, "rt", encoding="utf-8", newline="").read()
    title = DOCUMENT_TITLE.search(text, int(len(text) * (1 - HELD_BACK_SHARE)))
    if title is None:
        raise SystemExit(f"{shown_path(DOCS_CORPUS)}: no document title after {1 - HELD_BACK_SHARE:.0%} of the text")
    return text[: title.start()], text[title.start() :]


def training_docs() -> str:
    """The Python docs up to the first document that starts after 80% of the text: train on this."""
    return _docs_parts()[0]


def held_back_docs() -> str:
    """The rest of the Python docs (about 20%, whole documents from "Curses Programming with
    Python" on): never trained on, encode this. `training_docs() + held_back_docs()` is the corpus."""
    return _docs_parts()[1]


def shipped_text(path: Path) -> str:
    """A text of benchmarks/data/ (gzipped UTF-8), line ends as they are."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        return handle.read()


# ---------------------------------------------------------------------------------------------
# child side


def child_main(tasks: Mapping[str, ChildTask], argv: Sequence[str]) -> None:
    """Run tasks[argv[0]] with the remaining arguments and print its result for the parent."""
    name, *args = argv
    result = tasks[name](list(args))
    result["main_maxrss_mb"] = own_peak_mb()
    sys.stdout.write(RESULT_MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()


def own_peak_mb() -> float:
    """This process's peak resident memory. Linux's ru_maxrss is no good here: a child started
    by vfork (as subprocess does) keeps the parent's peak from before its exec, so every child
    of a parent that built a 53 MB corpus reported 134 MB. VmHWM is the peak of the process's own
    memory since exec."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / MEGABYTE  # in kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MEGABYTE  # kilobytes on Linux


def engine_build_stamp() -> str:
    """A digest of the installed package's file list with hashes: tells builds apart if `make install`
    runs meanwhile."""
    import hashlib
    from importlib.metadata import distribution

    return hashlib.sha256((distribution("bpe-core").read_text("RECORD") or "").encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# parent side


def _tree_rss_bytes(root: psutil.Process) -> int:
    """The sum of RSS over `root` and its descendants. On Linux read from /proc directly: psutil's
    children(recursive=True) scans every process of the machine, and polling with it took a sixth
    of a core, taken from the work measured (more from runs on all cores)."""
    if os.path.exists(f"/proc/{root.pid}/task/{root.pid}/children"):
        return _proc_tree_rss_bytes(root.pid)
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except psutil.Error:  # a worker that exited between listing and reading
            pass
    return total


def _proc_tree_rss_bytes(pid: int) -> int:
    """RSS of `pid` and its descendants from /proc (statm and each thread's children list); a
    process that exits while being read counts as 0."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            total = int(statm.read().split()[1]) * PAGE_BYTES
        children: list[int] = []
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as listed:
                children.extend(map(int, listed.read().split()))
    except (OSError, ValueError, IndexError):
        return 0
    return total + sum(_proc_tree_rss_bytes(child) for child in children)


def _busy_cpu_seconds() -> float:
    times = psutil.cpu_times()
    return float(sum(getattr(times, name, 0.0) for name in ("user", "nice", "system", "irq", "softirq", "steal")))


def _own_and_reaped_cpu_seconds() -> float:
    """CPU of this process plus every child (and its reaped descendants) it has waited for."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def cpu_marks() -> tuple[float, float, float]:
    """The machine's busy CPU seconds, ours (and our reaped children's), and the clock: give them
    to `other_cores_since` to learn how busy others kept the machine meanwhile."""
    return _busy_cpu_seconds(), _own_and_reaped_cpu_seconds(), time.perf_counter()


def other_cores_since(marks: tuple[float, float, float]) -> float:
    """Cores other processes used on average since `marks` (work in this process measured in place)."""
    busy_before, ours_before, started = marks
    other_cpu = (_busy_cpu_seconds() - busy_before) - (_own_and_reaped_cpu_seconds() - ours_before)
    return max(0.0, other_cpu / max(time.perf_counter() - started, 1e-9))


def _kill_tree(root: psutil.Process) -> None:
    """Kill the child we started and its descendants, by pid."""
    try:
        descendants = root.children(recursive=True)
    except psutil.Error:
        descendants = []
    for process in [*descendants, root]:
        try:
            process.kill()
        except psutil.Error:
            pass


def run_child(script: Path, job: ChildJob, work_dir: Path) -> Measurement:
    """Run one job in a fresh interpreter, polling its process tree's RSS until it exits."""
    for attempt in range(IMPORT_RETRIES + 1):
        try:
            return _run_child_once(script, job, work_dir)
        except ChildFailed as failure:
            transient = "ImportError" in str(failure) or "ModuleNotFoundError" in str(failure)
            if not transient or attempt == IMPORT_RETRIES:
                raise
            print(f"  (import failed in child, retrying in {IMPORT_RETRY_SECONDS:.0f} s)", file=sys.stderr)
            time.sleep(IMPORT_RETRY_SECONDS)
    raise AssertionError("unreachable")


def _run_child_once(script: Path, job: ChildJob, work_dir: Path) -> Measurement:
    command = [sys.executable, str(script), "--child", job.task, *job.args]
    environment = {**os.environ, **job.env}
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        busy_before, ours_before = _busy_cpu_seconds(), _own_and_reaped_cpu_seconds()
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=environment, cwd=work_dir)
        root = psutil.Process(process.pid)
        peak_bytes = 0
        timed_out = False
        while process.poll() is None:
            peak_bytes = max(peak_bytes, _tree_rss_bytes(root))
            if job.timeout_seconds is not None and time.perf_counter() - started > job.timeout_seconds:
                _kill_tree(root)
                process.wait()
                timed_out = True
                break
            time.sleep(POLL_SECONDS)
        wall_seconds = time.perf_counter() - started
        # Contention check: whatever the machine was busy with that was not us or our child tree.
        other_cpu = (_busy_cpu_seconds() - busy_before) - (_own_and_reaped_cpu_seconds() - ours_before)
        other_cores = max(0.0, other_cpu / wall_seconds)
        peak_tree_mb = peak_bytes / MEGABYTE
        if timed_out:
            return Measurement({}, peak_tree_mb, 0.0, wall_seconds, other_cores, timed_out=True)
        stdout.seek(0)
        stderr.seek(0)
        output, errors = stdout.read(), stderr.read()
    if process.returncode != 0:
        raise ChildFailed(f"{' '.join(command)} exited with {process.returncode}:\n{errors[-3000:]}")
    result_lines = [line for line in output.splitlines() if line.startswith(RESULT_MARKER)]
    if not result_lines:
        raise ChildFailed(f"{' '.join(command)} printed no result:\n{output[-2000:]}\n{errors[-2000:]}")
    result: dict[str, Any] = json.loads(result_lines[-1][len(RESULT_MARKER) :])
    return Measurement(result, peak_tree_mb, float(result["main_maxrss_mb"]), wall_seconds, other_cores)


def summarize(runs: Sequence[Measurement], best_by: str = "seconds") -> Summary:
    finished = [run for run in runs if not run.timed_out]
    peak_tree_mb = max(run.peak_tree_mb for run in runs)
    if not finished:
        return Summary({}, peak_tree_mb, 0.0, len(runs), max(run.other_cores for run in runs), timed_out=True)
    fastest = min(finished, key=lambda run: float(run.result[best_by]))
    return Summary(
        best=fastest.result,
        peak_tree_mb=peak_tree_mb,
        peak_main_mb=max(run.peak_main_mb for run in finished),
        runs=len(runs),
        other_cores=fastest.other_cores,
        timed_out=len(finished) < len(runs),
        all_seconds=[float(run.result[best_by]) for run in finished],
    )


def run_interleaved(
    script: Path,
    jobs: Mapping[Key, ChildJob],
    repeats: int,
    work_dir: Path,
    best_by: str = "seconds",
    label: Callable[[Key], str] = str,
) -> dict[Key, Summary]:
    """Each job `repeats` times, round-robin so slow drift of the machine hits all jobs alike.

    A job that times out is not repeated. A run during which other processes used more than
    BUSY_CORES is thrown away and run again, at most BUSY_RERUNS more times; the summaries count
    the reruns and the busy runs kept.
    """
    runs: dict[Key, list[Measurement]] = {key: [] for key in jobs}
    reruns = dict.fromkeys(jobs, 0)
    for repeat in range(repeats):
        for key, job in jobs.items():
            if any(run.timed_out for run in runs[key]):
                continue
            for attempt in range(BUSY_RERUNS + 1):
                measurement = run_child(script, job, work_dir)
                shown = "timed out" if measurement.timed_out else f"{float(measurement.result[best_by]):.3f} s"
                print(
                    f"  run {repeat + 1}/{repeats} {label(key)}: {shown}, {measurement.peak_tree_mb:.0f} MB, "
                    f"other processes used {measurement.other_cores:.2f} cores",
                    flush=True,
                )
                if measurement.other_cores <= BUSY_CORES or attempt == BUSY_RERUNS:
                    break
                reruns[key] += 1
                print(f"  (busy machine: more than {BUSY_CORES} cores used by others; running it again)", flush=True)
            runs[key].append(measurement)
    summaries = {}
    for key, measurements in runs.items():
        summary = summarize(measurements, best_by)
        summary.busy_reruns = reruns[key]
        summary.busy_counted = sum(run.other_cores > BUSY_CORES for run in measurements)
        summaries[key] = summary
    return summaries


# ---------------------------------------------------------------------------------------------
# reporting


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else math.nan


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def package_version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def shown_path(path: str | os.PathLike[str]) -> str:
    """A path as the reports show it: relative to the repository when inside it, else from its
    `site-packages` folder on (an installed package), else unchanged.

    Links are not resolved: a venv's python links to the system's, and `.venv/bin/python` is what ran.
    """
    absolute = Path(os.path.abspath(path))
    if absolute.is_relative_to(REPO_ROOT):
        return str(absolute.relative_to(REPO_ROOT))
    if "site-packages" in absolute.parts:
        return str(Path(*absolute.parts[absolute.parts.index("site-packages") :]))
    return str(path)


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan


def machine_lines(
    engine_compiled: bool | None,
    bpe_core_location: str | None,
    peers: Sequence[str],
    load_at_start: float = math.nan,
) -> list[str]:
    """Markdown bullet lines describing the machine, interpreter, library versions and load."""
    cpu_model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory_gb = psutil.virtual_memory().total / 1024**3
    compiled = {True: "compiled (mypyc)", False: "pure Python", None: "unknown"}[engine_compiled]
    lines = [
        f"- machine: {cores} cores available (nproc), {cpu_model}, {memory_gb:.0f} GB RAM, {platform.system()} "
        f"{platform.release()}",
        f"- Python {platform.python_version()} ({shown_path(sys.executable)})",
        f"- bpe-core {package_version('bpe-core')}, engine {compiled}"
        + (f", imported from `{shown_path(bpe_core_location)}`" if bpe_core_location else ""),
    ]
    lines += [f"- {peer} {package_version(peer)}" for peer in peers]
    lines.append(
        f"- run on {time.strftime('%Y-%m-%d %H:%M %Z')}; 1-minute load average {load_at_start:.2f} at the start, "
        f"{load_average():.2f} at the end (other work on the machine skews absolute seconds more than ratios)"
    )
    return lines


def contention_lines(summaries: Sequence[Summary]) -> list[str]:
    """Markdown bullets saying how much CPU other processes took while the counted runs ran, and
    which runs were run again because the machine was busy."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if not summaries:
        return ["- no timed runs in child processes: the figures are counts"]
    others = [summary.other_cores for summary in summaries]
    runs = sum(summary.runs for summary in summaries)
    reruns = sum(summary.busy_reruns for summary in summaries)
    busy = sum(summary.busy_counted for summary in summaries)
    lines = [
        f"- CPU used by other processes during the counted (fastest) runs: mean {sum(others) / len(others):.2f}, "
        f"max {max(others):.2f} cores of {cores}",
        f"- busy machine: a run during which other processes used more than {BUSY_CORES} cores was thrown away "
        f"and run again (at most {BUSY_RERUNS} times): {reruns} such reruns for the {runs} runs kept",
    ]
    if busy:
        lines.append(
            f"- BUSY: {busy} of the {runs} runs kept still saw more than {BUSY_CORES} cores used by others after "
            f"{BUSY_RERUNS} reruns; their seconds are a busy machine's"
        )
    return lines


def build_warning(summaries: Sequence[Summary]) -> str | None:
    """A warning when the counted runs loaded differently built engines (a reinstall during the run)."""
    stamps = {summary.best["engine_build"] for summary in summaries if "engine_build" in summary.best}
    if len(stamps) <= 1:
        return None
    return f"WARNING: the package was reinstalled during this run; the rows come from {len(stamps)} different builds"


def check_installed_package(location: str | None) -> None:
    """Warn when a child imported bpe_core from the source tree rather than the installed package."""
    if location and Path(location).resolve().is_relative_to(REPO_ROOT / "bpe_core"):
        print(
            f"WARNING: bpe_core was imported from the source tree ({shown_path(location)}), not the installed package"
        )


def run(main: Callable[[], None], child_tasks: Mapping[str, ChildTask]) -> None:
    """A script's entry point: the parent's main, or one measured task in a child process."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(child_tasks, sys.argv[2:])
    else:
        main()


def publish_report(
    heading: str,
    *,
    command: str,
    started: float,
    load_at_start: float,
    bpe_core_result: Mapping[str, Any] | None,
    peers: Sequence[str],
    summaries: Sequence[Summary],
    blocks: Sequence[str],
    notes: Sequence[str] = (),
    facts: Sequence[str] = (),
    trial_run: str | None = None,
) -> None:
    """Print a script's section and write it into docs/benchmarks.md, in the layout every script shares.

    The section: the command and total run time (since `started`, a perf_counter reading), the
    machine, versions and load (of bpe-core as `bpe_core_result`, a bpe-core child's result, says
    it ran), how busy other processes kept the machine during `summaries`, the script's `facts`
    as more bullets, its `blocks` (tables, headings, paragraphs) separated by blank lines, and its
    `notes` under "### Method". A warning that the package was rebuilt during the run joins the
    notes. A `trial_run` (the reason) is printed but not written.
    """
    ours = bpe_core_result or {}
    check_installed_package(ours.get("bpe_core_location"))
    warning = build_warning(summaries)
    if warning:
        print(warning)
        notes = [*notes, warning]
    bullets = [
        *machine_lines(ours.get("compiled"), ours.get("bpe_core_location"), peers, load_at_start),
        *contention_lines(summaries),
        *(f"- {fact}" for fact in facts),
    ]
    parts = [f"Command: `{command}` (total {time.perf_counter() - started:.0f} s)", "\n".join(bullets), *blocks]
    if notes:
        parts += ["### Method", "\n".join(f"- {note}" for note in notes)]
    body = "\n\n".join(parts)
    print()
    print(heading)
    print()
    print(body)
    if trial_run:
        print(f"\n(not written to {shown_path(BENCHMARKS_DOC)}: {trial_run})")
        return
    write_section(heading, body)
    print(f"\nwrote section to {shown_path(BENCHMARKS_DOC)}")


def write_section(heading: str, body: str, document: Path = BENCHMARKS_DOC) -> None:
    """Replace the section starting at `heading` (up to the next `## ` heading) or append it."""
    section = heading + "\n\n" + body.strip() + "\n"
    if document.exists():
        lines = document.read_text().splitlines()
    else:
        lines = [DOC_TITLE, "", DOC_INTRO]
    if heading in lines:
        start = lines.index(heading)
        end = next((index for index in range(start + 1, len(lines)) if lines[index].startswith("## ")), len(lines))
        before, after = lines[:start], lines[end:]
    else:
        before, after = lines, []
    text = "\n".join(before).rstrip() + "\n\n" + section
    if after:
        text += "\n" + "\n".join(after).rstrip() + "\n"
    document.parent.mkdir(parents=True, exist_ok=True)
    temporary = document.with_suffix(".md.tmp")
    temporary.write_text(text)
    os.replace(temporary, document)


def seconds_text(summary: Summary, key: str = "seconds") -> str:
    if summary.timed_out and not summary.best:
        return "timed out"
    return f"{summary.seconds(key):.2f}"
