"""The neural suggestion models by name."""

from typing import Any

from mtn_keras.base.config import ModelConfig
from mtn_keras.models.base import SuggestionModel
from mtn_keras.models.hred import HRED
from mtn_keras.models.mnsrf import MNSRF
from mtn_keras.models.mtn import MTN
from mtn_keras.models.seq2seq import Seq2Seq
from mtn_keras.models.transformer import Transformer

MODELS: dict[str, type[SuggestionModel]] = {
    "mtn": MTN,
    "transformer": Transformer,
    "hred": HRED,
    "mnsrf": MNSRF,
    "seq2seq": Seq2Seq,
}


def build_model(name: str, config: ModelConfig | dict[str, Any]) -> SuggestionModel:
    """A fresh, unbuilt model of the given name and config."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {sorted(MODELS)}")
    return MODELS[name](config)
