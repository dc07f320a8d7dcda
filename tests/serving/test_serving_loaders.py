"""Every signature answers alike however the SavedModel is loaded: `tf.saved_model.load`
(Python rebinds the functions' captures through the object graph), the TF1 loader and
`saved_model_cli run` (the graph's restore op, then `session.run` on the signature's tensor
names, as TensorFlow Serving and the C++ API do)."""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hang_limit import HANG_S

from mtn_keras.serving.savedmodel import bundled_model

pytestmark = pytest.mark.slow

# Made-up sessions, right-aligned; a typed prefix and a history for each.
SESSION = np.array([["cheap flights", "hotel deals"], ["", "used cars"], ["", ""]], object)
PREFIX = np.array(["ch", "", "wea"], object)
HISTORY = np.array([["weather forecast", "used cars online", ""]] * 3, object)
INPUTS = {"session": SESSION, "prefix": PREFIX, "history": HISTORY}
SAVED_MODEL_CLI = Path(sys.executable).with_name("saved_model_cli")


def python_answers(path):
    """{signature: outputs} through `tf.saved_model.load`, and {signature: input names}."""
    import tensorflow as tf

    loaded = tf.saved_model.load(str(path))
    answers, names = {}, {}
    for name, function in loaded.signatures.items():
        names[name] = sorted(function.structured_input_signature[1])
        out = function(**{k: tf.constant(INPUTS[k].astype(str)) for k in names[name]})
        answers[name] = {key: value.numpy() for key, value in out.items()}
    return answers, names


def tf1_answers(path):
    """{signature: outputs} through the TF1 loader: a fresh graph, the restore op, then
    `session.run` on the signature's tensor names."""
    import tensorflow as tf

    answers = {}
    with tf.Graph().as_default() as graph, tf.compat.v1.Session(graph=graph) as session:
        meta = tf.compat.v1.saved_model.loader.load(session, ["serve"], str(path))
        for name, signature in meta.signature_def.items():
            if name == "__saved_model_init_op":  # the tables' initialiser, no signature
                continue
            feeds = {info.name: INPUTS[key] for key, info in signature.inputs.items()}
            fetches = {key: info.name for key, info in signature.outputs.items()}
            answers[name] = session.run(fetches, feeds)
    return answers


def cli_answer(path, name, inputs, folder):
    """One signature's outputs through `saved_model_cli run`, in its own process; inputs and
    outputs travel as .npy files."""
    out = folder / name
    out.mkdir(parents=True)
    files = []
    for key in inputs:
        np.save(out / f"in_{key}.npy", INPUTS[key], allow_pickle=True)
        files.append(f"{key}={out / f'in_{key}.npy'}")
    done = subprocess.run(
        [str(SAVED_MODEL_CLI), "run", "--dir", str(path), "--tag_set", "serve"]
        + ["--signature_def", name, "--outdir", str(out), "--overwrite"]
        + ["--inputs", ";".join(files)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, f"saved_model_cli run {name}: {done.stderr[-2000:]}"
    written = [f for f in out.glob("*.npy") if not f.stem.startswith("in_")]
    return {f.stem: np.load(f, allow_pickle=True) for f in written}


def cli_answers(path, names, folder):
    """{signature: outputs} through `saved_model_cli run`, one process per signature
    (`names`: {signature: input names}), two at a time: each loads its graph on about one
    core of the machine's two."""
    with ThreadPoolExecutor(2) as pool:
        runs = {
            name: pool.submit(cli_answer, path, name, inputs, folder)
            for name, inputs in names.items()
        }
        return {name: run.result() for name, run in runs.items()}


def assert_same(expected, got, where):
    """Every output of every signature alike: strings equal, numbers within 1e-5."""
    assert set(got) == set(expected), where
    for name, outputs in expected.items():
        assert set(got[name]) == set(outputs), f"{where}: {name}"
        for key, value in outputs.items():
            other, what = np.asarray(got[name][key]), f"{where}: {name} {key}"
            if value.dtype.kind == "f":
                np.testing.assert_allclose(other, value, atol=1e-5, err_msg=what)
            else:
                assert other.astype(bytes).tolist() == value.astype(bytes).tolist(), what


def check_every_loader(path, folder):
    """The answers of `tf.saved_model.load`, after checking the other two loaders give them."""
    expected, names = python_answers(path)
    assert_same(expected, tf1_answers(path), "TF1 loader")
    assert_same(expected, cli_answers(path, names, folder), "saved_model_cli run")
    return expected


def test_every_signature_answers_alike_through_every_loader(ranked_exported, tmp_path):
    answers = check_every_loader(ranked_exported, tmp_path)
    assert set(answers) >= {"suggest", "complete", "suggest_with_history", "session_attention"}
    assert any(text for text in answers["suggest"]["suggestions"][0])


def test_each_variable_is_exported_once_and_restored(exported, unrestored):
    """One variable in the graph for each one in the checkpoint: the functions capture what
    the restore op fills (before the fix, Keras 3 variables were exported twice)."""
    assert unrestored(exported) is None


def test_the_bundled_model_answers_alike_through_every_loader(tmp_path, unrestored):
    path = bundled_model()
    assert unrestored(path) is None
    check_every_loader(path, tmp_path)
