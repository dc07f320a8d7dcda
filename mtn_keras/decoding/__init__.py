"""Decoding of next-query suggestions: beam search over a step function."""

from mtn_keras.decoding.beam_search import beam_search

__all__ = ["beam_search"]
