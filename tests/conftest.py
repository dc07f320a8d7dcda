"""Shared fixtures: a made-up search log, its prepared dataset, one tiny trained MTN and its
ranking (query-log index and ranker).

Training costs seconds of tracing, so the model is trained once per test run and shared, by
pytest-xdist's workers too (built_once); tests that change it work on a copy.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    # Each xdist worker's TensorFlow, and the commands it starts, computes an op on its share
    # of the cores: more threads than cores spin waiting for one another.
    _CORES = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(_CORES))

import pytest
from built_once import built_once
from made_up_search_log import write_made_up_log
from server_wait import wait_until_loaded
from tiny_training import tiny_train_args

ROOT = Path(__file__).resolve().parents[1]


def free_port():
    """A port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def port():
    """A free port of 127.0.0.1 (free_port)."""
    return free_port()


@pytest.fixture(scope="module")
def serve():
    """A function that serves a SavedModel under `python -m mtn_keras.serve` as `name` on a
    free port of 127.0.0.1 (gRPC off unless the options open it) and, once its status says
    AVAILABLE, returns (its REST address, its process); every server still running stops at
    the end of the test module that started it, so that a worker holds one module's servers
    (each a loaded model, gigabytes), not every one the run has started."""
    servers = []

    def start(path, name, *options):
        port = free_port()
        grpc = [] if "--grpc-port" in options else ["--grpc-port", "0"]
        server = subprocess.Popen(
            [sys.executable, "-m", "mtn_keras.serve", "--model", str(path), "--name", name]
            + ["--port", str(port), *grpc, *options],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        servers.append(server)
        url = f"http://127.0.0.1:{port}/v1/models/{name}"

        def loaded():
            with urllib.request.urlopen(url, timeout=1) as answer:
                return json.load(answer)["model_version_status"][0]["state"] == "AVAILABLE"

        wait_until_loaded(server, loaded)
        return url, server

    yield start
    for server in servers:
        server.terminate()
        server.wait(30)


@pytest.fixture
def fifo(tmp_path):
    """A named pipe that no one writes: a reader that opens it waits for a writer."""
    path = tmp_path / "queries.fifo"
    os.mkfifo(path)
    return path


@pytest.fixture(autouse=True)
def graph_rewrites_back_on():
    """The app's model and `suggest` switch Grappler off for their whole process (a faster
    start); the tests after them run as any other TensorFlow program does."""
    yield
    tf = sys.modules.get("tensorflow")
    if tf is not None and hasattr(tf, "config"):
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})


def pytest_collection_modifyitems(items):
    """A test that needs a trained model is slow: training it costs tens of seconds."""
    for item in items:
        if {"trained_model_dir", "pieces_model_dir"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


ROOT = Path(__file__).resolve().parents[1]
JAX_PYTHON = ROOT / ".venv-jax" / "bin" / "python"


@pytest.fixture(scope="session")
def jax_python(tmp_path_factory):
    """The Python of .venv-jax (no TensorFlow; .ci/run makes it), with one XLA compilation
    cache for the session's JAX runs: each process compiles the same tiny model's steps,
    which costs more than running them."""
    if not JAX_PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{JAX_PYTHON} is missing: .ci/run makes it")
        pytest.skip("no .venv-jax (make it as .ci/run does)")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = str(tmp_path_factory.mktemp("xla-cache"))
    yield str(JAX_PYTHON)
    del os.environ["JAX_COMPILATION_CACHE_DIR"]


@pytest.fixture(scope="session")
def bundled_client():
    """The bundled model opened by the client (`mtn_keras.load("default")`), once for the
    test run: each opening compiles the signatures again."""
    import mtn_keras

    return mtn_keras.load("default")


@pytest.fixture(scope="session")
def bundled_app_model():
    """The app's model on the bundled model (`LocalModel()`), opened once for the test run."""
    from mtn_tui.model import LocalModel

    return LocalModel()


@pytest.fixture(scope="session")
def bundled_savedmodel():
    """The bundled SavedModel as plain TensorFlow loads it, once for the test run."""
    from mtn_keras.base.quiet import import_tensorflow
    from mtn_keras.serving.savedmodel import bundled_model

    return import_tensorflow().saved_model.load(str(bundled_model()))


@pytest.fixture(scope="session", autouse=True)
def one_xla_cache(tmp_path_factory):
    """One XLA compilation cache for the test run, its workers and the commands they start
    (TF_XLA_FLAGS, unless set): an export's search compiles once, not once per process that
    loads it."""
    folder = built_once(tmp_path_factory, "xla-cache", lambda path: path.mkdir())
    os.environ.setdefault("TF_XLA_FLAGS", f"--tf_xla_persistent_cache_directory={folder}")


@pytest.fixture(scope="session")
def made_up_log(tmp_path_factory):
    return built_once(tmp_path_factory, "log/made-up.txt", write_made_up_log)


@pytest.fixture(scope="session")
def prepared_data(made_up_log, tmp_path_factory):
    from mtn_keras.data.dataset_writer import prepare

    def build(out):
        prepare([str(made_up_log)], str(out), min_count=2, split=(80, 10, 10), progress=False)

    return built_once(tmp_path_factory, "prepared/data", build)


@pytest.fixture(scope="session")
def trained_model_dir(prepared_data, tmp_path_factory):
    """A tiny MTN with the copy head, trained for a few epochs by `train`'s own code."""
    from mtn_keras.train import main

    def build(out):
        main(tiny_train_args(prepared_data, out, 4))

    return built_once(tmp_path_factory, "models/tiny", build)


@pytest.fixture(scope="session")
def trained(trained_model_dir):
    from mtn_keras.training.artifacts import load_trained

    return load_trained(str(trained_model_dir))


def export_once(tmp_path_factory, name, model, **decoding):
    """The folder `name` holding `model` exported with DecodeConfig(**decoding), once per test
    run (built_once)."""
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.export import export

    def build(out):
        export(model, str(out), DecodeConfig(**decoding))

    return built_once(tmp_path_factory, name, build)


@pytest.fixture(scope="session")
def exported(trained, tmp_path_factory):
    """The tiny MTN exported (5 suggestions, beam 6, XLA): the serving and client tests'."""
    return export_once(tmp_path_factory, "export/savedmodel", trained, k=5, beam=6)


@pytest.fixture(scope="session")
def ranked_model_dir(trained_model_dir, prepared_data, tmp_path_factory):
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.data.history import PairHistories
    from mtn_keras.data.prepared import load_split
    from mtn_keras.rank import rank
    from mtn_keras.ranking.fitting_data import RankingData
    from mtn_keras.training.artifacts import load_trained

    def build(out):
        shutil.copytree(trained_model_dir, out, ignore=shutil.ignore_patterns("tensorboard"))
        trained = load_trained(str(out), ranking=False)
        decoding = DecodeConfig(k=5, beam=6, threshold=0.0, xla=False)
        data = RankingData(
            load_split(prepared_data, "train"),
            load_split(prepared_data, "valid"),
            PairHistories.load(str(prepared_data), "valid"),
        )
        ranking = rank(trained, data, decoding, hidden=4, progress=lambda _: None)
        ranking.save(str(out))

    return built_once(tmp_path_factory, "ranked/tiny", build)


@pytest.fixture(scope="session")
def ranked(ranked_model_dir):
    from mtn_keras.training.artifacts import load_trained

    return load_trained(str(ranked_model_dir))


@pytest.fixture(scope="session")
def ranked_exported(ranked, tmp_path_factory):
    """The tiny ranked model's SavedModel (every signature, the ranker and the log index; no
    threshold), exported once for the loaders' and the ranking's tests."""
    return export_once(tmp_path_factory, "export/ranked", ranked, k=5, beam=6, threshold=0.0)


@pytest.fixture(scope="session")
def unrestored():
    """`unrestored_variables`, for the tests of exports."""
    return unrestored_variables


def unrestored_variables(path):
    """Why the SavedModel at `path` fails TensorFlow Serving's loader (its functions capture
    variables that its restore op does not fill: more variable handles in the graph than
    values in the checkpoint), or None when every one is restored."""
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel()
    model.ParseFromString((path / "saved_model.pb").read_bytes())
    handles = sum(n.op == "VarHandleOp" for n in model.meta_graphs[0].graph_def.node)
    saved = tf.train.list_variables(str(path / "variables" / "variables"))
    values = sum(name.endswith("VARIABLE_VALUE") for name, _ in saved)
    if handles == values:
        return None
    return (
        f"the export at {path} restores {values} of the {handles} variables in its graph; "
        "re-export it with python -m mtn_keras.export"
    )
