"""Bad input at the command line: one clear line on stderr, exit status 2, no traceback.

These run `python run.py` for real; each fails before Spark starts, so they are quick. The
cases of `test_bad_input_gives_one_line` and of the tests that need a file, a disk or a Java of
their own share one interpreter (tests/cli_batch.py), each with its own argv, environment and
output, sparing a Python start and icelab's imports per case. Every
row of the "Bad input" table in docs/reliability.md names one of these tests, and the last test checks that
the table's messages are the ones asserted here.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli_batch import run_batch
from tests.conftest import run_py
from tests.core.conftest import fill, mounted_tmpfs
from tests.core.test_preflight import fake_java

REPO = Path(__file__).resolve().parents[2]
QUERY_IDS = ", ".join(sorted(p.stem for p in (REPO / "queries").glob("*.sql")))
GRAMMAR = "use key=value, key=[a,b], +new.key=value or ~key; quote values with special characters"
TINY = "dataset tiny spans [2026-05-01, 2026-06-30)"
JAR = "engine.iceberg_jar accepts: iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JAR_BUILD = "is built for Spark {}, but PySpark here is Spark 3.5 / Scala 2.12 (" + JAR + ")"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_py(*args, env=env, timeout=120)  # each fails before Spark starts


def assert_one_line_error(proc: subprocess.CompletedProcess, message: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [f"icelab: error: {message}"], proc.stderr


CASES = [
    # Unknown names
    pytest.param(
        ["experiment=nope"],
        # Every experiment conf/experiment holds, in order.
        "unknown experiment 'nope' (choose from: "
        + ", ".join(sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml")))
        + ")",
        id="unknown-experiment",
    ),
    pytest.param(
        ["dataset=huge"],
        "unknown dataset 'huge' (choose from: effect, medium, small, tiny)",
        id="unknown-dataset",
    ),
    pytest.param(
        ["experiment=metadata_scale", "meta=[meta_micro]", "meta.meta_micro.data_files=100"],
        "invalid config: meta.meta_micro: 100 data files over 10 manifests x 30 days: as ingested every "
        "manifest spans nearly every day, so give at least manifests x days files",
        id="metadata-state-too-few-files",
    ),
    pytest.param(
        ["experiment=metadata_scale", "meta=[meta_micro]", "experiment.meta_dir=s3a://bucket/meta"],
        "s3a://bucket/meta: metadata-scale states are built through local disk (the builder reads "
        "and writes local files; a store gets a copy); give a local experiment.meta_dir",
        id="metadata-state-not-on-local-disk",
    ),
    pytest.param(
        ["paths.copy_from=/nonexistent-icelab-source"],
        "paths.copy_from=/nonexistent-icelab-source: no finished dataset tiny-dc6d30599f06 there; build it "
        "there first, or drop paths.copy_from to build here",
        id="copy-from-without-the-dataset",
    ),
    pytest.param(
        ["experiment=smoke", "profile=[as_ingested,nope]"],
        "unknown profile 'nope' (choose from: aggregate_pushdown, as_ingested, expired, rewrite_128kb, "
        "rewrite_16kb, rewrite_256kb, rewrite_2mb, rewrite_32mb, rewrite_512kb, rewrite_8mb, "
        "rewrite_8mb_expired)",
        id="unknown-profile",
    ),
    pytest.param(
        ["experiment=canonical", "setup=[initial,nope]"],
        "unknown setup 'nope' (choose from: initial, manifest_rewrite, nested_pruning, optimized, "
        "snapshot_expiry, vectorization)",
        id="unknown-setup",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.queries=[q99]"],
        f"unknown query 'q99' (choose from: {QUERY_IDS})",
        id="unknown-query",
    ),
    pytest.param(
        ["experiment=canonical", "experiment.queries=[q99]"],
        f"query 'q99' matches no query (choose from: {QUERY_IDS})",
        id="unknown-canonical-query",
    ),
    pytest.param(
        ["experiment=canonical", "experiment.optimized=fast"],
        "experiment.optimized='fast' is not a selected setup (selected: initial, optimized)",
        id="setup-not-selected",
    ),
    pytest.param(
        ["experiment=canonical", "+setup.initial.plant={q99:0.25}"],
        "setup.initial.plant names query 'q99', which is not among experiment.queries",
        id="plant-unknown-query",
    ),
    pytest.param(
        ["experiment=canonical", "setup=[initial,manifest_rewrite]", "profile=[as_ingested]"],
        "setup 'manifest_rewrite' needs profile 'rewrite_8mb', which is not selected (selected: as_ingested)",
        id="setup-needs-profile",
    ),
    # Malformed overrides: Hydra's own multi-line errors, as one line
    pytest.param(
        ["dataset=[small"],
        f"malformed override 'dataset=[small': no viable alternative at input '[small' ({GRAMMAR})",
        id="override-syntax",
    ),
    pytest.param(
        ["dataset"],
        f"malformed override 'dataset': missing EQUAL at '<EOF>' ({GRAMMAR})",
        id="override-without-value",
    ),
    pytest.param(
        ["protocol.repetitons=3"],
        "unknown key 'protocol.repetitons' in override 'protocol.repetitons=3' (did you mean 'repetitions'? "
        "protocol has: deadline_s, executions, keep_faulted, overhead_pairs, overhead_window, repetitions, "
        "retakes, steady_cap, steady_k, steady_tolerance, timeout_grace_s, timeout_s, unstable_iqr, "
        "warm_cache, warmups, warmups_execute)",
        id="unknown-key",
    ),
    pytest.param(
        ["experiment.nope=1"],
        "unknown key 'experiment.nope' in override 'experiment.nope=1' "
        "(experiment has: baseline, bound, name, task)",
        id="unknown-experiment-key",
    ),
    pytest.param(
        ["protocol.repetitions=abc"],
        "invalid config: protocol.repetitions='abc': Input should be a valid integer, unable to parse string "
        "as an integer",
        id="wrong-type",
    ),
    pytest.param(
        ["hydra.job.chdir=maybe"],
        "bad value in override 'hydra.job.chdir=maybe': Value 'maybe' is not a valid bool (type str)",
        id="wrong-type-hydra",
    ),
    pytest.param(
        ["dataset=small,medium"],
        "bad override: Ambiguous value for argument 'dataset=small,medium'; 1. To use it as a list, use "
        "key=[value1,value2]; 2. To use it as string, quote the value: key='value1,value2'; 3. To sweep over "
        "it, add --multirun to your command line",
        id="sweep-without-multirun",
    ),
    # Zero, negative and inconsistent numbers
    pytest.param(
        ["dataset.scale=0"],
        "invalid config: dataset.scale=0: Input should be greater than 0",
        id="scale-zero",
    ),
    pytest.param(
        ["dataset.scale=-1"],
        "invalid config: dataset.scale=-1: Input should be greater than 0",
        id="scale-negative",
    ),
    pytest.param(
        ["dataset.partitioning=hour"],
        "invalid config: dataset: the arrow builder writes day partitions only; give "
        "dataset.builder=spark for partitioning=hour",
        id="arrow-builder-hour-partitions",
    ),
    pytest.param(
        ["verify.readers_per_day=3"],
        "invalid config: verify.readers_per_day=3: Input should be 2 or 4",
        id="readers-per-day",
    ),
    pytest.param(
        ["experiment=smoke", "protocol.repetitions=0"],
        "invalid config: protocol.repetitions=0: Input should be greater than or equal to 1",
        id="repetitions-zero",
    ),
    pytest.param(
        ["experiment=smoke", "protocol.repetitions=-1"],
        "invalid config: protocol.repetitions=-1: Input should be greater than or equal to 1",
        id="repetitions-negative",
    ),
    pytest.param(
        ["protocol.warmups=-1"],
        "invalid config: protocol.warmups=-1: Input should be greater than or equal to 0",
        id="warmups-negative",
    ),
    pytest.param(
        ["experiment=smoke", "protocol.executions=9"],
        "invalid config: protocol: executions (9) exceeds repetitions (2)",
        id="executions-over-repetitions",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.windows=[0h]"],
        "invalid config: experiment.windows=['0h']: bad window '0h': use a positive number of hours or days "
        "(1h, 7d) or 'full'",
        id="window-zero",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.windows=[-1d]"],
        "invalid config: experiment.windows=['-1d']: bad window '-1d': use a positive number of hours or "
        "days (1h, 7d) or 'full'",
        id="window-negative",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.windows=[1w,1d,30d]"],
        "invalid config: experiment.windows=['1w', '1d', '30d']: bad window '1w': use a positive number of "
        "hours or days (1h, 7d) or 'full'",
        id="window-unit",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.ratio=[180d,1d]"],
        "invalid config: experiment: ratio window 180d is not among the windows ['1h', '1d', '7d', '30d']",
        id="ratio-not-a-window",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.ratio=[1d,1d]"],
        "invalid config: experiment: ratio needs two different windows, got ['1d', '1d']",
        id="ratio-same-windows",
    ),
    pytest.param(
        ["experiment=snapshot_expiry", "experiment.commits_per_day=0"],
        "invalid config: experiment.commits_per_day=0: Input should be greater than 0",
        id="commits-per-day-zero",
    ),
    pytest.param(
        ["lock_wait_s=-1"],
        "lock_wait_s=-1: use a number of seconds >= 0 (0: refuse, do not wait)",
        id="lock-wait-negative",
    ),
    pytest.param(
        ["paths.min_free_gb=-1"],
        "invalid config: paths.min_free_gb=-1: Input should be greater than or equal to 0",
        id="min-free-negative",
    ),
    pytest.param(
        ["experiment=smoke", "profile.rewrite_8mb.manifest_target_size=8XB"],
        "invalid config: profile.rewrite_8mb: bad size '8XB': use a positive number with KB, MB or GB, "
        "e.g. 8MB",
        id="bad-size",
    ),
    pytest.param(
        ["experiment=manifest_health", "+experiment.rules.bounds_p95={advise:1,need:2}"],
        "invalid config: experiment: unknown rule 'bounds_p95': use "
        "<exact|bounds|span>_<min|max|mean|median|stdev|p60|p90|p99>",
        id="unknown-rule",
    ),
    pytest.param(
        ["experiment=manifest_health", "experiment.rules.bounds_p90.advise=20"],
        "invalid config: experiment.rules.bounds_p90={'advise': 20, 'need': 16}: advise (20.0) is above "
        "need (16.0)",
        id="rule-order",
    ),
    # The standalone cluster icelab starts (engine=standalone)
    pytest.param(
        ["engine=standalone", "engine.worker_cores=0"],
        "invalid config: engine.worker_cores=0: Input should be greater than or equal to 1",
        id="worker-cores-zero",
    ),
    pytest.param(
        ["engine=standalone", "engine.worker_memory=3x"],
        "invalid config: engine.worker_memory='3x': bad memory '3x': use a whole number with a unit k, m, g "
        "or t, as Spark's memory settings take (512m, 3g)",
        id="worker-memory-unit",
    ),
    # Windows outside the data (tiny: 60 days ending 2026-06-30; small: 180 days)
    pytest.param(
        ["experiment=smoke", "experiment.end=2026-07-15"],
        f"window 1h [2026-07-14 23:00, 2026-07-15) ends after the data: {TINY}; "
        "experiment.end may be at most 2026-06-30",
        id="end-after-data",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.end=2026-04-01"],
        f"window 1h [2026-03-31 23:00, 2026-04-01) lies before the data: {TINY}; "
        "experiment.end must be after 2026-05-01",
        id="end-before-data",
    ),
    pytest.param(
        ["experiment=smoke", "experiment.end=2026-05-10"],
        f"window 30d [2026-04-10, 2026-05-10) starts before the data's first day: {TINY}, so it would count "
        "only 9 of its 30 days; use windows up to 9d, 'full', a later experiment.end or a longer "
        "dataset.span_days",
        id="window-before-first-day",
    ),
    pytest.param(
        ["experiment=manifest_8mb", "dataset=tiny"],
        f"window 90d [2026-04-01, 2026-06-30) starts before the data's first day: {TINY}, so it would count "
        "only 60 of its 90 days; use windows up to 60d, 'full', a later experiment.end or a longer "
        "dataset.span_days",
        id="window-longer-than-data",
    ),
    pytest.param(
        ["experiment=canonical", "experiment.end=2026-07-01"],
        "query q01_count_last_hour: window 1h [2026-06-30 23:00, 2026-07-01) ends after the data: dataset "
        "small spans [2026-01-01, 2026-06-30); experiment.end may be at most 2026-06-30",
        id="canonical-end-after-data",
    ),
    # The Iceberg jar: missing, or built for another Spark or Scala
    pytest.param(
        ["engine.iceberg_jar=nope.jar"],
        f"Iceberg jar 'nope.jar' not found in snowpark-connect-deps-iceberg==1.0.2 ({JAR})",
        id="jar-missing",
    ),
    pytest.param(
        ["engine.iceberg_jar=iceberg-spark-runtime-3.4_2.12-1.10.2.jar"],
        "Iceberg jar 'iceberg-spark-runtime-3.4_2.12-1.10.2.jar' " + JAR_BUILD.format("3.4 / Scala 2.12"),
        id="jar-wrong-spark",
    ),
    pytest.param(
        ["engine.iceberg_jar=iceberg-spark-runtime-3.5_2.13-1.10.2.jar"],
        "Iceberg jar 'iceberg-spark-runtime-3.5_2.13-1.10.2.jar' " + JAR_BUILD.format("3.5 / Scala 2.13"),
        id="jar-wrong-scala",
    ),
    pytest.param(
        ["engine.iceberg_jar=iceberg-spark-extensions-3.5_2.12-1.10.2.jar"],
        f"'iceberg-spark-extensions-3.5_2.12-1.10.2.jar' is not an Iceberg Spark runtime jar ({JAR})",
        id="jar-not-runtime",
    ),
]


# The cases below need a file, a file system or a Java of their own; {tmp} is their directory.
MESSAGES = {
    "test_results_dir_is_a_file": "paths.results_dir='{tmp}/a-file' is a file, not a directory; "
    "give a directory",
    "test_unwritable_data_dir": "paths.data_dir='{tmp}/a-file/data' is not writable (Not a directory); "
    "give a writable directory",
    "test_results_dir_on_a_pseudo_file_system": "paths.results_dir='/sys/icelab-results' is not writable "
    "(Operation not permitted); give a writable directory",
    "test_results_dir_on_a_read_only_disk": "paths.results_dir='{tmp}/results' is not writable "
    "(Read-only file system); give a writable directory",
    "test_results_dir_on_a_full_disk": "paths.results_dir='{tmp}/results' is on a full disk; free some space "
    "or give another directory",
    "test_data_dir_with_too_little_free_space": "paths.data_dir='{tmp}/data' has 0.00 GB free, below "
    "paths.min_free_gb=1; free some space, give another directory or lower paths.min_free_gb",
    "test_missing_java": "Java not found: Spark 3.5 needs Java 17 on PATH or in JAVA_HOME",
    "test_java_home_without_java": "JAVA_HOME={tmp} has no bin/java; install Java 17 or fix JAVA_HOME",
    "test_unsupported_java[java-8]": "Java 8 at {tmp}/bin/java is not supported (supported: 11, 17); "
    "install Java 17",
    "test_unsupported_java[java-21]": "Java 21 at {tmp}/bin/java is not supported (supported: 11, 17); "
    "install Java 17",
}


@dataclass(frozen=True)
class Case:
    """One `python run.py` of the batch: its arguments, its changes to the environment (None
    unsets), and the directory {tmp} stands for in its message."""

    args: list[str]
    tmp: Path | None = None
    env: dict[str, str | None] = field(default_factory=dict)


def results_dir_is_a_file(tmp: Path, mounts: ExitStack) -> Case:
    (tmp / "a-file").write_text("not a directory")
    return Case([f"paths.data_dir={tmp}/data", f"paths.results_dir={tmp}/a-file"], tmp)


def unwritable_data_dir(tmp: Path, mounts: ExitStack) -> Case:
    (tmp / "a-file").write_text("not a directory")
    return Case([f"paths.data_dir={tmp}/a-file/data"], tmp)


def results_dir_on_a_pseudo_file_system(tmp: Path, mounts: ExitStack) -> Case:
    # We run as root, so permissions stop nothing; sysfs refuses new directories even to root.
    return Case([f"paths.data_dir={tmp}/data", "paths.results_dir=/sys/icelab-results"])


def results_dir_on_a_read_only_disk(tmp: Path, mounts: ExitStack) -> Case:
    disk = mounts.enter_context(mounted_tmpfs(tmp / "tmpfs", "ro"))
    return Case([f"paths.data_dir={tmp}/data", f"paths.results_dir={disk}/results"], disk)


def results_dir_on_a_full_disk(tmp: Path, mounts: ExitStack) -> Case:
    disk = fill(mounts.enter_context(mounted_tmpfs(tmp / "tmpfs")))
    return Case([f"paths.data_dir={tmp}/data", f"paths.results_dir={disk}/results"], disk)


def data_dir_with_too_little_free_space(tmp: Path, mounts: ExitStack) -> Case:
    disk = mounts.enter_context(mounted_tmpfs(tmp / "tmpfs"))  # 1 MB free, below paths.min_free_gb=1
    return Case([f"paths.data_dir={disk}/data", f"paths.results_dir={tmp}/results"], disk)


def missing_java(tmp: Path, mounts: ExitStack) -> Case:
    return Case([], env={"JAVA_HOME": None, "PATH": "/nonexistent"})


def java_home_without_java(tmp: Path, mounts: ExitStack) -> Case:
    return Case([], tmp, env={"JAVA_HOME": str(tmp)})


JAVA_BANNERS = {"java-8": 'openjdk version "1.8.0_392"', "java-21": 'openjdk version "21.0.2" 2024-01-16'}


def unsupported_java(banner: str) -> Callable[[Path, ExitStack], Case]:
    def setup(tmp: Path, mounts: ExitStack) -> Case:
        (tmp / "bin").mkdir()
        fake_java(tmp / "bin", banner)
        return Case([f"paths.data_dir={tmp}/data"], tmp, env={"JAVA_HOME": str(tmp)})

    return setup


# How each test of MESSAGES makes its case (its files, disks and Java), by test name.
SETUPS: dict[str, Callable[[Path, ExitStack], Case]] = {
    "test_results_dir_is_a_file": results_dir_is_a_file,
    "test_unwritable_data_dir": unwritable_data_dir,
    "test_results_dir_on_a_pseudo_file_system": results_dir_on_a_pseudo_file_system,
    "test_results_dir_on_a_read_only_disk": results_dir_on_a_read_only_disk,
    "test_results_dir_on_a_full_disk": results_dir_on_a_full_disk,
    "test_data_dir_with_too_little_free_space": data_dir_with_too_little_free_space,
    "test_missing_java": missing_java,
    "test_java_home_without_java": java_home_without_java,
    **{f"test_unsupported_java[{java}]": unsupported_java(banner) for java, banner in JAVA_BANNERS.items()},
}


@pytest.fixture(scope="module")
def batch(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Case, subprocess.CompletedProcess] | str]:
    """Every case of CASES and SETUPS run by `run.py` in one child process (tests/cli_batch.py):
    its case and outcome by case id or test name, or why it was skipped (mounting needs root).

    One process: the ten cases of SETUPS took 38 s as a `python run.py` each, 3 s here; each
    keeps its own arguments, environment, files and mounted disks (unmounted after the batch).
    """
    cases: dict[str, Case] = {}
    for case in CASES:
        # Had a check let the input through, nothing would be written into the repository.
        tmp = tmp_path_factory.mktemp(case.id)
        cases[case.id] = Case(
            [*case.values[0], f"paths.data_dir={tmp}/data", f"paths.results_dir={tmp}/results"]
        )
    skipped: dict[str, str] = {}
    with ExitStack() as mounts:
        for name, setup in SETUPS.items():
            try:
                cases[name] = setup(tmp_path_factory.mktemp(re.sub(r"\W", "_", name)), mounts)
            except pytest.skip.Exception as exc:
                skipped[name] = exc.msg
        outcomes = run_batch([{"args": case.args, "env": case.env} for case in cases.values()])
    return skipped | {name: (case, o) for (name, case), o in zip(cases.items(), outcomes, strict=True)}


@pytest.mark.parametrize(("args", "message"), CASES)
def test_bad_input_gives_one_line(request, batch, args, message):
    _, proc = batch[request.node.callspec.id]
    assert_one_line_error(proc, message)


def assert_own_case(name: str, batch: dict[str, tuple[Case, subprocess.CompletedProcess] | str]) -> None:
    """The batch's outcome of the SETUPS case `name` is the one line of MESSAGES[name]."""
    if isinstance(batch[name], str):
        pytest.skip(batch[name])
    case, proc = batch[name]
    assert_one_line_error(proc, MESSAGES[name].format(tmp=case.tmp))


def test_results_dir_is_a_file(batch):
    assert_own_case("test_results_dir_is_a_file", batch)


def test_unwritable_data_dir(batch):
    assert_own_case("test_unwritable_data_dir", batch)


def test_results_dir_on_a_pseudo_file_system(batch):
    assert_own_case("test_results_dir_on_a_pseudo_file_system", batch)


def test_results_dir_on_a_read_only_disk(batch):
    assert_own_case("test_results_dir_on_a_read_only_disk", batch)


def test_results_dir_on_a_full_disk(batch):
    assert_own_case("test_results_dir_on_a_full_disk", batch)


def test_data_dir_with_too_little_free_space(batch):
    assert_own_case("test_data_dir_with_too_little_free_space", batch)


def test_missing_java(batch):
    assert_own_case("test_missing_java", batch)


def test_java_home_without_java(batch):
    assert_own_case("test_java_home_without_java", batch)


@pytest.mark.parametrize("java", list(JAVA_BANNERS))
def test_unsupported_java(request, batch, java):
    assert_own_case(request.node.name, batch)


def test_multirun_jobs_are_checked_before_any_runs():
    proc = run_cli("-m", "experiment=smoke", "protocol.repetitions=1,0")
    message = "invalid config: protocol.repetitions=0: Input should be greater than or equal to 1"
    assert_one_line_error(proc, message)


def readme_bad_input_rows() -> list[tuple[str, str]]:
    """(message, test) of each row of the "Bad input" table in docs/reliability.md."""
    text = (REPO / "docs" / "reliability.md").read_text()
    section = text.split("\n## Bad input\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 4 and cells[3].startswith("`"):
            rows.append((cells[2].strip("`").replace("\\|", "|"), cells[3].strip("`")))
    return rows


def test_readme_bad_input_table_matches_the_tests():
    expected = {f"test_cli.py::test_bad_input_gives_one_line[{p.id}]": p.values[1] for p in CASES}
    expected |= {f"test_cli.py::{name}": message.format(tmp="/tmp/x") for name, message in MESSAGES.items()}
    rows = readme_bad_input_rows()
    assert {test for _, test in rows if test.startswith("test_cli.py")} == set(expected)
    for message, test in rows:
        if test in expected:
            # `…` in the table stands for a long list or a temporary path.
            pattern = ".*".join(map(re.escape, message.split("…")))
            assert re.fullmatch(pattern, expected[test]), test
        else:
            file, name = test.split("::")
            (module,) = (REPO / "tests").rglob(file)
            assert f"def {name}(" in module.read_text(), test
