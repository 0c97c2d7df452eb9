"""Nodes of the chat scene: the write subgraph (lite and pro) and hybrid search."""
