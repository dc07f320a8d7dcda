"""Training the suggestion models with model.fit, and the run folders it writes and reads."""
