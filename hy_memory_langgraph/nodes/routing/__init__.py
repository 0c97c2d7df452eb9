"""Nodes of the write and search graphs that validate input and choose the scene."""
