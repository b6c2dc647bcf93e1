"""tdsl tune: search compile strategies for the fastest one that passes numerics."""
