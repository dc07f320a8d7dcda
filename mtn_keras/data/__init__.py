"""Query logs to prepared session datasets: reading, cleaning, sessionizing, encoding.

Pure Python and numpy; only `mtn_keras.data.pipeline` imports TensorFlow.
"""
