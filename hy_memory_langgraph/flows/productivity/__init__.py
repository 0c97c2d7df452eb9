"""Working and coding memory: the dual-layer write (experiences and a fact from one
extraction, reconciles, progress summary, version chain) and its search. :mod:`.state`,
the nodes by stage, :mod:`.graph`."""
