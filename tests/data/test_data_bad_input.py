"""Bad input and killed runs at `prepare`: nothing lost, nothing silent (fuzz cases included)."""

import gzip
import os
import subprocess
import sys

import pytest
from hang_limit import HANG_S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtn_keras.data import logs
from mtn_keras.data.dataset_writer import FILES, PrepareError, prepare
from mtn_keras.data.logs import InputError, Tally, read_log

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def run_cli(command, *args):
    """`python -m mtn_keras.COMMAND ARGS` (prepare or stats)."""
    return subprocess.run(
        [sys.executable, "-m", f"mtn_keras.{command}", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


def small_log(path, users=30, crlf=False):
    """Three-field AOL rows (no rank, no URL): each user 2 sessions of 3 made-up queries."""
    lines = []
    for user in range(users):
        for hour in (1, 5):
            for minute, query in enumerate(["red bikes", "red bikes cheap", "blue kites"]):
                lines.append(f"{user}\t{query} {user % 7}\t2006-03-01 {hour:02d}:{minute:02d}:00")
    end = "\r\n" if crlf else "\n"
    path.write_bytes(end.join(lines).encode() + end.encode())
    return path


def test_force_never_deletes_an_input_or_other_files(tmp_path):
    folder = tmp_path / "sac"
    folder.mkdir()
    log = small_log(folder / "small.txt")
    (folder / "notes.txt").write_text("x\n")
    done = run_cli("prepare", "--input", log, "--out", folder, "--force")
    assert done.returncode == 2 and "holds the input" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x\n")
    with pytest.raises(PrepareError, match="not a prepared dataset.*notes.txt"):
        prepare([str(log)], str(other), force=True, split=(80, 10, 10), progress=False)
    assert sorted(os.listdir(folder)) == ["notes.txt", "small.txt"]
    assert os.listdir(other) == ["notes.txt"]
    out = tmp_path / "prepared"
    prepare([str(log)], str(out), split=(80, 10, 10), progress=False)
    prepare(
        [str(log)], str(out), force=True, split=(60, 20, 20), progress=False
    )  # a dataset: replaced
    assert sorted(os.listdir(out)) == sorted(FILES)


def test_a_crlf_log_gives_the_counts_of_its_lf_twin(tmp_path, monkeypatch):
    monkeypatch.setattr(logs, "_CHUNK", 100)  # many blocks, each cut at a line end
    counts = {}
    for crlf in (False, True):
        path = small_log(tmp_path / f"log-{crlf}.txt", crlf=crlf)
        stats = prepare(
            [str(path)], str(tmp_path / f"out-{crlf}"), split=(80, 10, 10), progress=False
        )
        stats.pop("options")
        counts[crlf] = stats
    assert counts[True]["rows_malformed"] == 0
    assert counts[True] == counts[False]


def test_stale_staging_folders_of_killed_runs_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".prepare-{dead.pid}-abcd"
    stale.mkdir()
    (stale / "train.tsv").write_text("half written\n")
    mine = tmp_path / f".prepare-{os.getpid()}-efgh"  # a running writer's: kept
    mine.mkdir()
    prepare(
        [str(small_log(tmp_path / "log.txt"))],
        str(tmp_path / "out"),
        split=(80, 10, 10),
        progress=False,
    )
    assert not stale.exists() and mine.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name, "log.txt", "out"]


def test_out_under_a_file_is_named(tmp_path):
    log = small_log(tmp_path / "small.txt")
    done = run_cli("prepare", "--input", log, "--out", log / "sub")
    assert done.returncode == 2 and "is a file, not a directory" in done.stderr
    assert done.stderr.count("\n") == 1


def test_interleaved_users_are_named_as_the_cause(tmp_path):
    lines = [
        f"{user}\tquery {minute}\t2006-03-01 01:{minute:02d}:00"
        for minute in range(6)
        for user in range(4)
    ]
    (tmp_path / "log.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(PrepareError, match="grouped by user"):
        prepare([str(tmp_path / "log.txt")], str(tmp_path / "out"), progress=False)


def test_an_empty_split_is_warned_about(tmp_path):
    done = run_cli(
        "prepare",
        "--input",
        small_log(tmp_path / "log.txt"),
        "--out",
        tmp_path / "out",
        "--split",
        "1/500/500",
    )
    assert done.returncode == 0
    assert "warning:" in done.stderr and "the train split is empty" in done.stderr


# Fuzz cases: the reader never raises on any bytes, and accounts for every line it reads.


def read_all(path, fmt="aol"):
    tally = Tally()
    rows = list(read_log(str(path), fmt, tally, progress=False))
    return rows, tally


def accounted(rows, tally):
    counts = tally.counts
    return counts["rows_read"] == len(rows) + counts["rows_malformed"] + counts["page_through"]


@FUZZ
@given(data=st.binary(max_size=400), chunk=st.integers(1, 64))
def test_fuzz_random_bytes_are_read_or_counted(tmp_path, monkeypatch, data, chunk):
    monkeypatch.setattr(logs, "_CHUNK", chunk)
    plain, zipped = tmp_path / "log.bin", tmp_path / "log.bin.gz"
    plain.write_bytes(data)
    zipped.write_bytes(gzip.compress(data))
    lines = data.removesuffix(b"\n").split(b"\n") if data else []
    for fmt in ("aol", "excite"):
        if data.startswith(b"\x1f\x8b"):  # read as a gzip file, which it is not
            with pytest.raises(InputError, match="cannot read"):
                read_all(plain, fmt)
            continue
        rows, tally = read_all(plain, fmt)
        assert accounted(rows, tally)
        assert tally.counts["rows_read"] + tally.counts["header_lines"] == len(lines)
        from_gzip, gzip_tally = read_all(zipped, fmt)
        assert [r[:3] + r[4:] for r in from_gzip] == [r[:3] + r[4:] for r in rows]
        assert gzip_tally.counts == tally.counts


FIELD = st.text(
    st.characters(blacklist_characters="\t\r\n", blacklist_categories=("Cs",)), max_size=8
)
TIME = st.sampled_from(
    ["2006-03-01 00:00:10", "2006-03-01 23:59:59", "2006-13-01 00:00:00", "", "x"]
)


@st.composite
def log_lines(draw):
    """Lines of 0 to 7 TAB-separated fields; the third, when there is one, is often a time."""
    fields = draw(st.lists(FIELD, max_size=7))
    if len(fields) >= 3 and draw(st.booleans()):
        fields[2] = draw(TIME)
    return "\t".join(fields)


@FUZZ
@given(lines=st.lists(log_lines(), max_size=12), chunk=st.integers(1, 64), final=st.booleans())
def test_fuzz_line_ends_and_column_counts(tmp_path, monkeypatch, lines, chunk, final):
    monkeypatch.setattr(logs, "_CHUNK", chunk)
    results = []
    for end in ("\n", "\r\n"):
        path = tmp_path / "log.txt"
        path.write_bytes((end.join(lines) + (end if final and lines else "")).encode())
        rows, tally = read_all(path)
        assert accounted(rows, tally)
        results.append((rows, dict(tally.counts), dict(tally.malformed_reasons)))
    assert results[0] == results[1]
    for user, query, _, _, lineno in results[0][0]:
        fields = lines[lineno - 1].split("\t")
        assert len(fields) >= 3 and (user, query) == (fields[0], fields[1])
