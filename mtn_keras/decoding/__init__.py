"""Decoding of next-query suggestions: beam search and greedy search over a step function."""

from mtn_keras.decoding.beam_search import beam_search, greedy_search

__all__ = ["beam_search", "greedy_search"]
