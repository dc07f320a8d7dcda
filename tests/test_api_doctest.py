"""The Example in `mtn_keras.load`'s docstring runs as written, on the bundled model."""

import doctest

import pytest


@pytest.mark.slow
def test_the_client_examples_run():
    import mtn_keras.client

    failed, tried = doctest.testmod(mtn_keras.client, raise_on_error=False, verbose=False)
    assert tried > 0 and failed == 0
