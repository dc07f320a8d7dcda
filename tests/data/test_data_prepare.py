"""The prepare command: the prepared directory, its accounting, bad input, the CLI end to end."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limit import HANG_S

from mtn_keras.data.dataset_writer import PrepareError, format_stats, prepare, unaccounted_rows
from mtn_keras.data.logs import InputError
from mtn_keras.data.prepared import load_split, load_stats, load_users
from mtn_keras.data.sessions import Protocol
from mtn_keras.data.vocab import SPECIALS, Vocabulary

REPO = Path(__file__).resolve().parents[2]
EXCITE = REPO.parent / "shared/data/excite/excite-small.log"
AOL_DEV = REPO.parent / "shared/data/aol/aol-top1000-dev.txt.gz"
WORDS = ["red", "blue", "green", "cheap", "bikes", "kites", "tents", "shoes", "maps", "lamps"]


def write_log(path, users=60):
    """A made-up AOL log: per user, three sessions of 3, 1 and 6 queries, and a bad row."""
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    for u in range(users):
        queries = [(0, 3), (2, 1), (4, 6)]
        for hour, (start, count) in enumerate(queries):
            for k in range(count):
                query = f"{WORDS[(u + start + k) % 10]} {WORDS[(u * 3 + k) % 10]}"
                lines.append(f"{u}\t{query}\t2006-03-01 {hour * 2:02d}:{k:02d}:00\t1\texample.com")
                lines.append(f"{u}\t{query}\t2006-03-01 {hour * 2:02d}:{k:02d}:00\t2\texample.org")
        lines.append(f"{u}\tbroken row")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def prepare_windows(folder, users, held_out, **options):
    """The folder "prepared" under `folder`: write_log's `users` users prepared under `all` in
    windows of 4, `held_out` users each for validation and test."""
    out = folder / "prepared"
    prepare(
        [write_log(folder / "log.txt", users=users)],
        str(out),
        protocol=Protocol.named("all", max_queries=4),
        split_by="user",
        split_users=(held_out, held_out),
        progress=False,
        **options,
    )
    return out


def run_cli(command, *args):
    """`python -m mtn_keras.COMMAND ARGS` (prepare or stats)."""
    return subprocess.run(
        [sys.executable, "-m", f"mtn_keras.{command}", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


def test_data_prepare_writes_the_contract_directory(tmp_path):
    out = tmp_path / "prepared"
    stats = prepare([write_log(tmp_path / "log.txt")], str(out), split=(80, 10, 10), min_count=2)
    assert sorted(os.listdir(out)) == [
        "evidence.tsv",
        "history.tsv",
        "stats.json",
        "test.tsv",
        "test.users",
        "train.tsv",
        "train.users",
        "valid.tsv",
        "valid.users",
        "vocab.txt",
    ]
    assert load_stats(out) == json.loads(json.dumps(stats))
    splits = {name: load_split(out, name) for name in ("train", "valid", "test")}
    assert [len(splits[name]) for name in ("train", "valid", "test")] == [48, 6, 6]
    assert all(len(session) == 3 for split in splits.values() for session in split)
    assert stats["splits"]["train"] == {
        "sessions": 48,
        "lines": 48,
        "pairs": 96,
        "queries": 144,
        "users": 48,
    }
    assert stats["options"]["protocol"] == "paper"
    assert stats["rows_read"] == 60 * 21 and stats["rows_malformed"] == 60
    assert stats["dropped_rows"]["consecutive_duplicate"] == 60 * 10
    assert stats["dropped_sessions"] == dict(
        child_unsafe=0, too_short=60, too_long=60, long_query=0
    )
    assert unaccounted_rows(stats) == 0
    vocab = Vocabulary.load(out / "vocab.txt")
    assert vocab.tokens[:4] == list(SPECIALS) and stats["vocab_size"] == len(vocab)
    train_words = [w for session in splits["train"] for q in session for w in q.split()]
    assert set(vocab.tokens[4:]) == {w for w in set(train_words) if train_words.count(w) >= 2}


def test_data_prepare_refuses_a_non_empty_out_without_force(tmp_path):
    log = write_log(tmp_path / "log.txt")
    out = tmp_path / "prepared"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(PrepareError, match="--force"):
        prepare([log], str(out))
    assert os.listdir(out) == ["keep.txt"]
    with pytest.raises(PrepareError, match="not a prepared dataset"):
        prepare([log], str(out), force=True)  # --force replaces a prepared dataset, nothing else
    assert os.listdir(out) == ["keep.txt"]
    os.remove(out / "keep.txt")
    prepare([log], str(out))
    prepare([log], str(out), force=True, seed=1)
    assert "train.tsv" in os.listdir(out) and load_stats(out)["options"]["seed"] == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_data_prepare_fails_before_writing_anything(tmp_path):
    out = tmp_path / "prepared"
    with pytest.raises(InputError):
        prepare([write_log(tmp_path / "log.txt"), str(tmp_path / "missing.txt")], str(out))
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(PrepareError, match="no session left"):
        prepare([str(empty)], str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt", "log.txt"]


def test_data_prepare_options_change_the_protocol(tmp_path):
    stats = prepare(
        [write_log(tmp_path / "log.txt")],
        str(tmp_path / "out"),
        protocol=Protocol(min_queries=2, max_queries=6),
        split=(1, 1, 1),
        split_by="user",
    )
    assert sum(split["sessions"] for split in stats["splits"].values()) == 120
    assert [stats["splits"][name]["users"] for name in ("train", "valid", "test")] == [20, 20, 20]
    assert unaccounted_rows(stats) == 0


def test_data_prepare_all_protocol_windows_after_the_split(tmp_path):
    """Per user: sessions of 3, 1 and 6 queries; `all` keeps the 3 and the 6 (two windows)."""
    log = write_log(tmp_path / "log.txt")
    stats = prepare(
        [log],
        str(tmp_path / "out"),
        protocol=Protocol.named("all"),
        split=(1, 1, 1),
        split_by="user",
        min_count=1,
    )
    assert stats["options"]["protocol"] == "all" and stats["options"]["min_queries"] == 2
    assert stats["dropped_sessions"] == dict(child_unsafe=0, too_short=60, too_long=0, long_query=0)
    assert unaccounted_rows(stats) == 0
    for name, split in stats["splits"].items():
        lines = load_split(tmp_path / "out", name)
        assert split["lines"] == len(lines) == 3 * split["users"]
        assert split["pairs"] == sum(len(line) - 1 for line in lines) == 7 * split["users"]
        assert split["queries"] == 9 * split["users"]
        assert max(len(line) for line in lines) == 5
    paper = prepare([log], str(tmp_path / "paper"), split=(1, 1, 1), split_by="user")
    for name in ("train", "valid", "test"):  # every user falls in one split under any protocol
        firsts = {line[0] for line in load_split(tmp_path / "paper", name)}
        assert firsts <= {line[0] for line in load_split(tmp_path / "out", name)}
    assert paper["splits"]["test"]["users"] == stats["splits"]["test"]["users"]


@pytest.mark.slow
@pytest.mark.skipif(not AOL_DEV.exists(), reason=f"{AOL_DEV} is absent")
def test_data_prepare_the_aol_dev_log_under_both_protocols(tmp_path):
    """The paper's counts (20,566 sessions, 52,778 pairs) less the sessions that seek sexual
    content involving minors, by their words or their clicks (data/safety.py,
    data/evidence.py; 871 of every length, 212 of the paper's); `all` keeps at least 100,000
    pairs, every row counted."""
    paper = prepare([str(AOL_DEV)], str(tmp_path / "paper"))
    assert sum(split["sessions"] for split in paper["splits"].values()) == 20_566 - 212
    assert sum(split["pairs"] for split in paper["splits"].values()) == 52_778 - 567
    assert paper["dropped_sessions"]["child_unsafe"] == 871
    every = prepare([str(AOL_DEV)], str(tmp_path / "all"), protocol=Protocol.named("all"))
    assert every["rows_read"] == 366_927 and unaccounted_rows(every) == 0
    assert sum(split["pairs"] for split in every["splits"].values()) >= 100_000
    assert sum(split["queries"] for split in every["splits"].values()) == every["queries_kept"]


def test_data_cli_prepare_and_stats(tmp_path):
    log, out = write_log(tmp_path / "log.txt"), tmp_path / "out"
    done = run_cli("prepare", "--input", log, "--out", out, "--split", "80/10/10", "--seed", "1")
    assert done.returncode == 0, done.stderr
    assert "log.txt:22: too few fields" in done.stdout
    shown = run_cli("stats", out)
    assert shown.returncode == 0
    assert "Unrolled Query Pairs" in shown.stdout and "Training" in shown.stdout
    assert "unaccounted" in shown.stdout and "(!)" not in shown.stdout
    again = run_cli("prepare", "--input", log, "--out", out)
    assert again.returncode == 2 and "--force" in again.stderr
    every = run_cli("prepare", "--input", log, "--out", tmp_path / "all", "--protocol", "all")
    assert every.returncode == 0, every.stderr
    assert (
        "protocol all" in every.stdout
        and load_stats(tmp_path / "all")["options"]["min_queries"] == 2
    )


def test_prepare_module_takes_the_options_without_a_subcommand(tmp_path):
    # `python -m mtn_keras.prepare --input ...` once said "invalid choice".
    log, out = write_log(tmp_path / "log.txt"), tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "mtn_keras.prepare", "--input", log, "--out", out],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout and (out / "stats.json").is_file()
    helped = subprocess.run(
        [sys.executable, "-m", "mtn_keras.prepare", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert helped.stdout.startswith("usage: python -m mtn_keras.prepare [-h] --input LOG")


def test_data_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    for bad in (tmp_path / "missing.txt", tmp_path):
        done = run_cli("prepare", "--input", bad, "--out", tmp_path / "out")
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert not (tmp_path / "out").exists()
    assert run_cli("prepare", "--input", "x", "--out", "y", "--split", "95/5").returncode == 2
    assert run_cli("prepare", "--input", "x", "--out", "y", "--max-queries", "2").returncode == 2
    for bad in (["--min-queries", "1"], ["--max-queries", "1"]):
        assert (
            run_cli("prepare", "--input", "x", "--out", "y", "--protocol", "all", *bad).returncode
            == 2
        )
    for bad in (
        ["--min-queries", "1", "--max-queries", "1"],
        ["--gap-minutes", "nan"],
        ["--gap-minutes", "inf"],
        ["--split", "nan/1/1"],
        ["--split", "95/inf/1"],
    ):
        done = run_cli("prepare", "--input", "x", "--out", "y", *bad)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (bad, done.stderr)
    missing = run_cli("stats", tmp_path / "nothing")
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")


def test_data_reading_logs_does_not_import_tensorflow(tmp_path):
    log, out = write_log(tmp_path / "log.txt"), str(tmp_path / "out")
    code = (
        "import sys, mtn_keras.data.dataset_writer, mtn_keras.data.encode, mtn_keras.prepare\n"
        f"mtn_keras.data.dataset_writer.prepare([{log!r}], {out!r})\n"
        "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, "
        "'tensorflow imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=HANG_S
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(not EXCITE.exists(), reason=f"{EXCITE} is absent")
def test_data_prepare_the_excite_sample(tmp_path):
    stats = prepare([str(EXCITE)], str(tmp_path / "out"), fmt="excite")
    sessions = sum(split["sessions"] for split in stats["splits"].values())
    assert 150 <= sessions <= 230
    assert stats["rows_read"] == 4501 and stats["dropped_rows"]["page_through"] > 0
    assert unaccounted_rows(stats) == 0


def test_data_prepare_split_users_gives_the_asked_users_each_in_one_split(tmp_path):
    """--split-users: exactly that many users in valid and test, each user in one split, and
    the users files aligned with the splits' lines."""
    log = write_log(tmp_path / "log.txt")
    out = tmp_path / "users"
    stats = prepare([log], str(out), split_by="user", split_users=(7, 5), min_count=1)
    counts = {name: split["users"] for name, split in stats["splits"].items()}
    assert counts == {"train": 48, "valid": 7, "test": 5}
    assert stats["options"]["split_users"] == [7, 5] and "split" not in stats["options"]
    assert "users: 48 train, 7 valid, 5 test (--split-users 7,5)" in format_stats(stats)
    users = {name: load_users(out, name) for name in ("train", "valid", "test")}
    assert all(len(users[name]) == len(load_split(out, name)) for name in users)
    assert [len(set(users[name])) for name in ("train", "valid", "test")] == [48, 7, 5]
    assert not (
        set(users["train"]) & set(users["valid"])
        or set(users["train"]) & set(users["test"])
        or set(users["valid"]) & set(users["test"])
    )
    every = prepare(
        [log],
        str(tmp_path / "all"),
        protocol=Protocol.named("all"),
        split_by="user",
        split_users=(7, 5),
    )
    assert every["splits"]["test"]["users"] == 5
    assert len(load_users(tmp_path / "all", "test")) == every["splits"]["test"]["lines"]


def test_data_prepare_split_users_refuses_counts_that_leave_no_training_user(tmp_path):
    log = write_log(tmp_path / "log.txt")
    with pytest.raises(PrepareError, match="leave no training user"):
        prepare([log], str(tmp_path / "out"), split_by="user", split_users=(30, 30))
    assert not (tmp_path / "out").exists()
    by_user = ["--split-by", "user"]
    done = run_cli(
        "prepare", "--input", log, "--out", tmp_path / "out", *by_user, "--split-users", "50,10"
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "leave no training user" in done.stderr and not (tmp_path / "out").exists()
    for bad in (
        ["--split-users", "5,5"],  # by session
        ["--split-by", "user", "--split-users", "5"],
        ["--split-by", "user", "--split-users", "-1,5"],
        ["--split-by", "user", "--split-users", "5,5", "--split", "80/10/10"],
    ):
        done = run_cli("prepare", "--input", log, "--out", tmp_path / "out", *bad)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (bad, done.stderr)


def test_data_old_dataset_without_users_files_has_no_users(tmp_path):
    out = tmp_path / "old"
    prepare([write_log(tmp_path / "log.txt")], str(out), split=(80, 10, 10))
    assert len(load_users(out, "test")) == 6
    (out / "test.users").unlink()
    assert load_users(out, "test") is None
    (out / "valid.users").write_text("1\n")
    with pytest.raises(ValueError, match="1 users for the 6 sessions"):
        load_users(out, "valid")
