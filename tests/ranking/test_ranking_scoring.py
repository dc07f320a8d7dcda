"""The model's score of a candidate is its own teacher-forced loss (but for a word outside
the vocabulary, scored as the rarest word)."""

import numpy as np

CONTEXT = ["cheap flights", "best cheap flights"]
CANDIDATES = ["cheap flights online", "zzyzx flights", "hotel deals near me", "best"]


def test_candidate_scores_equal_the_models_own_loss(trained):
    import tensorflow as tf

    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.data.encode import encode_buckets
    from mtn_keras.ranking.scoring import candidate_hidden, candidate_log_probs
    from mtn_keras.serving.service import SuggestionService

    model, n = trained.model, trained.config.max_query_tokens
    service = SuggestionService(model, trained.vocab.tokens, DecodeConfig(xla=False))
    inputs = service.encoder.prepare(tf.constant([CONTEXT]))
    words = tf.constant([[(c.split() + [""] * n)[:n] for c in CANDIDATES]])
    ids = tf.reshape(
        service.encoder.word_ids(tf.reshape(words, [1, -1]), inputs), [1, len(CANDIDATES), n]
    )
    state = model.start(inputs.tokens, inputs.ext)
    scored = candidate_log_probs(model, state, ids, candidate_hidden(model, state, ids))
    assert scored["lengths"].numpy().tolist() == [[3, 2, 4, 1]]
    for candidate, got in zip(CANDIDATES, scored["log_probs"].numpy()[0]):
        bucket = encode_buckets([CONTEXT + [candidate]], trained.vocab, n)[3]
        x = {
            key: tf.constant(bucket[key])
            for key in ("session_tokens", "session_ext", "decoder_input")
        }
        nll, _, _, _ = model.token_losses(x, tf.constant(bucket["target"]), model(x))
        last_pair = nll.numpy()[-(len(candidate.split()) + 1) :].astype("float64")
        # The training loss is -log(p + 1e-9): undo the epsilon, which tells for rare tokens.
        loss = np.log(np.exp(-last_pair) - 1e-9).sum()
        if candidate.split()[0] == "zzyzx":
            # Outside the vocabulary: decoding scores it as the rarest word, below the <unk>
            # the loss reads (the mass of every rare word; models.base.unknown_as_rarest).
            assert got < loss
        else:
            np.testing.assert_allclose(got, loss, rtol=1e-4, atol=1e-3)
