"""bm25s side of the knowledge-base benchmark, driven by benches/kb.rs.

Usage: kb_bm25s.py CORPUS.jsonl QUERIES.jsonl TOP_K OUT.json

CORPUS lines are {"id": str, "text": str}; QUERIES lines are {"text": str}.
Settings as the Cranfield reference figure: English stop words, Snowball
English stemmer, k1=1.5, b=0.75. Writes {"index_seconds", "latencies_ms",
"rankings", "max_rss_mb"} (document ids per query, best first); metrics are computed by the
Rust side so both engines are scored by the same code.
"""

import json
import resource
import sys
import time

import bm25s
import Stemmer


def main() -> None:
    corpus_path, queries_path, top_k, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(corpus_path, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    with open(queries_path, encoding="utf-8") as f:
        queries = [json.loads(line)["text"] for line in f]
    ids = [d["id"] for d in docs]
    stemmer = Stemmer.Stemmer("english")

    start = time.perf_counter()
    tokens = bm25s.tokenize([d["text"] for d in docs], stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index(tokens, show_progress=False)
    index_seconds = time.perf_counter() - start

    k = min(top_k, len(docs))
    latencies, rankings = [], []
    for q in queries:
        t = time.perf_counter()
        q_tokens = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        results, scores = retriever.retrieve(q_tokens, k=k, show_progress=False, n_threads=1)
        latencies.append((time.perf_counter() - t) * 1000.0)
        rankings.append([ids[i] for i, s in zip(results[0], scores[0]) if s > 0])
    with open(out_path, "w", encoding="utf-8") as f:
        max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        json.dump(
            {"index_seconds": index_seconds, "latencies_ms": latencies, "rankings": rankings, "max_rss_mb": max_rss_mb},
            f,
        )


main()
