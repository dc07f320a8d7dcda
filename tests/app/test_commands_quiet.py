"""The commands as a newcomer meets them: arguments checked before TensorFlow is imported, no
TensorFlow log lines unless --verbose, suggest on a SavedModel folder as mtn-tui takes it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtn_keras import suggest
from mtn_keras.data import __main__ as data_cli

ROOT = Path(__file__).resolve().parents[2]


def test_suggest_on_a_session_without_words_answers_before_loading_anything(capsys):
    assert suggest.main(["--model", "nowhere", "", "?!"]) == 1
    assert "no words" in capsys.readouterr().err


def test_suggest_takes_a_savedmodel_folder_and_its_parent(fake_model, capsys):
    for path in (fake_model, fake_model.parent):
        assert suggest.main(["--model", str(path), "--k", "2", "cheap flights"]) == 0
        assert capsys.readouterr().out.splitlines() == [
            "-1.0000\tcheap flights near me", "-2.0000\tcheap flights online",
        ]
    assert suggest.main(["--model", str(fake_model), "--prefix", "rome", "cheap flights"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "-1.0000\trome near me"


def test_data_stats_without_stats_json_says_to_prepare_first(tmp_path, capsys):
    assert data_cli.main(["stats", str(tmp_path)]) == 2
    assert "has no stats.json; run `python -m mtn_keras.data prepare" in capsys.readouterr().err


@pytest.mark.slow
def test_suggest_prints_no_tensorflow_log_line(fake_model):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    command = [sys.executable, "-m", "mtn_keras.suggest", "--model", str(fake_model), "cheap flights"]
    quiet = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout.startswith("-1.0000\tcheap flights near me")


def test_the_model_names_known_without_tensorflow_are_the_models():
    from mtn_keras.config import MODEL_NAMES
    from mtn_keras.models import MODELS

    assert tuple(MODELS) == MODEL_NAMES


def test_native_lines_go_to_the_log_file_and_python_errors_still_show(tmp_path, capfd):
    """The app's whole life runs inside this: a native abort must leave its words."""
    import os
    import sys

    from mtn_keras.quiet import native_stderr_silenced

    log = tmp_path / "native.log"
    with native_stderr_silenced(log):
        os.write(2, b"F0000 a native check failed\n")
        print("a Python traceback line", file=sys.stderr)
    assert "a native check failed" in log.read_text()
    assert "a Python traceback line" in capfd.readouterr().err
    assert oct(log.stat().st_mode & 0o777) == "0o600"
