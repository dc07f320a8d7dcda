"""The paper's peers (transformer, hred, mnsrf, seq2seq) on tiny models and batches: shapes,
the loss as the masked cross-entropy of the outputs, a real fit, decoding steps against
teacher forcing, causality over the session and over the target, the output's dependence on
the earlier queries, sessions padded at the front, the .keras round trip; and the train
command end to end with hred."""

import json

import keras
import numpy as np
import pytest
from copy_reference import scatter_rows
from keras import ops
from tiny_models import N, V, fresh, shared, tiny_config

from mtn_keras import compare as compare_command
from mtn_keras import prepare as prepare_command
from mtn_keras import train as train_command
from mtn_keras.data.vocab import BOS, EOS, SPECIALS, UNK
from mtn_keras.models import MODELS

NAMES = ["transformer", "hred", "mnsrf", "seq2seq"]
M = N + 1


def make_batch(seed=0, batch=2, size=3):
    """Sessions of `size` queries of 1..N random words; the out-of-vocabulary word V + 0
    stands first in queries 0 and 1, so the target of pair 0 can copy it."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, N + 1, (batch, size, 1))
    tokens = np.where(np.arange(N) < lengths, rng.integers(4, V, (batch, size, N)), 0)
    tokens[:, :2, 0] = UNK
    ext = tokens.copy()
    ext[:, :2, 0] = V
    bos = np.full((batch, size - 1, 1), BOS)
    decoder_input = np.concatenate([bos, tokens[:, 1:]], axis=-1)
    target = np.concatenate([ext[:, 1:], np.zeros_like(bos)], axis=-1)
    target[np.arange(M) == lengths[:, 1:]] = EOS
    x = {"session_tokens": tokens, "session_ext": ext, "decoder_input": decoder_input}
    return {k: v.astype("int32") for k, v in x.items()}, target.astype("int32")


def numpy(tree):
    return keras.tree.map_structure(ops.convert_to_numpy, tree)


@pytest.fixture(scope="module", params=NAMES)
def model(request):
    return shared(request.param)


def teacher_forced_log_probs(model, x, outputs, pair):
    """Log probs (B, m, V + (pair+1)*n) of pair `pair`'s targets from one forward pass,
    mixed from the vocabulary and copy distributions as `step` mixes them."""
    hidden = outputs["hidden"][:, pair]
    batch = hidden.shape[0]
    probs = ops.convert_to_numpy(ops.softmax(model.vocab_logits(hidden), axis=-1))
    # Decoding scores <unk> as the rarest word (models.base.unknown_as_rarest).
    probs[..., UNK] = probs[..., len(SPECIALS) :].min(axis=-1)
    sources = (pair + 1) * N
    padding = np.zeros((batch, M, sources), "float32")
    if "gate" not in outputs:
        probs = ops.concatenate([probs, padding], axis=-1)
    else:
        pairs = outputs["hidden"].shape[1]
        attention = ops.reshape(outputs["copy_attention"], (batch, pairs, M, -1))[
            :, pair, :, :sources
        ]
        gate = ops.reshape(outputs["gate"], (batch, pairs, M, 1))[:, pair]
        ids = np.repeat(x["session_ext"].reshape(batch, -1)[:, None, :sources], M, axis=1)
        copied = scatter_rows(
            ops.reshape((1.0 - gate) * attention, (batch * M, sources)),
            ids.reshape(batch * M, sources),
            V + sources,
        )
        probs = ops.concatenate([gate * probs, padding], axis=-1)
        probs = probs + ops.reshape(copied, (batch, M, V + sources))
    with np.errstate(divide="ignore"):
        return np.log(ops.convert_to_numpy(probs))


def assert_same_log_probs(actual, expected):
    actual, expected = ops.convert_to_numpy(actual), ops.convert_to_numpy(expected)
    np.testing.assert_array_equal(np.isinf(actual), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(actual[finite], expected[finite], atol=1e-5)


def expected_loss(model, x, y, outputs):
    """The loss written out from the outputs: per real (non-padding) target token, minus
    the log of its probability (with the copy head gate * vocabulary softmax + (1 - gate) *
    the copy attention on the source slots holding it; without, an out-of-vocabulary target
    scores as <unk>), less `entropy_weight` times the vocabulary softmax's entropy;
    averaged over the real target tokens."""
    probs = ops.convert_to_numpy(ops.softmax(model.vocab_logits(outputs["hidden"]), axis=-1))
    in_vocab = y < V
    p_vocab = np.take_along_axis(probs, np.where(in_vocab, y, UNK)[..., None], -1)[..., 0]
    if "gate" in outputs:
        batch, pairs = y.shape[:2]
        gate = outputs["gate"].reshape(batch, pairs, M)
        attention = outputs["copy_attention"].reshape(batch, pairs, M, -1)
        sources = x["session_ext"].reshape(batch, 1, 1, -1)
        copied = np.sum(attention * (sources == y[..., None]), axis=-1)
        p = gate * np.where(in_vocab, p_vocab, 0.0) + (1.0 - gate) * copied
    else:
        p = p_vocab
    entropy = -np.sum(probs * np.log(probs), axis=-1)
    per_token = -np.log(p) - model.config.entropy_weight * entropy
    return per_token[y != 0].mean()


@pytest.mark.parametrize(
    "copy", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["copy", "no_copy"]
)
@pytest.mark.parametrize("name", NAMES)
def test_models_forward_shapes_and_loss(name, copy):
    """The outputs' shapes, and the loss is the masked cross-entropy of those outputs (see
    `expected_loss`): a loss that counted padding targets, mixed the copy head in wrongly or
    lost M-NSRF's entropy term would still be a finite number."""
    model = shared(name, copy)
    x, y = make_batch()
    outputs = model(x)
    assert tuple(outputs["hidden"].shape) == (2, 2, M, 16)
    if copy:
        assert tuple(outputs["copy_attention"].shape) == (2, 2 * M, 3 * N)
        assert tuple(outputs["gate"].shape) == (2, 2 * M, 1)
    else:
        assert set(outputs) == {"hidden"}
    assert (y == V).any() and (y == 0).any()  # a target to copy, and padding to mask
    loss = float(model.compute_loss(x, y, outputs))
    assert loss == pytest.approx(expected_loss(model, x, y, numpy(outputs)), rel=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_models_fit_lowers_the_loss(name):
    keras.utils.set_random_seed(0)
    model = fresh(name)
    # Eagerly: tracing a train step costs more than these steps; the train command test
    # below runs a traced fit.
    model.compile(optimizer=keras.optimizers.Adam(1e-2), run_eagerly=True)
    x, y = make_batch()
    history = model.fit(x, y, batch_size=2, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.9 * losses[0]


@pytest.mark.parametrize(
    "copy", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["copy", "no_copy"]
)
@pytest.mark.parametrize("name", NAMES)
def test_models_steps_match_teacher_forcing(name, copy):
    model = shared(name, copy)
    x, _ = make_batch(seed=1)
    pair = 1  # the last pair: its context is queries 0 and 1
    expected = teacher_forced_log_probs(model, x, numpy(model(x)), pair)
    context = slice(0, pair + 1)
    state = model.start(x["session_tokens"][:, context], x["session_ext"][:, context])
    for t in range(M):
        tokens = x["decoder_input"][:, pair, t]
        log_probs, state = model.step(tokens, state, t)
        real = tokens != 0  # decoding never feeds padding; teacher forcing masks it
        assert_same_log_probs(ops.convert_to_numpy(log_probs)[real], expected[real, t])


def test_models_causal_over_the_session(model):
    x, _ = make_batch(seed=2)
    outputs = numpy(model(x))
    for t in range(2):
        changed = {k: v.copy() for k, v in x.items()}
        later = make_batch(seed=3)[0]
        for key in ("session_tokens", "session_ext"):
            changed[key][:, t + 1 :] = later[key][:, t + 1 :]
        again = numpy(model(changed))
        np.testing.assert_allclose(
            again["hidden"][:, : t + 1], outputs["hidden"][:, : t + 1], atol=1e-5
        )
        for key in ("copy_attention", "gate"):
            rows = slice(0, (t + 1) * M)
            np.testing.assert_allclose(again[key][:, rows], outputs[key][:, rows], atol=1e-5)


def test_models_causal_over_the_target(model):
    """The decoder's output at target position t reads the target tokens up to t only:
    changing the tokens after t leaves positions 0..t as they were (teacher forcing would
    otherwise train on the answer)."""
    x, _ = make_batch(seed=6)
    outputs = numpy(model(x))
    rng = np.random.default_rng(7)
    for t in range(M - 1):
        changed = {**x, "decoder_input": x["decoder_input"].copy()}
        changed["decoder_input"][:, :, t + 1 :] = rng.integers(4, V, (2, 2, M - t - 1))
        again = numpy(model(changed))
        np.testing.assert_allclose(
            again["hidden"][:, :, : t + 1], outputs["hidden"][:, :, : t + 1], atol=1e-5
        )
        for key in ("copy_attention", "gate"):
            rows = np.arange(2 * M).reshape(2, M)[:, : t + 1].ravel()  # each pair's 0..t
            np.testing.assert_allclose(again[key][:, rows], outputs[key][:, rows], atol=1e-5)


def test_models_read_the_earlier_queries(model):
    """The suggestion after query 1 depends on query 0 too: changing query 0 (its words,
    not its length) changes pair 1's decoder states. A model that read only the last query
    would pass the causality tests above."""
    x, _ = make_batch(seed=8)
    outputs = numpy(model(x))
    query = x["session_tokens"][:, 0]
    other = np.where(query > 0, 4 + (query - 3) % (V - 4), 0)  # another word in every slot
    changed = {k: v.copy() for k, v in x.items()}
    changed["session_tokens"][:, 0] = changed["session_ext"][:, 0] = other
    again = numpy(model(changed))
    for row in range(2):
        change = np.abs(again["hidden"][row, 1] - outputs["hidden"][row, 1]).max()
        assert change > 1e-6, row  # a model that did not read query 0: exactly 0


def test_models_front_padding_changes_nothing(model):
    x, _ = make_batch(seed=4)
    tokens, ext = x["session_tokens"], x["session_ext"]
    pad = np.zeros_like(tokens[:, :1])
    plain = model.start(tokens, ext)
    padded = model.start(np.concatenate([pad, tokens], 1), np.concatenate([pad, ext], 1))
    width = V + tokens.shape[1] * N
    for t, token in enumerate([BOS, 7, 9]):
        tokens_t = np.full((2,), token, "int32")
        expected, plain = model.step(tokens_t, plain, t)
        actual, padded = model.step(tokens_t, padded, t)
        actual = ops.convert_to_numpy(actual)
        assert_same_log_probs(actual[:, :width], expected)
        assert np.all(np.isneginf(actual[:, width:]))


@pytest.mark.slow
def test_models_keras_round_trip(model, tmp_path):
    x, _ = make_batch(seed=5)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is type(model) and loaded.config == model.config
    expected, actual = numpy(model(x)), numpy(loaded(x))
    for key, value in expected.items():
        np.testing.assert_allclose(actual[key], value, atol=1e-6)


def test_models_mnsrf_entropy_weight_defaults_to_a_tenth():
    assert MODELS["mnsrf"](tiny_config()).config.entropy_weight == 0.1
    config = tiny_config()
    config.entropy_weight = 0.3
    assert MODELS["mnsrf"](config).config.entropy_weight == 0.3
    assert MODELS["hred"](tiny_config()).config.entropy_weight == 0.0


def write_log(path):
    """A made-up AOL-format log: 40 users, each one session of 4 queries a minute apart."""
    words = ["red", "blue", "cheap", "bikes", "kites", "tents", "shoes", "maps"]
    lines = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    for user in range(40):
        for k in range(4):
            query = f"{words[(user + k) % 8]} {words[(user * 3 + k) % 8]}"
            lines.append(f"{user}\t{query}\t2006-03-01 10:{k:02d}:00\t\t")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A prepared dataset directory made by the prepare command from a made-up log."""
    tmp = tmp_path_factory.mktemp("baselines")
    write_log(tmp / "log.txt")
    assert (
        prepare_command.main(
            [
                "--input",
                str(tmp / "log.txt"),
                "--out",
                str(tmp / "data"),
                "--min-count",
                "1",
                "--split",
                "80/10/10",
            ]
        )
        == 0
    )
    return tmp / "data"


# The commands' main functions run in this process: the same path as `python -m`, without
# importing TensorFlow again.
@pytest.mark.slow
def test_models_train_command_runs_hred_end_to_end(prepared, tmp_path):
    out = tmp_path / "hred"
    assert (
        train_command.main(
            [
                "--data",
                str(prepared),
                "--model",
                "hred",
                "--preset",
                "tiny",
                "--out",
                str(out),
                "--epochs",
                "1",
                "--verbose",
                "0",
            ]
        )
        == 0
    )
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["model"] == "hred" and summary["epochs"] == 1
    assert type(keras.saving.load_model(out / "model.keras")).__name__ == "HRED"


@pytest.mark.slow
def test_models_compare_trains_and_evaluates_the_rows_of_a_model(prepared, tmp_path):
    assert (
        compare_command.main(
            ["--data", str(prepared), "--out", str(tmp_path), "--quick", "--models", "seq2seq"]
        )
        == 0
    )
    results = json.loads((tmp_path / "compare.json").read_text())
    assert list(results) == ["seq2seq"]
    assert results["seq2seq"]["training"]["epochs"] == 1
    assert {"bleu", "precisions", "perplexity", "anchors"} <= set(results["seq2seq"])
    assert "| seq2seq |" in (tmp_path / "compare.md").read_text()
    assert (tmp_path / "bleu.png").is_file()
