"""Fixtures of the app tests: a tiny fake SavedModel with the signatures of docs/contracts.md.

The fake follows the contract's shapes with simple deterministic TF logic, so the app can be
tested without a trained model.
"""

import pytest

WORDS = ["near me", "online", "reviews"]  # suggestion i is "<context> <WORDS[i]>"
N_TOKENS = 4  # n, the source words kept per query
LAYERS, HEADS = 2, 2
WINDOW = 4  # query slots the fake keeps, as the real export keeps max_queries
SOURCES = ["model", "log", "model+log"]


def build_fake_model(sources=False):
    """A tf.Module whose signatures follow the contract; suggestions extend the last query.

    Like the real export it normalises queries, drops those without words and keeps the
    last WINDOW slots of [padding, queries with words]; with `sources`, `suggest` and
    `complete` also
    say where each suggestion came from.
    """
    import tensorflow as tf

    session_spec = tf.TensorSpec([None, None], tf.string, name="session")
    prefix_spec = tf.TensorSpec([None], tf.string, name="prefix")

    def normalise(text):
        text = tf.strings.regex_replace(tf.strings.lower(text), r"[\pP\pS\pC\pZ]", " ")
        return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))

    class FakeMtn(tf.Module):
        def _kept(self, session):
            queries = normalise(tf.concat([tf.fill([tf.shape(session)[0], 1], ""), session], 1))
            order = tf.argsort(tf.cast(queries != "", tf.int32), axis=1, stable=True)
            return tf.gather(queries, order, batch_dims=1)[:, -WINDOW:]

        def _outputs(self, session, context):
            batch = tf.shape(session)[0]
            words = tf.constant(WORDS)
            suggestions = context[:, None] + " " + words[None, :]
            scores = tf.tile(-tf.range(1.0, len(WORDS) + 1.0)[None, :], [batch, 1])
            source = tf.strings.split(self._kept(session)).to_tensor(
                "", shape=[None, None, N_TOKENS]
            )
            present = tf.cast(source != "", tf.float32)
            total = tf.reduce_sum(present, axis=[1, 2], keepdims=True)
            copy = tf.math.divide_no_nan(present, total)
            copy = tf.tile(copy[:, None], [1, len(WORDS), 1, 1])
            outputs = {
                "suggestions": suggestions,
                "scores": scores,
                "copy_attention": copy,
                "source_tokens": source,
            }
            if sources:
                outputs["sources"] = tf.tile(tf.constant([SOURCES]), [batch, 1])
            return outputs

        def _last_query(self, session):
            return self._kept(session)[:, -1]

        @tf.function(input_signature=[session_spec])
        def suggest(self, session):
            return self._outputs(session, self._last_query(session))

        @tf.function(input_signature=[session_spec, prefix_spec])
        def complete(self, session, prefix):
            last = self._last_query(session)
            prefix = normalise(prefix)
            length = tf.strings.length(prefix)
            extends = tf.strings.substr(last, tf.zeros_like(length), length) == prefix
            return self._outputs(session, tf.where(extends, last, prefix))

        @tf.function(input_signature=[session_spec])
        def session_attention(self, session):
            queries = self._kept(session)
            real = tf.cast(queries != "", tf.float32)  # [B, S']
            size = tf.shape(queries)[1]
            causal = tf.linalg.band_part(tf.ones([size, size]), -1, 0)[None] * real[:, None, :]
            uniform = tf.math.divide_no_nan(causal, tf.reduce_sum(causal, axis=2, keepdims=True))
            itself = tf.eye(size)[None] * real[:, None, :]
            heads = tf.stack([uniform, itself], axis=1)  # head 0 uniform, head 1 on itself
            layers = tf.stack([heads] * LAYERS, axis=1)
            return {"attention": layers, "queries": queries}

    return FakeMtn()


def save_fake_model(path, names=("suggest", "complete", "session_attention"), sources=False):
    """Save the fake model at `path` with the signatures `names` (and serving_default)."""
    import tensorflow as tf

    model = build_fake_model(sources)
    signatures = {name: getattr(model, name) for name in names}
    signatures["serving_default"] = model.suggest
    tf.saved_model.save(model, str(path), signatures=signatures)
    return path


@pytest.fixture(scope="session")
def save_fake():
    """`save_fake_model`, for tests that need a variant of the fake model."""
    return save_fake_model


@pytest.fixture(scope="session")
def fake_model(tmp_path_factory):
    """The path of the saved fake model, a `savedmodel/` directory inside one named `tiny`."""
    return save_fake_model(tmp_path_factory.mktemp("models") / "tiny" / "savedmodel")


@pytest.fixture(scope="session")
def fake_model_with_sources(tmp_path_factory):
    """The fake model whose suggestions say where they came from (`sources`)."""
    return save_fake_model(
        tmp_path_factory.mktemp("models") / "ranked" / "savedmodel", sources=True
    )


@pytest.fixture(scope="session")
def loaded_backends():
    """Backends by model path, loaded once per test run and shared by the app's tests."""
    return {}


@pytest.fixture(autouse=True)
def load_each_model_once(monkeypatch, loaded_backends):
    """The app opens each fake model once per test run, not once per test: loading a
    SavedModel and compiling its signatures takes about a second, and what the app does with
    a model once loaded is what these tests check. A failed load is never kept."""
    from app import tui
    from app.model import Backend, resolve_model_path

    def backend(path=None, progress=None):
        key = str(resolve_model_path(path))
        if key not in loaded_backends:
            loaded_backends[key] = Backend(path, progress)
        return loaded_backends[key]

    monkeypatch.setattr(tui, "Backend", backend)
