"""`train` under KERAS_BACKEND=jax in a process that cannot import TensorFlow (the Python of
.venv-jax, which .ci/run makes from requirements-jax.txt and benchmarks/gpu_wheels.txt):
its losses on the first 20 batches are TensorFlow's, a killed run resumes, and the model it
writes is read, ranked, exported and answers under TensorFlow."""

import json
import math
import subprocess
import sys
import time

import pytest
from hang_limit import HANG_S
from jax_env import jax_command as command

TOLERANCE = 1e-5  # relative; measured: 1.7e-7 at most over the 20 steps


def run(python, backend, *args):
    done = subprocess.run(**command(python, backend, *args), capture_output=True, timeout=HANG_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_tensorflow_cannot_be_imported_there(jax_python):
    done = subprocess.run(
        **command(jax_python, "jax", "-c", "import tensorflow"), capture_output=True
    )
    assert "No module named 'tensorflow'" in done.stderr


@pytest.mark.slow
def test_the_first_20_losses_are_tensorflows(jax_python, prepared_data, tmp_path):
    weights = str(tmp_path / "start.weights.h5")  # written by the first run, read by both
    script = ["tools/backend_losses.py", "--data", str(prepared_data), "--weights", weights]
    tf = json.loads(run(sys.executable, "tensorflow", *script))
    jax = json.loads(run(jax_python, "jax", *script))
    assert (tf["backend"], jax["backend"], len(jax["losses"])) == ("tensorflow", "jax", 20)
    for step, (a, b) in enumerate(zip(jax["losses"], tf["losses"])):
        assert abs(a - b) <= TOLERANCE * abs(b), f"step {step + 1}: jax {a}, tensorflow {b}"


def train_killed_after_epoch_1(jax_python, args, out):
    """Starts `train` under JAX and kills it once epoch 1's backup is written."""
    process = subprocess.Popen(
        **command(jax_python, "jax", "-m", "mtn_keras.train", *args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    backup = out / "backup" / "epoch-0001.weights.h5"
    deadline = time.monotonic() + 600
    while not backup.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()
    _, errors = process.communicate()
    assert backup.exists() and not (out / "model.keras").exists(), errors[-3000:]


@pytest.mark.slow
def test_a_run_under_jax_resumes_and_tensorflow_ranks_exports_and_serves_it(
    jax_python, prepared_data, tmp_path
):
    import tensorflow as tf

    from mtn_keras.data.prepared import load_split
    from mtn_keras.export import main as export
    from mtn_keras.rank import main as rank
    from mtn_keras.scorecard.evaluation import model_perplexity
    from mtn_keras.training.artifacts import load_trained

    out = tmp_path / "run"
    args = ["--data", str(prepared_data), "--preset", "tiny", "--out", str(out)]
    args += ["--epochs", "3", "--steps-per-epoch", "4", "--verbose", "0"]
    train_killed_after_epoch_1(jax_python, args, out)
    summary = json.loads(run(jax_python, "jax", "-m", "mtn_keras.train", *args, "--resume"))
    with open(out / "log.csv") as handle:
        assert [line.split(",")[0] for line in handle][1:] == ["0", "1", "2"]
    assert summary["epochs"] == 3 and summary["device"] == "cpu"
    assert not (out / "backup").exists() and not (out / "tensorboard").exists()

    trained = load_trained(str(out), ranking=False)  # the .keras JAX wrote, read by TensorFlow
    valid = load_split(str(prepared_data), "valid")
    perplexity = model_perplexity(trained.model, valid, trained.vocab)
    assert math.isclose(perplexity, summary["best_val_perplexity"], rel_tol=1e-4)
    assert rank(["--model", str(out)]) == 0
    assert export(["--model", str(out), "--out", str(out / "savedmodel")]) == 0
    loaded = tf.saved_model.load(str(out / "savedmodel"))
    answer = loaded.signatures["suggest"](session=tf.constant([["cheap flights", "hotel deals"]]))
    assert answer["suggestions"].shape[0] == answer["scores"].shape[0] == 1
