"""sentence-transformers side of the embedding benchmark, driven by benches/embed.rs.

Usage: embed_st.py MODEL_DIR TEXTS.jsonl OUT.json

TEXTS lines are {"text": str}. Encodes them on the CPU with the torch threads the machine has,
batch size 32, normalised, after a warm-up of 8 texts; writes {"seconds", "max_rss_mb",
"vectors"} so that the Rust side compares the vectors with its own.
"""

import json
import resource
import sys
import time

import torch
from sentence_transformers import SentenceTransformer


def main() -> None:
    model_dir, texts_path, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(texts_path, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    model = SentenceTransformer(model_dir, device="cpu")
    model.encode(texts[:8], batch_size=32)
    start = time.perf_counter()
    vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
    seconds = time.perf_counter() - start
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(
            {
                "seconds": seconds,
                "threads": torch.get_num_threads(),
                "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                "vectors": vectors.tolist(),
            },
            f,
        )


main()
