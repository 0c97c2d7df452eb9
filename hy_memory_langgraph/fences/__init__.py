"""Text from users inside our own markup, kept as data by construction.

Recalled memories reach an agent's prompt, and conversations reach the write prompts,
inside our markup. Whoever wrote that text could try to end the markup early and write
instructions after it, or smuggle what a reader does not see. So every rendering of
users' text for a model:

* puts it in a data region (:func:`fence`) whose markers carry a fresh random nonce and
  whose header names that nonce;
* writes every memory, message or field as one JSON value per line (:func:`literal`):
  no raw line break, no raw ``<``, so no text can produce the closing line or any tag,
  however it is spelled;
* drops invisible characters and defuses chat templates' control tokens in every
  string (:func:`clean`; the tokens are data, per model family, in
  ``control_tokens.toml``).

:func:`read_fences` reads a rendering back.
"""

from hy_memory_langgraph.fences.blocks import (
    Fence,
    closing,
    fence,
    literal,
    new_nonce,
    opening,
    read_fences,
)
from hy_memory_langgraph.fences.text import clean, defuse_control_tokens, drop_invisible

