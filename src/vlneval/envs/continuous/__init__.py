"""The continuous family: continuous worlds, discrete steps, velocities or waypoints (``ContinuousNavEnv``)."""
