"""The write graph (``client.add``): validate and normalise, decide the scene (without a
model where possible, else one judge call), strip tool traces for chat, hand over to the
chat or productivity family. :mod:`.state`, :mod:`.nodes`, :mod:`.graph`."""
