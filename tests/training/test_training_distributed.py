"""tf.distribute training: two worker processes on loopback (MultiWorkerMirroredStrategy
from TF_CONFIG), a job killed and resumed, the same job reading streamed batches (which both
workers build at once), and MirroredStrategy over two logical CPUs, each checked against one
process training in memory on the same global batch.

The runs share one made-up dataset of 224 training sessions of three queries: one bucket,
seven full global batches of 32, so each process traces its step once; 29 validation
sessions, split 15/14 between two replicas, so their losses must be weighted right.
"""

import csv
import json
import os
import random
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limit import HANG_S
from made_up_search_log import EDITS, TOPICS

from mtn_keras.train import main

pytestmark = pytest.mark.slow

WORKER = Path(__file__).with_name("train_worker.py")
REPO = Path(__file__).resolve().parents[2]
GLOBAL_BATCH = 32
# The warm-up counts sessions: 10 steps of 16 per replica on 2 replicas is 5 steps of 32.
TWO_REPLICA_ARGS = ["--batch-size", "16", "--set", "warmup_steps=10"]
ONE_PROCESS_ARGS = ["--batch-size", "32", "--set", "warmup_steps=5"]
# float32 sums taken in another order on each replica; measured differences are ~1e-6.
TOLERANCE = 1e-4


def write_three_query_log(path, users=300):
    """An AOL-format log of made-up sessions, one per user, of three queries on one of the
    made-up log's first eight topics."""
    rng = random.Random(0)
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    for user in range(users):
        topic = rng.choice(TOPICS[:8])
        for minute, edit in enumerate(rng.sample(EDITS, 3)):
            stamp = f"2006-03-01 {user % 24:02d}:{minute:02d}:00"
            lines.append(f"{user}\t{edit.format(q=topic)}\t{stamp}\t\t")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def three_query_data(tmp_path_factory):
    from mtn_keras.data.dataset_writer import prepare

    root = tmp_path_factory.mktemp("distributed")
    out = root / "data"
    prepare(
        [str(write_three_query_log(root / "log.txt"))],
        str(out),
        min_count=2,
        split=(80, 10, 10),
        progress=False,
    )
    train = (out / "train.tsv").read_text().splitlines()
    assert len(train) >= 7 * GLOBAL_BATCH
    (out / "train.tsv").write_text("\n".join(train[: 7 * GLOBAL_BATCH]) + "\n")
    # An odd number: the two replicas get unequal shares of the validation batch.
    valid = (out / "valid.tsv").read_text().splitlines()
    (out / "valid.tsv").write_text("\n".join(valid[:29]) + "\n")
    return out


def common_args(data, epochs):
    return [
        "--data",
        str(data),
        "--preset",
        "tiny",
        "--epochs",
        str(epochs),
        "--verbose",
        "0",
        "--set",
        "learning_rate_scale=4",
    ]


@pytest.fixture(scope="module")
def one_process_log(three_query_data, tmp_path_factory):
    """log.csv's first row of one process training on the global batch."""
    out = tmp_path_factory.mktemp("one") / "run"
    assert (
        main(
            [
                *common_args(three_query_data, 1),
                "--out",
                str(out),
                "--strategy",
                "one",
                *ONE_PROCESS_ARGS,
            ]
        )
        == 0
    )
    return read_rows(out)[0]


def read_rows(out):
    with open(Path(out) / "log.csv") as handle:
        return list(csv.DictReader(handle))


def assert_same_epoch(row, reference):
    for key in ("loss", "nll", "val_loss", "val_nll"):
        assert float(row[key]) == pytest.approx(float(reference[key]), rel=TOLERANCE), key


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def worker_env(tmp, task=None, cluster=None):
    """The environment of a worker; its temporary files (a non-chief's outputs, left behind
    when it is killed) go under the test's `tmp`."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TMPDIR": str(tmp),
    }
    if task is not None:
        env["TF_CONFIG"] = json.dumps(
            {"cluster": {"worker": cluster}, "task": {"type": "worker", "index": task}}
        )
    return env


def start_job(tmp, outs, args, die_after=None):
    """Two workers of one job on loopback, worker i writing to outs[i]; worker 0 (the chief)
    killed at the end of epoch `die_after` if given."""
    cluster = [f"127.0.0.1:{free_port()}" for _ in outs]
    workers = []
    for index, out in enumerate(outs):
        killer = ["--die-after", str(die_after)] if die_after and index == 0 else []
        workers.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(WORKER),
                    *killer,
                    *args,
                    "--strategy",
                    "multi-worker",
                    "--out",
                    str(out),
                ],
                env=worker_env(tmp, index, cluster),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    return workers


def finish(worker, timeout=HANG_S):
    output, _ = worker.communicate(timeout=timeout)
    return worker.returncode, output


def test_two_workers_train_as_one_process_and_resume_after_a_kill(
    three_query_data, one_process_log, tmp_path
):
    chief_out, other_out = tmp_path / "chief", tmp_path / "other"
    args = [*common_args(three_query_data, 2), *TWO_REPLICA_ARGS]

    # The chief dies at the end of its first epoch; the job's other worker is then stopped,
    # as a cluster manager restarts a failed job.
    chief, other = start_job(tmp_path, [chief_out, other_out], args, die_after=1)
    code, output = finish(chief)
    assert code == 137, output
    other.kill()
    other.communicate()
    assert not other_out.exists(), "the other worker wrote into its --out"
    first = read_rows(chief_out)
    assert [row["epoch"] for row in first] == ["0"]
    assert_same_epoch(first[0], one_process_log)

    # Restarted with --resume: every worker reads the chief's backup, so both see its --out.
    workers = start_job(tmp_path, [chief_out, chief_out], [*args, "--resume"])
    for worker in workers:
        code, output = finish(worker)
        assert code == 0, output
    assert [row["epoch"] for row in read_rows(chief_out)] == ["0", "1"]
    names = {path.name for path in chief_out.iterdir()}
    assert {"model.keras", "vocab.txt", "config.json", "train_summary.json"} <= names
    assert "backup" not in names
    summary = json.loads((chief_out / "train_summary.json").read_text())
    assert (
        summary["strategy"],
        summary["replicas"],
        summary["global_batch_size"],
        summary["warmup_steps"],
    ) == ("multi-worker", 2, GLOBAL_BATCH, 5)
    assert not other_out.exists()
    leftovers = [path.name for path in tmp_path.glob("mtn-keras-worker-*")]
    assert len(leftovers) == 1, "only the killed worker leaves its temporary directory"


def test_two_workers_reading_streamed_batches_train_as_one_process(
    three_query_data, one_process_log, tmp_path
):
    data = shutil.copytree(three_query_data, tmp_path / "data")
    chief_out, other_out = tmp_path / "chief", tmp_path / "other"
    args = [*common_args(data, 1), *TWO_REPLICA_ARGS, "--stream-input", "yes"]
    for worker in start_job(tmp_path, [chief_out, other_out], args):
        code, output = finish(worker)
        assert code == 0, output
    assert_same_epoch(read_rows(chief_out)[0], one_process_log)
    built = [path for path in (data / "streamed").iterdir() if path.is_dir()]
    assert [path.name.split("-")[0] for path in built] == ["train"], "built once, whole"
    assert not other_out.exists()


def test_mirrored_on_two_logical_cpus_trains_as_one_process(
    three_query_data, one_process_log, tmp_path
):
    out = tmp_path / "mirrored"
    result = subprocess.run(
        [
            sys.executable,
            str(WORKER),
            "--cpus",
            "2",
            *common_args(three_query_data, 1),
            *TWO_REPLICA_ARGS,
            "--strategy",
            "mirrored",
            "--out",
            str(out),
        ],
        env=worker_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "train_summary.json").read_text())
    assert (summary["strategy"], summary["replicas"]) == ("mirrored", 2)
    assert_same_epoch(read_rows(out)[0], one_process_log)
