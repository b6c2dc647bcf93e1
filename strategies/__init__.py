"""Ready strategies, per target: tdsl.strategies.cpu and tdsl.strategies.gpu."""
