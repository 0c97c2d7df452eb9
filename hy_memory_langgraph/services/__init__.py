"""What the graph families call, below them: the run-time context every node receives
(:mod:`.context`), model calls that answer JSON (:mod:`.llm`), and the planning of lite
chat turns (:mod:`.turns`)."""
