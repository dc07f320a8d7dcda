"""Tiny untrained models (vocabulary V, n = N tokens per query), built once per test run
and shared by the tests that only read them: building one costs about a second."""

import functools

from mtn_keras.base.config import preset
from mtn_keras.models import build_model

V, N = 30, 4  # vocabulary size, tokens per query


def tiny_config(copy=True):
    config, _ = preset("tiny")
    config.vocab_size, config.max_query_tokens, config.copy = V, N, copy
    return config


def fresh(name, copy=True):
    """A new tiny model, for a test that changes its weights."""
    model = build_model(name, tiny_config(copy))
    model.build()
    return model


@functools.cache
def shared(name, copy=True):
    """The tiny model of `name` shared by every test that does not change it."""
    return fresh(name, copy)
