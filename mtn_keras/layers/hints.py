"""The type hints of the layers and models for what Keras hands them: tensors and shapes."""

from collections.abc import Mapping
from typing import Any, TypeAlias

# A tensor of Keras's backend, what keras.ops takes and returns: a tf.Tensor under
# TensorFlow, a jax.Array under JAX. Neither library has hints that mypy reads (Any to it).
Tensor: TypeAlias = Any
# A shape as Keras gives it to `build`: one entry per axis, None where it is unknown.
Shape: TypeAlias = tuple[int | None, ...]
# Tensors by name: a batch's inputs (session_tokens, session_ext, ...), a model's outputs.
Tensors: TypeAlias = Mapping[str, Tensor]
# A model's decoding state (`start`, `step`): its tensors by name, and under "context" those
# that are the same for every beam (docs/contracts.md).
State: TypeAlias = dict[str, Any]
