"""A dense reference for the copy mixture: the copy mass summed into a full matrix."""

from keras import ops


def scatter_rows(values, ids, width):
    """Sum values (N, K) into a (N, width) matrix at columns ids (N, K)."""
    rows = ops.shape(values)[0]
    offsets = ops.arange(rows)[:, None] * width
    flat = ops.segment_sum(
        ops.reshape(values, (-1,)),
        ops.reshape(ids + offsets, (-1,)),
        num_segments=rows * width,
    )
    return ops.reshape(flat, (rows, width))
