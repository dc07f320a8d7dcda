"""What the SavedModel's signatures do with odd tensors, apart from the decoding itself:
input checks that name the input and the shape expected (a signature's declared shape is
not enforced when it is called), an empty session as a session of one empty query, the
answer to a batch of no sessions, and large batches answered in chunks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

import tensorflow as tf

if TYPE_CHECKING:
    from mtn_keras.serving.outputs import OutputTable

# Sessions searched at once: a batch of B sessions is answered in ceil(B / CHUNK) chunks one
# after another, so a call's memory is that of CHUNK sessions whatever B (one call of 1,000
# sessions peaked at 14 GB before; benchmarks/bench_batch_memory.py).
CHUNK = 64
# The sizes that name the outputs' dimensions (outputs.py): a number, or a tensor's at run time.
Sizes: TypeAlias = Mapping[str, int | tf.Tensor]


def fed_shape(tensor: tf.Tensor) -> tf.Tensor:
    """The shape of `tensor` as fed at run time. The round trip hides the declared static
    shape, which would otherwise let TensorFlow fold a rank check away."""
    return tf.shape(tf.io.parse_tensor(tf.io.serialize_tensor(tensor), tensor.dtype))


def check_rank(tensor: tf.Tensor, name: str, expected: str) -> tf.Operation | None:
    """An assertion that `tensor` has as many dimensions as `expected` names ("[B, S]")."""
    shape = fed_shape(tensor)
    rank = expected.count(",") + 1
    message = f"{name} must be a string tensor {expected}; got one of shape"
    return tf.debugging.Assert(tf.size(shape) == rank, [message, shape], name=f"check_{name}")


def checked_inputs(
    session: tf.Tensor, prefix: tf.Tensor | None = None, history: tf.Tensor | None = None
) -> tuple[tf.Tensor | None, ...]:
    """`session` (and `prefix`, `history`) after checks that raise InvalidArgumentError,
    naming the input and the shape expected, on a wrong rank or a batch unlike the
    session's. A session of no queries [B, 0] comes back as one empty query each [B, 1]."""
    checks = [check_rank(session, "session", "[B, S]")]
    for tensor, name, expected in ((prefix, "prefix", "[B]"), (history, "history", "[B, H]")):
        if tensor is None:
            continue
        checks.append(check_rank(tensor, name, expected))
        with tf.control_dependencies(checks):
            same = tf.shape(tensor)[0] == tf.shape(session)[0]
            message = f"{name} must hold one row per session, {expected}: B rows, B sessions"
            checks.append(
                tf.debugging.Assert(
                    same,
                    [message, tf.shape(tensor)[0], tf.shape(session)[0]],
                    name=f"check_{name}_batch",
                )
            )
    with tf.control_dependencies(checks):
        session = at_least_one_query(session)
        prefix = None if prefix is None else tf.identity(prefix)
        history = None if history is None else tf.identity(history)
    return (session, prefix) if history is None else (session, prefix, history)


def at_least_one_query(session: tf.Tensor) -> tf.Tensor:
    """[B, S] -> [B, max(S, 1)]: a session of no queries (what a search box sends before its
    first query) gets one empty query, so that every signature answers it, shapes included,
    exactly as [[""]]: the first query of a session completes."""
    missing = tf.maximum(1 - tf.shape(session)[1], 0)
    return tf.pad(session, [[0, 0], [missing, 0]], constant_values="")


def empty_outputs(outputs: OutputTable, sizes: Sizes) -> dict[str, tf.Tensor]:
    """Zero-filled tensors ("" for strings) of the shapes that `outputs` (a table of
    outputs.py) describe, the sizes looked up by name in `sizes`."""
    return {
        name: tf.zeros([sizes[dim] for dim in dims], dtype)
        for name, (dtype, dims) in outputs.items()
    }


def unless_empty(
    session: tf.Tensor,
    answer: Callable[[], dict[str, tf.Tensor]],
    outputs: OutputTable,
    sizes: Sizes,
) -> dict[str, tf.Tensor]:
    """`answer()` for a batch of sessions, the empty outputs (batch 0) without running it."""
    return tf.cond(tf.shape(session)[0] > 0, answer, lambda: empty_outputs(outputs, sizes))


def in_chunks(
    answer: Callable[..., dict[str, tf.Tensor]],
    inputs: Sequence[tf.Tensor],
    outputs: OutputTable,
    sizes: Sizes,
    chunk: int = CHUNK,
) -> dict[str, tf.Tensor]:
    """`answer(*inputs)` (string tensors of batch B first) over chunks of at most `chunk`
    sessions, one at a time (a while loop), concatenated: the same outputs (described by
    `outputs`, their static sizes looked up by name in `sizes`) as one call. The last chunk
    is padded with "" rows, whose answers are dropped; a batch of up to `chunk` sessions is
    one chunk of its own size, without padding."""
    batch = tf.shape(inputs[0])[0]
    size = tf.minimum(batch, chunk)
    chunks = (batch + size - 1) // size
    padded = [
        tf.reshape(
            tf.pad(
                x, [[0, chunks * size - batch]] + [[0, 0]] * (x.shape.rank - 1), constant_values=""
            ),
            tf.concat([[chunks, size], tf.shape(x)[1:]], axis=0),
        )
        for x in inputs
    ]
    found = tf.map_fn(
        lambda rows: answer(*rows),
        padded,
        fn_output_signature={
            name: tf.TensorSpec(None, dtype) for name, (dtype, _) in outputs.items()
        },
        parallel_iterations=1,
    )
    joined = {}
    for name, (_, dims) in outputs.items():
        value = found[name]
        value = tf.reshape(value, tf.concat([[-1], tf.shape(value)[2:]], axis=0))[:batch]
        value.set_shape(
            [sizes.get(dim) if isinstance(sizes.get(dim), int) else None for dim in dims]
        )
        joined[name] = value
    return joined
