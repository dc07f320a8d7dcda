"""The optimiser every model trains with: Adam, fed dense gradients, on the Transformer's
learning-rate schedule."""

from collections.abc import Sequence
from typing import Any

import keras

from mtn_keras.base import distribute
from mtn_keras.base.config import ModelConfig, TrainConfig
from mtn_keras.layers.hints import Tensor


@keras.saving.register_keras_serializable(package="mtn_keras")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lr = scale * d^-0.5 * min(step^-0.5, step * warmup^-1.5) (Vaswani et al. 2017)."""

    def __init__(self, d_model: int, warmup_steps: int = 4000, scale: float = 1.0) -> None:
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.scale = scale

    def __call__(self, step: int | Tensor) -> Tensor:
        step = keras.ops.cast(step, "float32") + 1.0
        warm = keras.ops.minimum(step**-0.5, step * self.warmup_steps**-1.5)
        return self.scale * self.d_model**-0.5 * warm

    def get_config(self) -> dict[str, Any]:
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale}


@keras.saving.register_keras_serializable(package="mtn_keras")
class DenseAdam(keras.optimizers.Adam):
    """Keras's Adam, fed dense gradients. Under TensorFlow an embedding lookup's gradient is
    a tf.IndexedSlices, and Keras's Adam squares its rows one by one: a row looked up k
    times in a batch adds the sum of k squares to the second moment, not the square of the
    summed gradient that JAX (and Adam itself) use. Dense, both backends train alike."""

    def apply(
        self, grads: Sequence[Tensor], trainable_variables: Sequence[keras.Variable] | None = None
    ) -> None:
        if keras.config.backend() == "tensorflow":
            import tensorflow as tf

            grads = [
                tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads
            ]
        return super().apply(grads, trainable_variables)


def compile_model(
    model: keras.Model, model_config: ModelConfig, train_config: TrainConfig, replicas: int = 1
) -> None:
    """Adam on the Transformer schedule, with decoupled weight decay when asked; its warm-up
    counts sessions at any replica count."""
    schedule = TransformerSchedule(
        model_config.d_model,
        distribute.warmup_for(train_config.warmup_steps, replicas),
        train_config.learning_rate_scale,
    )
    optimizer = DenseAdam(
        schedule,
        beta_1=0.9,
        beta_2=0.98,
        epsilon=1e-9,
        weight_decay=train_config.weight_decay or None,
    )
    model.compile(optimizer=optimizer)
