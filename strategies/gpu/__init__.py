"""gfx942 strategy library (MFMA configurations, full TD strategy) and its chooser."""
