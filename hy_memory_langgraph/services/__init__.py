"""What the graph families call, below them: the run-time context every node receives
(:mod:`.context`), model calls that answer JSON (:mod:`.llm`), the planning of lite
chat turns (:mod:`.turns`) and hybrid chat search (:mod:`.hybrid_search`)."""
