"""chain."""
