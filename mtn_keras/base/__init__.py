"""What every room of the package may use: hyperparameters, crash-safe writing, quiet
TensorFlow, process settings for entry points, tf.distribute helpers and scoped state."""
