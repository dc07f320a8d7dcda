"""Keras layers shared by the models: MTN's hierarchical encoder parts and the copy head."""

from mtn_keras.layers.copy_head import CopyHead
from mtn_keras.layers.query_projection import QueryProjection
from mtn_keras.layers.session_encoder import MaskedSessionEncoder, SessionAddNorm

__all__ = ["CopyHead", "MaskedSessionEncoder", "QueryProjection", "SessionAddNorm"]
