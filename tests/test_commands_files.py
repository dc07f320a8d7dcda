"""The commands' files, checked before any work (and before TensorFlow's import): `evaluate`
writes no report over a file it reads nor into the model's folder, and no command waits on a
FIFO given as an input or a report."""

import subprocess
import sys

import pytest

from mtn_keras import evaluate

LOG = "1\tlisbon hotels\t2006-03-01 07:17:12\n1\tlisbon trams\t2006-03-01 07:18:12\n"


@pytest.fixture
def model(tmp_path):
    """A folder that passes for a SavedModel until it is loaded (no TensorFlow needed)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(b"the model")
    return folder


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text(LOG)
    return path


def refused(capsys, argv):
    """evaluate's exit code and its one line on stderr."""
    code = evaluate.main(argv)
    return code, capsys.readouterr().err


def test_evaluate_writes_no_report_over_its_log(capsys, model, log):
    code, err = refused(capsys, ["--model", str(model), "--input", str(log), "--json", str(log)])
    assert code == 2 and err == f"evaluate: --json {log} is the input {log}: write it elsewhere\n"
    assert log.read_text() == LOG


def test_evaluate_writes_no_chart_into_the_model_it_reads(capsys, model, log):
    chart = model / "saved_model.pb"
    code, err = refused(capsys, ["--model", str(model), "--input", str(log), "--chart", str(chart)])
    assert code == 2 and err == (
        f"evaluate: --chart {chart} lies inside {model}, which is read: write elsewhere\n"
    )
    assert chart.read_bytes() == b"the model"


def test_evaluate_gives_each_report_its_own_file(capsys, model, log, tmp_path):
    out = tmp_path / "report.txt"
    argv = ["--model", str(model), "--input", str(log), "--json", str(out), "--markdown", str(out)]
    code, err = refused(capsys, argv)
    assert code == 2 and err == (
        f"evaluate: --markdown {out} is also --json: give each report its file\n"
    )


def command(*argv):
    """A command run in its own process, with a limit that only a hang reaches: a refusal
    comes before any work, TensorFlow's import included."""
    return subprocess.run(
        [sys.executable, *map(str, argv)], capture_output=True, text=True, timeout=120
    )


FIFO_LINE = "is a FIFO (named pipe), not a regular file: give a file"


def test_no_command_waits_on_a_fifo(model, log, fifo, tmp_path):
    evaluate = ["-m", "mtn_keras.evaluate", "--model", model]
    done = command(*evaluate, "--input", fifo)
    assert done.returncode == 2 and done.stderr.startswith(f"evaluate: {fifo}: {FIFO_LINE}")
    done = command(*evaluate, "--input", log, "--json", fifo)
    assert done.returncode == 2
    assert done.stderr == f"evaluate: --json {fifo} is not a regular file: give a file to write\n"
    done = command("-m", "mtn_keras.prepare", "--input", log, fifo, "--out", tmp_path / "out")
    assert done.returncode == 2 and done.stderr.startswith(f"error: {fifo}: {FIFO_LINE}")
    app = "import sys; from mtn_tui.main import main; main(sys.argv[1:])"
    done = command("-c", app, "--history", tmp_path / "h.db", "--import-history", fifo)
    assert done.returncode == 2 and done.stderr.startswith(f"mtn-tui: {fifo}: {FIFO_LINE}")
    assert not (tmp_path / "out").exists() and not (tmp_path / "h.db").exists()
