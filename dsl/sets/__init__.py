"""Strategy sets: rules joining the strategy model and targets, loading and writing set files, and
tuning spaces (a set with knobs)."""
