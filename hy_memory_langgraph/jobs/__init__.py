"""Background writes kept durably: the queue (:mod:`.queue`) of prepared writes in the
memory's database, what a queued write looks like stored (:mod:`.codec`), the turns a
search sees of it (:mod:`.pending`), the checkpoints of the runs that process it
(:mod:`.checkpoints`) and the leases of the workers (:mod:`.lease`). The worker itself
runs the write graph: :mod:`hy_memory_langgraph.client.background`."""
