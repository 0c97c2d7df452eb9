"""Nodes of the workflow-memory extraction graph."""
