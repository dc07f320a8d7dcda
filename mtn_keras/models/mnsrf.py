"""The M-NSRF peer (Ahmad et al. 2018; paper section 5.2) without its document ranker.

What remains is HRED-like: a bi-LSTM query encoder with max pooling over its per-token
outputs (M-NSRF's query representation), a session LSTM and an LSTM decoder; and the
entropy term lambda * sum(p log p) in the loss (the base class's `entropy_weight`), which
keeps the output distribution from getting too peaked. The paper found lambda = 0.1 best.
"""

import dataclasses
from typing import Any

import keras

from mtn_keras.base.config import ModelConfig
from mtn_keras.models.hred import HRED

ENTROPY_WEIGHT = 0.1


@keras.saving.register_keras_serializable(package="mtn_keras")
class MNSRF(HRED):
    """HRED with max-pooled query vectors and the entropy regularisation.

    An `entropy_weight` of 0 (the config's default) counts as unset and becomes 0.1:
    M-NSRF without the term is HRED with max pooling.

    Args:
        config: a `ModelConfig` (or its dict), as for `HRED`, plus entropy_weight.
    """

    query_pooling = "max"

    def __init__(self, config: ModelConfig | dict[str, Any], **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        if not self.config.entropy_weight:
            self.config = dataclasses.replace(self.config, entropy_weight=ENTROPY_WEIGHT)
