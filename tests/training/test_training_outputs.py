"""Outputs under faults: leftovers of a killed writer are removed, those of a live writer
(even one whose pid means nothing here) are kept, an old copy left between two renames goes
back to its place; `export --force` and the ranking never destroy a run; bad numbers and
damaged files are one line naming them."""

import os
import subprocess
import sys
import time

import pytest
from hang_limit import HANG_S

from mtn_keras.base.outputs import LOCK, remove_stale_staging, staged_directory, try_lock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def leftovers(parent, stem, target, holder=None):
    """What a writer called `stem` leaves: its lock file naming `target`, held by `holder`."""
    lock = parent / (stem + LOCK)
    handle = try_lock(str(lock), str(target) + "\n")
    if holder is None:
        handle.close()
    return handle


def test_a_dead_writer_s_staging_is_removed_and_a_live_one_s_kept(tmp_path):
    # pid 1 is alive in every namespace: only the lock tells these two writers apart.
    (tmp_path / ".prepare-1-dead0000").mkdir()
    leftovers(tmp_path, ".prepare-1-dead0000", tmp_path / "a")
    (tmp_path / ".prepare-1-live0000").mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            f"h = open({str(tmp_path / ('.prepare-1-live0000' + LOCK))!r}, 'a')\n"
            "fcntl.flock(h, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        remove_stale_staging(str(tmp_path))
        assert sorted(os.listdir(tmp_path)) == [".prepare-1-live0000", ".prepare-1-live0000.lock"]
    finally:
        holder.kill()
        holder.wait()
    remove_stale_staging(str(tmp_path))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("new_is_whole", [True, False])
def test_an_old_copy_left_between_the_renames_goes_back(tmp_path, new_is_whole):
    out = tmp_path / "out"
    stem = ".prepare-99999999-abcd1234"
    (tmp_path / (stem + ".old")).mkdir()
    (tmp_path / (stem + ".old") / "train.tsv").write_text("old\n")
    if new_is_whole:
        (tmp_path / stem).mkdir()
        (tmp_path / stem / "train.tsv").write_text("new\n")
    leftovers(tmp_path, stem, out)
    with staged_directory(str(tmp_path / "other"), "prepare") as temp:
        open(os.path.join(temp, "x"), "w").close()
    assert (out / "train.tsv").read_text() == ("new\n" if new_is_whole else "old\n")
    assert sorted(os.listdir(tmp_path)) == ["other", "out"]


def test_an_interrupted_staging_leaves_the_previous_output(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("before")
    with pytest.raises(KeyboardInterrupt):
        with staged_directory(str(out), "export") as temp:
            open(os.path.join(temp, "a.txt"), "w").close()
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == ["out"] and (out / "a.txt").read_text() == "before"


def test_errors_while_staging_name_the_users_path_not_a_temporary_file(tmp_path, monkeypatch):
    # An error once named a temporary file the person never gave (".prepare-6554-....lock").
    import tempfile

    from mtn_keras.base.outputs import staged_file
    from mtn_keras.cli import describe

    out, file = str(tmp_path / "data" / "tiny"), str(tmp_path / "out.txt")
    with pytest.raises(OSError) as raised:
        with staged_directory(out, "prepare") as temp:
            open(os.path.join(temp, "sub", "train.tsv"), "w").close()  # no such folder in it
    assert raised.value.filename == os.path.join(out, "sub", "train.tsv")
    with pytest.raises(OSError) as raised:
        with staged_file(file) as temp:
            os.chmod(temp, 0o600)  # never created
    assert describe(raised.value) == f"{file}: No such file or directory"

    def denied(prefix, suffix, dir):
        raise PermissionError(13, "Permission denied", os.path.join(dir, f"{prefix}ab12{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", denied)  # as in a folder one may not write
    with pytest.raises(OSError) as raised:
        with staged_directory(out, "prepare"):
            pass
    assert describe(raised.value) == f"{out}: Permission denied"
    assert sorted(os.listdir(tmp_path)) == ["data"]


def test_export_force_never_replaces_a_training_run_or_foreign_files(tmp_path):
    from mtn_keras.base.outputs import OutputError
    from mtn_keras.export import check_out

    run = tmp_path / "run"
    run.mkdir()
    for name in ("model.keras", "vocab.txt", "config.json", "log.csv", "NOTES.md"):
        (run / name).write_text("x")
    with pytest.raises(OutputError, match="model's folder"):
        check_out(str(run), str(run), force=True)
    with pytest.raises(OutputError, match="model's folder"):
        check_out(str(tmp_path), str(run), force=True)  # holds the run
    check_out(str(run / "savedmodel"), str(run), force=True)  # a new folder inside: the README's
    with pytest.raises(OutputError, match="not an exported SavedModel .*config.json"):
        check_out(str(run), str(tmp_path / "another"), force=True)
    exported = tmp_path / "exported"
    (exported / "variables").mkdir(parents=True)
    (exported / "saved_model.pb").write_text("x")
    with pytest.raises(OutputError, match="pass --force"):
        check_out(str(exported), str(run), force=False)
    check_out(str(exported), str(run), force=True)
    assert sorted(os.listdir(run)) == [
        "NOTES.md",
        "config.json",
        "log.csv",
        "model.keras",
        "vocab.txt",
    ]


def test_a_failed_ranking_save_keeps_the_previous_ranking(tmp_path):
    from mtn_keras.ranking import Ranking

    class Index:
        def save(self, folder):
            with open(os.path.join(folder, "queries.txt"), "w") as handle:
                handle.write("cut")

    class Ranker:
        def save(self, path):
            raise KeyboardInterrupt  # a kill at the first write

    folder = tmp_path / "ranking"
    folder.mkdir()
    (folder / "queries.txt").write_text("whole\n")
    with pytest.raises(KeyboardInterrupt):
        Ranking(Index(), Ranker()).save(str(tmp_path))
    assert os.listdir(tmp_path) == ["ranking"]
    assert (folder / "queries.txt").read_text() == "whole\n"


@pytest.mark.parametrize("threshold", ["null", '"high"', "1.5", "NaN"])
def test_a_ranking_with_a_bad_threshold_is_named(tmp_path, threshold):
    from mtn_keras.ranking import load_ranking

    (tmp_path / "ranking").mkdir()
    (tmp_path / "ranking" / "ranking.json").write_text('{"threshold": %s}' % threshold)
    with pytest.raises(ValueError, match="ranking.json: the threshold is"):
        load_ranking(str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        ["mtn_keras.rank", "--model", "m", "--hidden", "-1"],
        ["mtn_keras.export", "--model", "m", "--out", "o", "--threshold", "nan"],
        ["mtn_keras.export", "--model", "m", "--out", "o", "--threshold", "1.5"],
    ],
)
def test_impossible_numbers_are_usage_errors_before_any_work(tmp_path, command):
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", *command], capture_output=True, text=True, cwd=REPO, timeout=HANG_S
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "invalid" in done.stderr and time.perf_counter() - started < 30


def test_stats_and_subwords_errors_name_the_file_or_the_option(tmp_path, prepared_data, capsys):
    import json
    import shutil

    from mtn_keras.data.dataset_writer import PrepareError, prepare
    from mtn_keras.data.prepared import load_stats
    from mtn_keras.stats import main

    data = shutil.copytree(prepared_data, tmp_path / "data")
    stats = json.loads((data / "stats.json").read_text())
    for options in (None, {"max_queries": "five"}):
        (data / "stats.json").write_text(json.dumps({**stats, "options": options}))
        with pytest.raises(ValueError, match="stats.json: not a stats.json"):
            load_stats(str(data))
    (data / "stats.json").write_text(json.dumps({"rows_read": 3}))
    assert main([str(data)]) == 2
    assert "stats.json: not a whole stats.json" in capsys.readouterr().err
    log = tmp_path / "log.txt"
    log.write_text(
        "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
        + "".join(f"1\tq {i}\t2006-03-01 01:0{i}:00\t\t\n" for i in range(4))
    )
    with pytest.raises(PrepareError, match="--subwords 60: the train split holds no query"):
        prepare([str(log)], str(tmp_path / "out"), split=(1, 500, 500), subwords=60, progress=False)


def test_evaluating_adj_on_its_own_training_sessions_is_warned_about():
    from mtn_keras.scorecard.evaluation import overlap_warning

    train = [["cheap flights", "cheap flights online"], ["cat food", "best cat food"]]
    assert "2 of the 2 evaluated sessions" in overlap_warning(train, train, "data")
    assert overlap_warning([["guitar lessons", "guitar lessons online"]], train, "data") is None


def test_ctrl_c_is_one_line_and_exit_130(capsys):
    from mtn_keras.cli import run

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stopped:
        run(interrupted, "prepare")
    err = capsys.readouterr().err
    assert stopped.value.code == 130
    assert err == "prepare: interrupted; no half-written output is left\n"


def test_a_closed_pipe_ends_quietly(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text(
        "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
        + "".join(
            f"{u}\tq{i} w{u}\t2006-03-01 01:0{i}:00\t\t\n" for u in range(300) for i in range(4)
        )
    )
    code = (
        f"import sys; sys.argv = ['x', '--input', {str(log)!r}, '--out', "
        f"{str(tmp_path / 'out')!r}, '--min-count', '1']\n"
        "from mtn_keras.cli import run; from mtn_keras.prepare import main\n"
        "run(main, 'prepare')"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    reader.stdout.readline()
    reader.stdout.close()  # as `| head -1` does
    _, err = reader.communicate(timeout=HANG_S)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_a_truncated_keras_file_is_not_called_missing(tmp_path):
    from mtn_keras.base.keras_file import load_keras

    (tmp_path / "ranker.keras").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(ValueError, match="ranker.keras: cannot load the model .not a .keras"):
        load_keras(str(tmp_path / "ranker.keras"))


def test_a_run_that_needs_resume_is_not_called_incomplete(tmp_path):
    from mtn_keras.training.artifacts import ModelDirError, load_trained

    (tmp_path / "backup").mkdir()
    for name in ("vocab.txt", "config.json"):
        (tmp_path / name).write_text("x")
    with pytest.raises(ModelDirError, match="did not finish .no model.keras.; continue it"):
        load_trained(str(tmp_path))
