"""MTN's query projection: one vector per query from its n zero-padded token codes."""

import keras
from keras import ops

from mtn_keras.layers.hints import Shape, Tensor


@keras.saving.register_keras_serializable(package="mtn_keras")
class QueryProjection(keras.layers.Layer):
    """A learned linear map over the n token positions, (..., n, d) -> (..., d).

    This is the paper's w_proj in R^n (not a mean): padded positions are zeroed first,
    so extra padding changes nothing. It starts as the uniform average 1/n.

    Call args:
        codes: float tensor (..., n, d), the query encoder's token codes.
        token_mask: bool tensor (..., n), True for real tokens.
    """

    def build(self, codes_shape: Shape, token_mask_shape: Shape | None = None) -> None:
        n = codes_shape[-2]
        assert n is not None, "the number of token positions must be known"
        self.w_proj = self.add_weight(
            name="w_proj", shape=(n,), initializer=keras.initializers.Constant(1.0 / n)
        )

    def call(self, codes: Tensor, token_mask: Tensor) -> Tensor:
        codes = codes * ops.cast(token_mask, codes.dtype)[..., None]
        return ops.einsum("...nd,n->...d", codes, ops.cast(self.w_proj, codes.dtype))

    def compute_output_shape(
        self, codes_shape: Shape, token_mask_shape: Shape | None = None
    ) -> Shape:
        return codes_shape[:-2] + codes_shape[-1:]
