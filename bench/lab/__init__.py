"""Ranking experiments measured against the shipped chat search and not shipped.

The recall harness (:mod:`bench.common.harness`) ranks with the library's own code for
everything the library ships, and with these modules for the rest:

* :mod:`.fusion`: reciprocal-rank, z-score, rank-percentile and raw-max fusion beside the
  shipped min-max fusion, mapped onto [0, 1] for the library's ranking steps;
* :mod:`.expansion`: query-term statistics: dropping common query terms and
  pseudo-relevance feedback (RM3 style);
* :mod:`.hop`: the second hop for multi-hop questions (the top results as new queries);
* :mod:`.stemming`: the English Snowball stemmer (PyStemmer) in place of the library's;
* :mod:`.reactions`: lite turns that only react to the message before them, to carry or
  weigh them like question-only turns.

``bench/NOTES.md`` says what each one measured and why it is not shipped.
"""
