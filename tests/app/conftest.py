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
HISTORY_SIZE = 5  # earlier queries the fake history model keeps (its export.json says so)
HISTORY_SIGNATURES = ("suggest_with_history", "complete_with_history")


def build_fake_model(sources=False):
    """A tf.Module whose signatures follow the contract; suggestions extend the last query.

    Like the real export it normalises queries, drops those without words and keeps the
    last WINDOW slots of [padding, queries with words]; with `sources`, `suggest` and
    `complete` also say where each suggestion came from. Its history signatures put first
    the latest kept history query that shares a word with the session's last query (for
    `suggest`, or a prefix without words) or completes the prefix (for `complete`), from
    "history": `suggest_with_history` is `complete_with_history` with empty prefixes, as in
    the real export. Completing is the product's one rule, `mtn_keras.data.text.completes`,
    written in the graph (`fake_completes`; test_history_model.py checks they agree).
    """
    import tensorflow as tf

    session_spec = tf.TensorSpec([None, None], tf.string, name="session")
    prefix_spec = tf.TensorSpec([None], tf.string, name="prefix")
    history_spec = tf.TensorSpec([None, None], tf.string, name="history")

    normalise, typed_prefix, completes = fake_completes()

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
            extends = completes(last, typed_prefix(prefix))
            return self._outputs(session, tf.where(extends, last, normalise(prefix)))

        def _with_history(self, outputs, history, matches):
            """`outputs` with the latest kept history query that `matches` put first."""
            history = normalise(tf.concat([tf.fill([tf.shape(history)[0], 1], ""), history], 1))
            history = history[:, -HISTORY_SIZE:]
            found = matches(history) & (history != "")  # [B, H']
            latest = (
                tf.shape(history)[1]
                - 1
                - tf.argmax(tf.reverse(tf.cast(found, tf.int32), [1]), 1, tf.int32)
            )
            any_found = tf.reduce_any(found, 1)
            pick = tf.where(any_found, tf.gather(history, latest, batch_dims=1), "")
            batch = tf.shape(history)[0]
            base = (
                outputs["sources"]
                if "sources" in outputs
                else tf.fill(tf.shape(outputs["suggestions"]), "model")
            )
            copy = outputs["copy_attention"]
            weights = tf.cast(found, tf.float32)
            return {
                **outputs,
                "suggestions": tf.concat([pick[:, None], outputs["suggestions"]], 1),
                "scores": tf.concat(
                    [tf.where(any_found, 0.0, -float("inf"))[:, None], outputs["scores"]], 1
                ),
                "sources": tf.concat([tf.fill([batch, 1], "history"), base], 1),
                "copy_attention": tf.concat([tf.zeros_like(copy[:, :1]), copy], 1),
                "history": history,
                "history_attention": tf.math.divide_no_nan(
                    weights, tf.reduce_sum(weights, 1, keepdims=True)
                ),
            }

        @tf.function(input_signature=[session_spec, history_spec])
        def suggest_with_history(self, session, history):
            # as the real export: `complete_with_history` with empty prefixes
            return self.complete_with_history(session, tf.fill([tf.shape(session)[0]], ""), history)

        @tf.function(input_signature=[session_spec, prefix_spec, history_spec])
        def complete_with_history(self, session, prefix, history):
            typed = typed_prefix(prefix)
            words = tf.strings.split(self._last_query(session)).to_tensor("")  # [B, L]

            def matches(kept):
                """Completes the typed words; without any, shares a word with the last query."""
                starts = completes(kept, typed[:, None])
                kept_words = tf.strings.split(kept).to_tensor("")  # [B, H', W]
                same = kept_words[:, :, :, None] == words[:, None, None, :]
                shares = tf.reduce_any(same & (kept_words[:, :, :, None] != ""), axis=[2, 3])
                return tf.where(typed[:, None] != "", starts, shares)  # typed: "" or words

            return self._with_history(self.complete(session, prefix), history, matches)

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


def fake_completes():
    """The fake's text rules in TensorFlow: normalise as the export does; the typed prefix as
    `completes` reads it (normalised, a trailing space when the last word is finished, "" when
    it has no words); and `mtn_keras.data.text.completes(query, prefix)` itself."""
    import tensorflow as tf

    separator = r"[\pP\pS\pC\pZ]"

    def normalise(text):
        text = tf.strings.regex_replace(tf.strings.lower(text), separator, " ")
        return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))

    def typed_prefix(prefix):
        text = normalise(prefix)
        finished = tf.strings.regex_full_match(prefix, f"(?s).*{separator}") & (text != "")
        return tf.where(finished, text + " ", text)

    def completes(queries, prefix):
        """(query + " ").startswith(prefix), or a prefix without words; broadcast."""
        length = tf.strings.length(prefix)
        head = tf.strings.substr(queries + " ", tf.zeros_like(length), length)
        return (head == prefix) | (prefix == "")

    return normalise, typed_prefix, completes


def save_fake_model(path, names=("suggest", "complete", "session_attention"), sources=False):
    """Save the fake model at `path` with the signatures `names` (and serving_default); with
    the history signatures, an export.json that gives its history size."""
    import json

    import tensorflow as tf

    model = build_fake_model(sources)
    signatures = {name: getattr(model, name) for name in names}
    signatures["serving_default"] = model.suggest
    tf.saved_model.save(model, str(path), signatures=signatures)
    if set(HISTORY_SIGNATURES) & set(names):
        (path / "export.json").write_text(json.dumps({"history_size": HISTORY_SIZE}))
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
def fake_model_with_history(tmp_path_factory):
    """The fake model with the history signatures, a `savedmodel/` inside `remembers`."""
    return save_fake_model(
        tmp_path_factory.mktemp("models") / "remembers" / "savedmodel",
        names=("suggest", "complete", "session_attention", *HISTORY_SIGNATURES),
    )


@pytest.fixture
def damaged_store():
    """A function that writes a store of 2,000 long queries at a path and overwrites three of
    its pages, as a disk error would: what every "the store is damaged" test reads."""

    def damage(path):
        from mtn_tui.history.opening import open_store

        store, _ = open_store(path)
        store.add_many([(f"query number {n} " * 5, n) for n in range(2000)])
        store.close()
        data = bytearray(path.read_bytes())
        data[4096 * 3 : 4096 * 6] = b"\xff" * 4096 * 3
        path.write_bytes(bytes(data))
        return path

    return damage


@pytest.fixture(autouse=True)
def private_user_data(monkeypatch, tmp_path):
    """The app's history store goes to the test's own folder, never the real user-data one."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user-data"))


@pytest.fixture(scope="session")
def loaded_app_models():
    """The app's models by path, loaded once per test run and shared by the app's tests."""
    return {}


@pytest.fixture(autouse=True)
def load_each_model_once(monkeypatch, loaded_app_models):
    """The app opens each fake model once per test run, not once per test: loading a
    SavedModel and compiling its signatures takes about a second, and what the app does with
    a model once loaded is what these tests check. A failed load is never kept."""
    from mtn_tui import tui
    from mtn_tui.model import LocalModel, resolve_model_path

    def app_model(path=None, progress=None, prepare_tensorflow=None):
        key = str(resolve_model_path(path))
        if key not in loaded_app_models:
            loaded_app_models[key] = LocalModel(path, progress, prepare_tensorflow)
        return loaded_app_models[key]

    monkeypatch.setattr(tui, "LocalModel", app_model)
