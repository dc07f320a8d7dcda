"""Hyperparameters: one dataclass for the model, one for training, presets by name; how
suggestions are decoded (DecodeConfig) is decode_config.py's."""

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Imported from here too: mtn_keras.base.config.DecodeConfig is the documented path.
from mtn_keras.base.decode_config import FILTERS, UNRELATED_PLACES, DecodeConfig  # noqa: F401

# The names of mtn_keras.models.MODELS, known without importing TensorFlow.
MODEL_NAMES = ("mtn", "transformer", "hred", "mnsrf", "seq2seq")


@dataclass
class ModelConfig:
    """Sizes of a suggestion model; every model reads the fields it needs.

    `query_layers`, `session_layers` and `decoder_layers` are the paper's Q/S/D layer
    counts; recurrent models read `rnn_units` and `session_layers` only as far as they
    apply. `levels` is K of a K-level MTN. `copy` switches the copy head.
    `history_queries` (MTN only) is how many of the user's latest earlier queries the session
    attends to (0: none, the model as without it); `history_encoder` encodes each of them:
    "pooled" (token embeddings through the query projection) or "query" (the query encoder).
    """

    vocab_size: int = 0
    max_query_tokens: int = 10
    max_queries: int = 5
    embed_dim: int = 128
    d_model: int = 128
    ff_dim: int = 512
    num_heads: int = 4
    query_layers: int = 2
    session_layers: int = 2
    decoder_layers: int = 2
    levels: int = 2
    rnn_units: int = 128
    dropout: float = 0.1
    label_smoothing: float = 0.05
    entropy_weight: float = 0.0
    copy: bool = True
    history_queries: int = 0
    history_encoder: str = "pooled"


@dataclass
class TrainConfig:
    """How a model is trained: batch, schedule, stopping."""

    epochs: int = 8
    batch_size: int = 64
    warmup_steps: int = 1000
    learning_rate_scale: float = 1.0
    weight_decay: float = 0.0  # decoupled (AdamW-style) decay of the weights; 0 is plain Adam
    patience: int = 2
    # What picks the best epoch and stops early: "loss" (validation loss) or "bleu" (BLEU
    # of the beam's top suggestion on the validation pairs, for users the model never saw).
    select: str = "loss"
    seed: int = 0


POSITIVE = (
    "vocab_size",
    "max_query_tokens",
    "max_queries",
    "embed_dim",
    "d_model",
    "ff_dim",
    "num_heads",
    "query_layers",
    "session_layers",
    "decoder_layers",
    "levels",
    "rnn_units",
    "epochs",
    "batch_size",
    "warmup_steps",
)
FRACTIONS = ("dropout", "label_smoothing")  # in [0, 1)
SELECT = ("loss", "bleu")  # TrainConfig.select: the validation column that picks the best epoch
HISTORY_ENCODERS = ("pooled", "query")  # ModelConfig.history_encoder


def check_configs(model_config: ModelConfig, train_config: TrainConfig) -> None:
    """Raises ValueError naming the first field whose value no model can train with."""
    values = {**dataclasses.asdict(model_config), **dataclasses.asdict(train_config)}
    for key in POSITIVE:
        if values[key] < 1:
            raise ValueError(f"{key} must be at least 1, not {values[key]}")
    for key in FRACTIONS:
        if not 0 <= values[key] < 1:
            raise ValueError(f"{key} must be in [0, 1), not {values[key]}")
    for key in ("learning_rate_scale", "entropy_weight", "patience"):
        if not 0 <= values[key] < math.inf:
            raise ValueError(f"{key} must be a finite number of at least 0, not {values[key]}")
    if values["learning_rate_scale"] == 0:
        raise ValueError("learning_rate_scale must be above 0")
    if values["history_queries"] < 0:
        raise ValueError(f"history_queries must be at least 0, not {values['history_queries']}")
    if values["history_encoder"] not in HISTORY_ENCODERS:
        raise ValueError(
            f"history_encoder must be one of {', '.join(HISTORY_ENCODERS)}, "
            f"not {values['history_encoder']!r}"
        )
    if values["select"] not in SELECT:
        raise ValueError(f"select must be one of {', '.join(SELECT)}, not {values['select']!r}")


# Each preset's model sizes, one row a preset, in the order of PRESET_FIELDS.
PRESET_FIELDS = (
    "embed_dim d_model ff_dim num_heads query_layers session_layers decoder_layers rnn_units "
    "dropout label_smoothing"
).split()
PRESETS: dict[str, dict[str, Any]] = {
    name: dict(zip(PRESET_FIELDS, values))
    for name, values in {
        "paper": (300, 512, 1024, 8, 3, 2, 3, 256, 0.1, 0.05),
        "small": (128, 128, 512, 4, 2, 2, 2, 128, 0.1, 0.05),
        "tiny": (16, 16, 32, 2, 1, 1, 1, 16, 0.0, 0.0),
    }.items()
}
TRAIN_PRESETS: dict[str, dict[str, Any]] = {
    "paper": dict(warmup_steps=4000, batch_size=128, epochs=5),
    "small": dict(warmup_steps=1000, batch_size=64, epochs=8),
    "tiny": dict(warmup_steps=50, batch_size=16, epochs=2),
}


def preset(name: str) -> tuple[ModelConfig, TrainConfig]:
    """The (ModelConfig, TrainConfig) of a named preset."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return ModelConfig(**PRESETS[name]), TrainConfig(**TRAIN_PRESETS[name])


def apply_overrides(
    configs: Sequence[ModelConfig | TrainConfig], assignments: Iterable[str]
) -> None:
    """Set `key=value` strings on whichever dataclass in `configs` has the field."""
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"--set expects key=value, got {item!r}")
        target = next((c for c in configs if key in _fields(c)), None)
        if target is None:
            known = sorted(k for c in configs for k in _fields(c))
            raise ValueError(f"--set: unknown field {key!r}; known: {', '.join(known)}")
        setattr(target, key, _parse(raw, _fields(target)[key].type, key))


def _fields(config):
    return {f.name: f for f in dataclasses.fields(config)}


def _parse(raw, kind, key):
    kind = kind if isinstance(kind, str) else kind.__name__
    try:
        if kind == "bool":
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1", "yes")
        return {"int": int, "float": float, "str": str}[kind](raw)
    except ValueError:
        raise ValueError(f"--set {key}: {raw!r} is not a valid {kind}") from None


def model_config_from_dict(values: dict) -> ModelConfig:
    known = {f.name for f in dataclasses.fields(ModelConfig)}
    return ModelConfig(**{k: v for k, v in values.items() if k in known})


def configure(
    preset_name: str,
    stats: dict,
    vocab_size: int,
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    seed: int | None = None,
    overrides: Iterable[str] = (),
) -> tuple[ModelConfig, TrainConfig]:
    """The model and training configs: the preset, then the data's sizes (`stats` of the
    prepared dataset), then `epochs`, `batch_size` and `seed` where given, then the
    `key=value` overrides."""
    model_config, train_config = preset(preset_name)
    options = stats.get("options", {})
    model_config.vocab_size = vocab_size
    model_config.max_query_tokens = options.get(
        "max_query_pieces", options.get("max_query_tokens", model_config.max_query_tokens)
    )
    model_config.max_queries = options.get("max_queries", model_config.max_queries)
    for name, value in (("epochs", epochs), ("batch_size", batch_size), ("seed", seed)):
        if value is not None:
            setattr(train_config, name, value)
    apply_overrides([model_config, train_config], overrides)
    if model_config.vocab_size != vocab_size:
        raise ValueError(
            f"vocab_size is the data's ({vocab_size} tokens in vocab.txt); it cannot be set"
        )
    check_configs(model_config, train_config)
    return model_config, train_config
