"""The memory store's tables: :mod:`.tables` today, :mod:`.v1` and :mod:`.v3` frozen as
the migrations that created them."""
