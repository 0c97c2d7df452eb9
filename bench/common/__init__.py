"""What the benchmark scripts share.

* :mod:`.paths`: where the data sets live (never copied into the repository);
* :mod:`.locomo`: the LoCoMo reader and the one text a turn is written as;
* :mod:`.corpora`: LoCoMo and BFCL as corpora of memories and questions;
* :mod:`.harness`: the in-process recall harness (search variants, recall@k, folds);
* :mod:`.embed_cache`: an on-disk cache of benchmark embeddings;
* :mod:`.lite_rules`: lite-mode storage rules replayed on a corpus;
* :mod:`.secret_corpus` / :mod:`.secret_heldout`: generated secrets, tuning and held-out.
"""
