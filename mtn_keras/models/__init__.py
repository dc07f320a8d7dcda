"""The neural suggestion models by name."""

from mtn_keras.models.mtn import MTN

MODELS = {"mtn": MTN}


def build_model(name, config):
    """A fresh, unbuilt model of the given name and config."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {sorted(MODELS)}")
    return MODELS[name](config)
