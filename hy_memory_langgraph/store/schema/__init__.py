"""The memory store's tables and their migration history (:mod:`.tables`)."""
