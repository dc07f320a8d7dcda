"""Fixtures of the app tests: a tiny fake SavedModel with the signatures of docs/contracts.md.

The fake follows the contract's shapes with simple deterministic TF logic, so the app can be
tested without a trained model.
"""

import pytest

WORDS = ["near me", "online", "reviews"]  # suggestion i is "<context> <WORDS[i]>"
N_TOKENS = 4  # n, the source words kept per query
LAYERS, HEADS = 2, 2


def build_fake_model():
    """A tf.Module whose signatures follow the contract; suggestions extend the last query."""
    import tensorflow as tf

    session_spec = tf.TensorSpec([None, None], tf.string, name="session")
    prefix_spec = tf.TensorSpec([None], tf.string, name="prefix")

    class FakeMtn(tf.Module):
        def _outputs(self, session, context):
            batch = tf.shape(session)[0]
            words = tf.constant(WORDS)
            suggestions = context[:, None] + " " + words[None, :]
            scores = tf.tile(-tf.range(1.0, len(WORDS) + 1.0)[None, :], [batch, 1])
            source = tf.strings.split(session).to_tensor("", shape=[None, None, N_TOKENS])
            present = tf.cast(source != "", tf.float32)
            total = tf.reduce_sum(present, axis=[1, 2], keepdims=True)
            copy = tf.math.divide_no_nan(present, total)
            copy = tf.tile(copy[:, None], [1, len(WORDS), 1, 1])
            return {
                "suggestions": suggestions,
                "scores": scores,
                "copy_attention": copy,
                "source_tokens": source,
            }

        def _last_query(self, session):
            count = tf.reduce_sum(tf.cast(session != "", tf.int32), axis=1)
            return tf.gather(session, tf.maximum(count - 1, 0), batch_dims=1)

        @tf.function(input_signature=[session_spec])
        def suggest(self, session):
            return self._outputs(session, self._last_query(session))

        @tf.function(input_signature=[session_spec, prefix_spec])
        def complete(self, session, prefix):
            last = self._last_query(session)
            length = tf.strings.length(prefix)
            extends = tf.strings.substr(last, tf.zeros_like(length), length) == prefix
            return self._outputs(session, tf.where(extends, last, prefix))

        @tf.function(input_signature=[session_spec])
        def session_attention(self, session):
            size = tf.shape(session)[1]
            causal = tf.linalg.band_part(tf.ones([size, size]), -1, 0)
            uniform = causal / tf.reduce_sum(causal, axis=1, keepdims=True)
            heads = tf.stack([uniform, tf.eye(size)])  # head 0 uniform, head 1 on itself
            layers = tf.stack([heads] * LAYERS)
            return {"attention": tf.tile(layers[None], [tf.shape(session)[0], 1, 1, 1, 1])}

    return FakeMtn()


def save_fake_model(path, names=("suggest", "complete", "session_attention")):
    """Save the fake model at `path` with the signatures `names` (and serving_default)."""
    import tensorflow as tf

    model = build_fake_model()
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
