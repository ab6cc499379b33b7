"""The viewpoint codes kept per graph store: freed with the store, shared safely by threads."""

from __future__ import annotations

import gc
import threading
import weakref

from vlneval.evaluation import Scorer, evaluate
from vlneval.tasks.common import predictions
from vlneval.tasks.common.root import demo_root

DEMO = demo_root() / "demo" / "predictions_val.json"


def test_a_scorers_graph_store_is_freed_with_it() -> None:
    scorer = Scorer("demo")
    scorer.score(DEMO)
    store = weakref.ref(scorer.graphs)
    assert scorer.graphs in predictions._CODES
    del scorer
    gc.collect()
    assert store() is None  # the codes do not keep their store alive


def test_repeated_evaluate_calls_do_not_accumulate_stores() -> None:
    gc.collect()
    before = len(predictions._CODES)
    for _ in range(5):
        evaluate("demo", None, DEMO)
    gc.collect()
    assert len(predictions._CODES) == before


def test_threads_sharing_a_scorer_get_the_same_numbers() -> None:
    scorer = Scorer("demo")
    want = scorer.score(DEMO).metrics
    shared = Scorer("demo")  # a new store: its scans are coded by the racing threads
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(shared.score(DEMO).metrics))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 8
