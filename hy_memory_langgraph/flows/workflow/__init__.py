"""Workflow memory: extraction of what a business-process agent should keep, and
saving it to the user's documents. :mod:`.state`, the nodes, :mod:`.graph`."""
