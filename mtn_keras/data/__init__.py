"""Query logs to prepared session datasets: reading, cleaning, sessionizing, encoding.

Pure Python and numpy, so that `train` runs under JAX without TensorFlow; only a subword
`prepare` imports it (keras-hub's WordPiece vocabulary, in `wordpiece`).
"""
