"""Choosing the training strategy from --strategy and TF_CONFIG, and the commands that need
TensorFlow refusing another Keras backend."""

import json

import keras
import pytest

from mtn_keras.base.distribute import Cluster, StrategyError, read_cluster, resolve, warmup_for


def tf_config(task_type, index, chief=False, workers=2):
    cluster = {"worker": [f"127.0.0.1:{2000 + i}" for i in range(workers)]}
    if chief:
        cluster["chief"] = ["127.0.0.1:1999"]
    return {
        "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})
    }


def test_the_chief_is_the_chief_task_or_else_worker_0():
    assert read_cluster({}) == Cluster(workers=1, chief=True)
    assert read_cluster(tf_config("worker", 0)).chief
    assert not read_cluster(tf_config("worker", 1)).chief
    assert read_cluster(tf_config("chief", 0, chief=True)) == Cluster(workers=3, chief=True)
    assert not read_cluster(tf_config("worker", 0, chief=True)).chief
    with pytest.raises(StrategyError, match="TF_CONFIG"):
        read_cluster({"TF_CONFIG": '{"cluster": {}}'})


def test_auto_is_multi_worker_on_a_cluster_else_mirrored_on_gpus_else_one():
    single, pair = Cluster(), read_cluster(tf_config("worker", 1))
    assert resolve("auto", pair, gpus=4) == "multi-worker"
    assert resolve("auto", single, gpus=2) == "mirrored"
    assert resolve("auto", single, gpus=1) == "one"
    assert resolve("one", pair, gpus=2) == "one"
    with pytest.raises(StrategyError, match="needs a TF_CONFIG that names a cluster"):
        resolve("multi-worker", single, gpus=0)


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"cluster": {"worker": "abc"}, "task": {"type": "worker", "index": 0}}', "host:port"),
        ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}', "not in the"),
        ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", "index": 0}}', "not in the"),
    ],
)
def test_a_malformed_cluster_is_refused(text, words):
    with pytest.raises(StrategyError, match=words):
        read_cluster({"TF_CONFIG": text})
    assert read_cluster({"TF_CONFIG": "  "}) == Cluster()
    pair = read_cluster(tf_config("worker", 1))
    assert pair.task == "worker 1" and pair.peers == ("127.0.0.1:2000",)


def test_other_backends_train_on_one_device_only(monkeypatch):
    monkeypatch.setattr(keras.config, "backend", lambda: "jax")
    assert resolve("auto", Cluster(), gpus=0) == "one"
    with pytest.raises(StrategyError, match="mirrored needs the TensorFlow backend"):
        resolve("mirrored", Cluster(), gpus=2)


def test_warm_up_covers_the_same_sessions_at_any_replica_count():
    assert [warmup_for(1000, r) for r in (1, 2, 8)] == [1000, 500, 125]
    assert warmup_for(3, 8) == 1


@pytest.mark.parametrize("command", ["suggest", "evaluate", "export", "compare", "rank"])
def test_commands_that_need_tensorflow_say_so_under_another_backend(
    command, monkeypatch, capsys, tmp_path
):
    import importlib

    module = importlib.import_module(f"mtn_keras.{command}")
    args = {
        "suggest": ["--model", str(tmp_path), "cheap flights"],
        "evaluate": ["--model", str(tmp_path), "--data", str(tmp_path)],
        "export": ["--model", str(tmp_path), "--out", str(tmp_path / "saved")],
        "compare": ["--data", str(tmp_path), "--out", str(tmp_path / "compare")],
        "rank": ["--model", str(tmp_path)],
    }[command]
    (tmp_path / "model.keras").touch()  # suggest and evaluate check the path before the backend
    (tmp_path / "model.keras").touch()  # suggest and evaluate check the path before the backend
    monkeypatch.setattr(keras.config, "backend", lambda: "jax")
    assert module.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{command}: needs the TensorFlow backend") and err.count("\n") == 1
