"""The train command on bad input, and runs that fail at awkward moments: one clear line and
exit 2 before anything is written; no run lost to a damaged checkpoint."""

import json

import pytest
from tiny_training import tiny_fit_args

from mtn_keras.train import main


def expect_refused(code, err, *words):
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("train: ") and all(word in err for word in words), err


@pytest.mark.parametrize("split", ["train", "valid"])
def test_an_empty_split_is_one_line(data, tmp_path, train, split):
    (data / f"{split}.tsv").write_text("")
    expect_refused(*train(data, tmp_path / "out"), f"{split}.tsv holds no session")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "name, content, words",
    [
        (
            "train.tsv",
            b"cheap flights\tbest cheap flights\n\xff\xfe bad\tline\n",
            ["train.tsv:2: not UTF-8"],
        ),
        ("vocab.txt", b"<pad>\n<unk>\n\xff\n", ["vocab.txt: not UTF-8"]),
        ("vocab.txt", b"cheap\nflights\n", ["vocab.txt: a vocabulary starts with"]),
        ("stats.json", b'{"rows_read": 3', ["stats.json: not a stats.json"]),
    ],
)
def test_a_corrupt_data_file_is_named(data, tmp_path, train, name, content, words):
    (data / name).write_bytes(content)
    expect_refused(*train(data, tmp_path / "out"), *words)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "setting, words",
    [
        ("batch_size=0", ["batch_size must be at least 1"]),
        ("d_model=-1", ["d_model must be at least 1"]),
        ("dropout=1.5", ["dropout must be in [0, 1)"]),
        ("learning_rate_scale=nan", ["learning_rate_scale"]),
        ("vocab_size=10", ["vocab_size is the data's"]),
    ],
)
def test_an_impossible_setting_is_refused_before_out_is_made(data, tmp_path, train, setting, words):
    expect_refused(*train(data, tmp_path / "out", "--set", setting), *words)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "option", [["--epochs", "0"], ["--batch-size", "0"], ["--steps-per-epoch", "-1"]]
)
def test_zero_epochs_or_batches_are_usage_errors(data, tmp_path, option):
    with pytest.raises(SystemExit) as stopped:
        main(["--data", str(data), "--out", str(tmp_path / "out"), *option])
    assert stopped.value.code == 2 and not (tmp_path / "out").exists()


def test_out_under_a_file_is_named(data, tmp_path, train):
    (tmp_path / "file.txt").write_text("x")
    expect_refused(*train(data, tmp_path / "file.txt" / "sub"), "is a file, not a directory")


def test_resume_with_another_configuration_says_so(data, tmp_path, capsys):
    from mtn_keras.base.config import preset
    from mtn_keras.train import check_resume
    from mtn_keras.training.artifacts import run_config

    out = tmp_path / "run"
    (out / "backup").mkdir(parents=True)  # an interrupted run of the tiny preset
    model_config, train_config = preset("tiny")
    model_config.vocab_size = len((data / "vocab.txt").read_text().splitlines())
    model_config.max_query_tokens, model_config.max_queries = 10, 5
    (out / "config.json").write_text(json.dumps(run_config("mtn", model_config, train_config)))
    check_resume(str(out), "mtn", model_config, train_config)  # the same settings: accepted
    train_config.epochs += 3
    check_resume(str(out), "mtn", model_config, train_config)  # more epochs: accepted
    code = main(["--data", str(data), "--preset", "small", "--out", str(out), "--resume"])
    expect_refused(code, capsys.readouterr().err, "other settings", "d_model 16 -> 128")
    code = main(
        [
            "--data",
            str(data),
            "--preset",
            "tiny",
            "--out",
            str(out),
            "--resume",
            "--set",
            "select=bleu",
        ]
    )
    expect_refused(code, capsys.readouterr().err, "other settings", "select 'loss' -> 'bleu'")


@pytest.mark.slow
def test_a_damaged_checkpoint_or_a_failure_after_fit_loses_no_run(
    prepared_data, tmp_path, monkeypatch, capsys
):
    import keras

    from mtn_keras.training import fitting

    args, keywords = tiny_fit_args(prepared_data, tmp_path, epochs=2)

    def failing(*_):
        raise RuntimeError("killed after fit")

    with monkeypatch.context() as patch:
        patch.setattr(fitting, "best_weights", failing)
        with pytest.raises(RuntimeError):
            fitting.fit_model(*args, **keywords)
    assert (tmp_path / "backup").is_dir() and not (tmp_path / "model.keras").exists()
    best = tmp_path / "best.keras"
    best.write_bytes(best.read_bytes()[:1000])  # truncated
    summary = fitting.fit_model(*args, **keywords)
    assert "best.keras: cannot load the model (not a .keras archive" in capsys.readouterr().err
    assert (
        summary["weights_from"] == "last epoch (best.keras unreadable)" and summary["epochs"] == 2
    )
    keras.saving.load_model(tmp_path / "model.keras", compile=False)
    assert not (tmp_path / "backup").exists() and not best.exists()
