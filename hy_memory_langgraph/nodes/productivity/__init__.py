"""Nodes of the productivity scenes (working, coding): dual-layer write, search, chain."""
