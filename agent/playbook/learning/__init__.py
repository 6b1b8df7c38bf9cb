"""Learning from analysts' ground truth: Reflector (seed 001) and Curator, under human review."""
