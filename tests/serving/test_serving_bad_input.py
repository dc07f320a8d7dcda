"""suggest, evaluate and export on bad input: one line naming what and where, exit code 2,
checked before the long part of the work; a killed export leaves nothing half-written."""

import os
import shutil
import subprocess
import sys

import pytest

from mtn_keras import evaluate, export, suggest


def refused(capsys, words, code):
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert all(word in err for word in words), err


@pytest.fixture
def model_copy(trained_model_dir, tmp_path):
    return shutil.copytree(
        trained_model_dir, tmp_path / "model", ignore=shutil.ignore_patterns("tensorboard")
    )


def test_a_truncated_model_is_not_called_missing(model_copy, capsys):
    data = (model_copy / "model.keras").read_bytes()
    (model_copy / "model.keras").write_bytes(data[: len(data) // 2])
    code = suggest.main(["--model", str(model_copy), "a query"])
    refused(capsys, ["model.keras: cannot load the model", "truncated or corrupt"], code)


def test_a_non_utf8_vocabulary_is_named(model_copy, capsys):
    (model_copy / "vocab.txt").write_bytes(b"<pad>\n<unk>\n\xff\xfe\n")
    refused(capsys, ["vocab.txt: not UTF-8"], suggest.main(["--model", str(model_copy), "a query"]))


@pytest.mark.parametrize(
    "command, option",
    [
        (suggest, ["--alpha", "nan", "a query"]),
        (suggest, ["--alpha", "-1", "a query"]),
        (evaluate, ["--batch-size", "0", "--data", "d"]),
    ],
)
def test_impossible_numbers_are_usage_errors(trained_model_dir, capsys, command, option):
    with pytest.raises(SystemExit) as stopped:
        command.main(["--model", str(trained_model_dir), *option])
    assert stopped.value.code == 2 and option[0] in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--json", "--chart", "--markdown"])
def test_evaluate_checks_its_outputs_first(
    trained_model_dir, prepared_data, tmp_path, monkeypatch, capsys, flag
):
    def never(*_, **__):
        raise AssertionError("evaluated before the outputs were checked")

    monkeypatch.setattr(evaluate, "load_trained", never)
    code = evaluate.main(
        [
            "--model",
            str(trained_model_dir),
            "--data",
            str(prepared_data),
            flag,
            str(tmp_path / "missing" / "out.file"),
        ]
    )
    refused(capsys, [flag, "is not a directory"], code)
    code = evaluate.main(
        ["--model", str(trained_model_dir), "--data", str(prepared_data), flag, str(tmp_path)]
    )
    refused(capsys, [flag, "is a directory"], code)


@pytest.mark.parametrize("out", ["file.txt", "file.txt/sub"])
def test_export_out_that_is_or_lies_under_a_file(trained_model_dir, tmp_path, capsys, out):
    (tmp_path / "file.txt").write_text("x")
    code = export.main(["--model", str(trained_model_dir), "--out", str(tmp_path / out)])
    refused(capsys, [str(tmp_path / out)], code)


def test_export_and_rank_say_why_the_bundled_model_is_not_taken(tmp_path, capsys, monkeypatch):
    # It once said "no such model directory" though `default` works wherever --model is taken.
    from mtn_keras import rank

    monkeypatch.chdir(tmp_path)
    code = export.main(["--model", "default", "--out", str(tmp_path / "out")])
    refused(capsys, ["default is the bundled model, already exported", "./default"], code)
    assert not (tmp_path / "out").exists()
    refused(capsys, ["default is the bundled model"], rank.main(["--model", "default"]))


def test_a_killed_export_leaves_no_half_savedmodel(trained, tmp_path, monkeypatch):
    import tensorflow as tf

    def killed(obj, path, signatures=None):
        os.makedirs(os.path.join(path, "variables"))
        raise KeyboardInterrupt

    out = tmp_path / "savedmodel"
    with monkeypatch.context() as patch:
        patch.setattr(tf.saved_model, "save", killed)
        with pytest.raises(KeyboardInterrupt):
            export.export(trained, str(out))
    assert os.listdir(tmp_path) == []
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / f".export-{dead.pid}-abcd" / "variables").mkdir(parents=True)  # a kill -9's
    (tmp_path / "notes.txt").write_text("x")
    from mtn_keras.base.outputs import staged_directory

    with staged_directory(str(out), "export") as temp:
        open(os.path.join(temp, "saved_model.pb"), "w").close()
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "savedmodel"]
