"""Keras layers shared by the models: MTN's hierarchical encoder parts (the history reader
of its third level among them) and the copy head."""

from mtn_keras.layers.copy_head import CopyHead
from mtn_keras.layers.history_reader import HistoryReader
from mtn_keras.layers.query_projection import QueryProjection
from mtn_keras.layers.session_encoder import MaskedSessionEncoder, SessionAddNorm

__all__ = ["CopyHead", "HistoryReader", "MaskedSessionEncoder", "QueryProjection", "SessionAddNorm"]
