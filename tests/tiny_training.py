"""The `train` arguments of the suite's tiny models (a module of its own: the conftest files
and the training tests import it by a name no other file in tests/ has)."""


def tiny_train_args(data, out, epochs, *settings):
    """`train`'s arguments for the tiny preset on `data`, written to `out`: `epochs` quiet
    epochs at four times the learning rate after 20 warm-up steps, then `settings` (`--set`)."""
    args = ["--data", str(data), "--preset", "tiny", "--out", str(out)]
    args += ["--epochs", str(epochs), "--verbose", "0"]
    for setting in ("learning_rate_scale=4", "warmup_steps=20", *settings):
        args += ["--set", setting]
    return args


def tiny_fit_args(data, out, epochs):
    """`fit_model`'s arguments and keywords for the tiny MTN on the prepared `data`, written
    quietly to `out` in `epochs` epochs."""
    from mtn_keras.base.config import preset
    from mtn_keras.data.prepared import load_split
    from mtn_keras.data.vocab import Vocabulary

    model_config, train_config = preset("tiny")
    vocab = Vocabulary.load(str(data / "vocab.txt"))
    model_config.vocab_size = len(vocab)
    train_config.epochs = epochs
    keywords = dict(
        train_sessions=load_split(str(data), "train"),
        valid_sessions=load_split(str(data), "valid"),
        out=str(out),
        verbose=0,
    )
    return ("mtn", model_config, train_config, vocab), keywords
