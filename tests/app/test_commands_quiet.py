"""The commands as a newcomer meets them: arguments checked before TensorFlow is imported, no
TensorFlow log lines unless --verbose, suggest on a SavedModel folder as mtn-tui takes it, the
bundled model by the name `default`, options a SavedModel cannot honour refused."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limit import HANG_S

from mtn_keras import cli, stats, suggest

ROOT = Path(__file__).resolve().parents[2]


def test_suggest_on_a_session_without_words_answers_before_loading_anything(capsys):
    assert suggest.main(["--model", "nowhere", "", "?!"]) == 1
    assert "no words" in capsys.readouterr().err


def test_suggest_takes_a_savedmodel_folder_and_its_parent(fake_model, capsys):
    for path in (fake_model, fake_model.parent):
        assert suggest.main(["--model", str(path), "--k", "2", "cheap flights"]) == 0
        assert capsys.readouterr().out.splitlines() == [
            "-1.0000\tcheap flights near me",
            "-2.0000\tcheap flights online",
        ]
    assert suggest.main(["--model", str(fake_model), "--prefix", "rome", "cheap flights"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "-1.0000\trome near me"


def test_suggest_refuses_a_non_utf8_argument_in_one_line(capsys):
    # Python keeps the bytes \xff\xfe of an argument as lone surrogates.
    assert suggest.main(["--model", "default", "weather \udcff\udcfe"]) == 2
    err = capsys.readouterr().err
    assert err == 'suggest: the argument "weather \\xff\\xfe" is not UTF-8 text\n'


def test_a_missing_model_is_reported_before_tensorflow_is_imported(tmp_path):
    # Not "within 2 seconds": a wall clock on a busy machine is no test, so Python's own
    # list of what it imported, -X importtime, says it instead.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = tmp_path / "log.txt"
    log.write_text("AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n")  # inputs are read first
    for command in (
        ["suggest", "--model", str(tmp_path / "nope"), "weather"],
        ["evaluate", "--model", str(tmp_path / "nope"), "--input", str(log)],
    ):
        run = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", f"mtn_keras.{command[0]}", *command[1:]],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        lines = run.stderr.splitlines(keepends=True)
        imported = [
            line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")
        ]
        assert "mtn_keras" in imported and not [m for m in imported if m.startswith("tensorflow")]
        assert run.returncode == 2
        missing = f"No model at {tmp_path / 'nope'}: the path does not exist."
        assert "".join(line for line in lines if not line.startswith("import time:")) == (
            f"{command[0]}: {missing}\n"
        )


def test_default_names_the_bundled_model_from_any_folder(tmp_path, monkeypatch):
    from mtn_keras.serving.savedmodel import kind, resolve

    monkeypatch.chdir(tmp_path)
    assert resolve("default") == ROOT / "saved_models" / "default" / "savedmodel"
    assert kind("default") == "savedmodel"


@pytest.mark.parametrize(
    "option",
    [["--threshold", "0"], ["--source", "beam"], ["--beam", "12"], ["--no-filter", "unrelated"]],
)
def test_suggest_refuses_what_a_savedmodel_cannot_honour(fake_model, option, capsys):
    # An export's decoding was fixed at export.
    assert suggest.main(["--model", str(fake_model), *option, "cheap flights"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"suggest: {option[0]}") and err.count("\n") == 1
    assert "fixed at export" in err


def test_suggest_refuses_more_suggestions_than_the_export_gives(fake_model, capsys):
    assert suggest.main(["--model", str(fake_model), "--k", "9", "cheap flights"]) == 2
    assert "--k 9 is more than the 3 suggestions" in capsys.readouterr().err


def test_the_export_settings_decide_what_suggest_refuses():
    from mtn_keras.base.config import FILTERS, DecodeConfig

    settings = {"k": 5, "source": "hybrid", "threshold": None, "filters": list(FILTERS)}
    assert cli.unfit_option(DecodeConfig(k=3, source="hybrid"), settings) is None
    assert "--k 6" in cli.unfit_option(DecodeConfig(k=6), settings)
    zero = cli.unfit_option(DecodeConfig(threshold=0.0), settings)
    assert "(threshold: its own default)" in zero
    # the unrelated-history setting is fixed at export too; an export that recorded it takes
    # its own value
    loose = cli.unfit_option(DecodeConfig(unrelated_history=5), settings)
    assert loose.startswith("--unrelated-history 5 cannot apply")
    settings |= {"unrelated_history": 5, "unrelated_place": "ranked"}
    same = DecodeConfig(unrelated_history=5, unrelated_place="ranked")
    assert cli.unfit_option(same, settings) is None


@pytest.mark.slow
def test_evaluate_scores_a_savedmodel_through_its_signature(fake_model, made_up_log, capsys):
    # Every suggestion metric; perplexity only for a run folder.
    from mtn_keras import evaluate

    assert evaluate.main(["--model", str(fake_model.parent), "--input", str(made_up_log)]) == 0
    out, err = capsys.readouterr()
    assert "| tiny |" in out and "| copy-last |" in out
    assert "evaluate: no adj row: the adj anchor is fitted on a prepared train split" in err
    assert "\r" not in err and "tiny: " in err  # progress as lines a log file reads
    assert "perplexity: only for a run folder of train" in out


@pytest.mark.slow
def test_evaluate_intervals_on_an_old_dataset_and_bootstrap_0(
    fake_model, made_up_log, tmp_path, capsys
):
    # A dataset without users files resamples sessions; 0 turns them off.
    import json

    from mtn_keras import evaluate
    from mtn_keras.data.dataset_writer import prepare
    from mtn_keras.data.prepared import load_split

    data = tmp_path / "data"
    prepare([str(made_up_log)], str(data), split=(80, 10, 10), progress=False)
    (data / "test.users").unlink()
    report = tmp_path / "report.json"
    args = ["--model", str(fake_model), "--data", str(data), "--json", str(report)]
    assert evaluate.main(args) == 0
    out = capsys.readouterr().out
    sessions = len(load_split(data, "test"))
    assert f"bootstrap over the {sessions} evaluated sessions" in out
    assert "records no users" in out
    scores = json.loads(report.read_text())
    assert scores["bootstrap"]["unit"] == "sessions" and len(scores["sr@5_ci"]) == 2
    assert evaluate.main([*args, "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "bootstrap" not in out and "[" not in out
    assert not [key for key in json.loads(report.read_text()) if key.endswith("_ci")]


def test_evaluate_reads_the_first_k_of_each_list_padded_on_the_left():
    import numpy as np

    from mtn_keras.scorecard.evaluation import model_suggester

    asked = []

    def suggest_strings(session):
        asked.append(session.numpy().tolist())
        return {
            "suggestions": np.array([[b"a", b"b", b""], [b"c", b"d", b"e"]]),
            "scores": np.array([[0.5, 0.25, 0.0], [0.5, 0.25, 0.125]]),
        }

    lists = model_suggester(suggest_strings, 2)([["x"], ["y", "z"]])
    assert asked == [[[b"", b"x"], [b"y", b"z"]]]
    assert lists == [[("a", 0.5), ("b", 0.25)], [("c", 0.5), ("d", 0.25)]]


def test_stats_without_stats_json_says_to_prepare_first(tmp_path, capsys):
    assert stats.main([str(tmp_path)]) == 2
    assert "has no stats.json; run `python -m mtn_keras.prepare" in capsys.readouterr().err


@pytest.mark.slow
def test_suggest_prints_no_tensorflow_log_line(fake_model):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    command = [
        sys.executable,
        "-m",
        "mtn_keras.suggest",
        "--model",
        str(fake_model),
        "cheap flights",
    ]
    quiet = subprocess.run(command, env=env, capture_output=True, text=True, timeout=HANG_S)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout.startswith("-1.0000\tcheap flights near me")


def test_the_model_names_known_without_tensorflow_are_the_models():
    from mtn_keras.base.config import MODEL_NAMES
    from mtn_keras.models import MODELS

    assert tuple(MODELS) == MODEL_NAMES
