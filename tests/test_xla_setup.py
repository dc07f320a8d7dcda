"""XLA set up for answering: the compilation cache under the user's cache folder, level 1,
and what the user set left alone; graphs run as exported, with the same answers."""

import os

import pytest

from mtn_keras.base.xla_setup import LEVEL, set_up_xla, skip_graph_rewrites

VARIABLES = ("XLA_FLAGS", "TF_XLA_FLAGS", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True)
def environment():
    """The variables set_up_xla sets, as they were after each test (present or not)."""
    saved = {name: os.environ.get(name) for name in VARIABLES}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def test_the_cache_and_the_level_are_set_beside_other_flags(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/dump")
    set_up_xla()
    cache = tmp_path / "mtn-keras" / "xla"
    assert cache.is_dir()
    assert os.environ["TF_XLA_FLAGS"] == f"--tf_xla_persistent_cache_directory={cache}"
    assert os.environ["XLA_FLAGS"] == f"--xla_dump_to=/tmp/dump {LEVEL}"


def test_flags_the_user_set_are_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=0")
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=3")
    set_up_xla()
    assert os.environ["TF_XLA_FLAGS"] == "--tf_xla_auto_jit=0"
    assert os.environ["XLA_FLAGS"] == "--xla_backend_optimization_level=3"


def test_without_a_writable_cache_folder_nothing_is_cached(monkeypatch, tmp_path):
    (tmp_path / "mtn-keras").write_text("a file where the folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    set_up_xla()
    assert "TF_XLA_FLAGS" not in os.environ and os.environ["XLA_FLAGS"] == LEVEL


@pytest.fixture
def tf():
    """TensorFlow, its graph optimizer options put back after the test (they are the process's)."""
    from mtn_keras.base.quiet import import_tensorflow

    tf = import_tensorflow()
    options = tf.config.optimizer.get_experimental_options()
    yield tf
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False, **options})


def test_graphs_run_as_exported_give_the_same_answers(tf):
    def scores(x):
        return tf.nn.relu(tf.matmul(x, tf.transpose(x)) + 1.0) * 2.0 + 0.0

    x = tf.reshape(tf.range(12, dtype=tf.float32), [3, 4])
    rewritten = tf.function(scores)(x)
    skip_graph_rewrites(tf)
    assert tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]
    as_exported = tf.function(scores)(x)
    assert tf.reduce_all(rewritten == as_exported)


def test_the_optimizer_options_are_put_back_after_a_test_that_changes_them(tf):
    """Run after the test above (file order): Grappler is on again."""
    assert not tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer")


def test_a_compilation_is_said_only_until_a_start_has_cached_it(monkeypatch, tmp_path):
    from mtn_keras.base.xla_setup import compiled_before, mark_compiled

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    set_up_xla()
    model, other = tmp_path / "model", tmp_path / "other"
    for folder, fingerprint in ((model, b"one"), (other, b"two")):
        folder.mkdir()
        (folder / "fingerprint.pb").write_bytes(fingerprint)
    assert not compiled_before(model, "complete")
    mark_compiled(model, "complete")
    assert compiled_before(model, "complete")
    assert not compiled_before(model, "session_attention") and not compiled_before(
        other, "complete"
    )
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=0")  # no cache kept: every start compiles
    assert not compiled_before(model, "complete")
