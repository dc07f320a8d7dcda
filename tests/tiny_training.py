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
