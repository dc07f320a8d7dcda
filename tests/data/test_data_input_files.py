"""The readers' files: an input that is no regular file (a FIFO, a device) is refused before a
byte is read, the same file given twice is refused, a history file has a bound on its lines
and on its size, and `prepare --out` refuses a link rather than put a folder in its place."""

import os
import subprocess
import sys
import threading

import pytest
from hang_limit import HANG_S

from mtn_keras.base.outputs import OutputError
from mtn_keras.data import history
from mtn_keras.data.dataset_writer import PrepareError, prepare
from mtn_keras.data.history import read_history
from mtn_keras.data.logs import InputError, check_inputs


def refused_at_once(call, fifo):
    """The InputError of `call()`, run in a thread. A call that waits on the FIFO (opened to
    read, it waits for a writer) fails the test, once a writer has let it go."""
    raised = []

    def run():
        try:
            call()
        except InputError as error:
            raised.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)  # a refusal takes milliseconds; this is only the limit of a hang
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"waited on the FIFO {fifo}")
    assert raised, "read the FIFO without a refusal"
    return str(raised[0])


def test_a_fifo_given_as_a_history_is_refused_before_it_is_opened(fifo):
    message = refused_at_once(lambda: read_history(str(fifo)), fifo)
    assert message == (
        f"{fifo}: is a FIFO (named pipe), not a regular file: give a file (reading it could "
        "wait for a writer or never end)"
    )


def test_an_endless_device_given_as_a_history_is_refused():
    # In a process of its own with its memory capped: a reader without bounds would grow
    # until the cap stops it, not take the machine's memory.
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
        "from mtn_keras.data.history import read_history; read_history('/dev/zero')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_S
    )
    assert done.returncode == 1 and done.stderr.endswith(
        "InputError: /dev/zero: is a device, not a regular file: give a file (reading it "
        "could wait for a writer or never end)\n"
    )


def test_a_history_line_or_file_past_its_bound_is_refused(tmp_path, monkeypatch):
    nuls = tmp_path / "nuls.txt"
    with open(nuls, "wb") as file:
        file.truncate(200 << 20)  # 200 MB of NUL bytes, no line end (sparse: nothing written)
    with pytest.raises(InputError) as refused:
        read_history(str(nuls))
    assert str(refused.value) == f"{nuls}:1: a line longer than 65,536 bytes"
    lines = tmp_path / "many.txt"
    lines.write_text("lisbon trams\n" * 100)
    monkeypatch.setattr(history, "HISTORY_FILE_BYTES", 1000)
    with pytest.raises(InputError, match="more than 1,000 bytes: too large to read"):
        read_history(str(lines))


def test_the_same_file_twice_is_refused_under_any_name(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("1\tlisbon\t2006-03-01 07:17:12\n")
    (tmp_path / "link.txt").symlink_to(log)
    with pytest.raises(InputError, match="the same file given twice to --input: give it once"):
        check_inputs([str(log), str(log)])
    with pytest.raises(InputError, match=f"twice, as {log} and {tmp_path / 'link.txt'}"):
        check_inputs([str(log), str(tmp_path / "link.txt")])


def test_an_output_is_never_an_input_a_fifo_or_inside_a_folder_read(tmp_path, fifo):
    from mtn_keras.base.files import check_output

    log = tmp_path / "log.txt"
    log.write_text("x")
    (tmp_path / "model").mkdir()
    with pytest.raises(OutputError, match=f"--json {log} is the input {log}: write it elsewhere"):
        check_output(str(log), "--json", [str(log)])
    with pytest.raises(OutputError, match="is not a regular file: give a file to write"):
        check_output(str(fifo), "--json")
    inside = tmp_path / "model" / "saved_model.pb"
    with pytest.raises(OutputError, match="lies inside .*model, which is read: write elsewhere"):
        check_output(str(inside), "--chart", folders=[str(tmp_path / "model")])
    check_output(str(tmp_path / "report.json"), "--json", [str(log)], [str(tmp_path / "model")])


def made_up_log(path):
    """An AOL-format log that prepares: 30 users, each with two sessions of 3 queries."""
    rows = [
        f"{user}\t{query} {user % 7}\t2006-03-01 {hour:02d}:{minute:02d}:00\n"
        for user in range(30)
        for hour in (1, 5)
        for minute, query in enumerate(["red bikes", "red bikes cheap", "blue kites"])
    ]
    path.write_text("".join(rows))
    return path


def test_prepare_refuses_the_same_log_twice(tmp_path):
    log = made_up_log(tmp_path / "log.txt")
    with pytest.raises(InputError, match="given twice"):
        prepare([str(log), str(log)], str(tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_prepare_refuses_an_out_that_is_a_link_and_leaves_it(tmp_path):
    log = made_up_log(tmp_path / "log.txt")
    target = tmp_path / "data"
    target.mkdir()
    (target / "stats.json").write_text("{}\n")  # a prepared dataset, which --force replaces
    link = tmp_path / "current"
    link.symlink_to(target)
    for out in (str(link), f"{link}/"):
        with pytest.raises(PrepareError) as refused:
            prepare([str(log)], out, force=True, progress=False)
        assert str(refused.value) == f"--out {out} is a link (to {target}): give the folder itself"
    assert link.is_symlink() and os.listdir(target) == ["stats.json"]
