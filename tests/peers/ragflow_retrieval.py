"""An MCP server that answers as RAGFlow's MCP server does, over stdio, for the tests.

    python ragflow_retrieval.py [--slow SECONDS] [--broken]

`ragflow_retrieval` takes the arguments of RAGFlow's tool (`mcp/server/server.py`: `question`,
`dataset_ids`, `document_ids`, `page`, `page_size`, `similarity_threshold`,
`vector_similarity_weight`, `keyword`, `top_k`, `rerank_id`, `force_refresh`) and answers its
JSON text: `{chunks, pagination, query_info}`, each chunk with the REST API's fields (`content`,
`document_id`, `document_keyword`, `dataset_id`, `similarity`, `term_similarity`,
`vector_similarity`, ...) plus the MCP server's `dataset_name` and `document_name`. The
"datasets" are two small handbooks kept here; a chunk's similarity is the share of the
question's words it holds. `--slow` waits before each answer; `--broken` answers with RAGFlow's
error text.
"""

import json
import re
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

DATASETS = {
    "9f2c4e1a7b3d4c5e8f6a0b1c2d3e4f50": "Fleet handbook",
    "1a2b3c4d5e6f708192a3b4c5d6e7f809": "Garden handbook",
}
CHUNKS = [
    ("9f2c4e1a7b3d4c5e8f6a0b1c2d3e4f50", "d1", "fleet-maintenance.pdf",
     "Every delivery van gets its brakes checked every 20,000 kilometres at the Oakridge depot."),
    ("9f2c4e1a7b3d4c5e8f6a0b1c2d3e4f50", "d2", "fleet-fuel.pdf",
     "Fuel cards are renewed each January; a lost card is reported to the fleet desk."),
    ("1a2b3c4d5e6f708192a3b4c5d6e7f809", "d3", "garden-roses.docx",
     "Prune the roses in late winter, just above an outward-facing bud."),
]

slow = float(sys.argv[sys.argv.index("--slow") + 1]) if "--slow" in sys.argv else 0.0
broken = "--broken" in sys.argv
server = MCPServer("ragflow-mcp-server")


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


@server.tool()
def ragflow_retrieval(
    question: str,
    dataset_ids: list[str] | None = None,
    document_ids: list[str] | None = None,
    page: int = 1,
    page_size: int = 10,
    similarity_threshold: float = 0.2,
    vector_similarity_weight: float = 0.3,
    keyword: bool = False,
    top_k: int = 1024,
    rerank_id: str | None = None,
    force_refresh: bool = False,
) -> str:
    """Retrieve relevant chunks from the RAGFlow retrieve interface based on the question."""
    if slow:
        time.sleep(slow)
    if broken:
        raise ToolError("Cannot process this operation.")
    asked = words(question)
    chunks = []
    for i, (dataset, document, name, content) in enumerate(CHUNKS):
        if dataset_ids and dataset not in dataset_ids or document_ids and document not in document_ids:
            continue
        similarity = len(asked & words(content)) / max(len(asked), 1)
        if similarity < similarity_threshold:
            continue
        chunks.append({
            "id": f"c{i}", "content": content, "content_ltks": content.lower(), "document_id": document,
            "document_keyword": name, "highlight": "", "image_id": "", "important_keywords": [""],
            "dataset_id": dataset, "kb_id": dataset, "positions": [""], "similarity": similarity,
            "term_similarity": similarity, "vector_similarity": similarity,
            "dataset_name": DATASETS[dataset], "document_name": name,
        })
    chunks.sort(key=lambda c: -c["similarity"])
    shown = chunks[(page - 1) * page_size: page * page_size]
    return json.dumps({
        "chunks": shown,
        "pagination": {"page": page, "page_size": page_size, "total_chunks": len(chunks),
                       "total_pages": (len(chunks) + page_size - 1) // page_size},
        "query_info": {"question": question, "similarity_threshold": similarity_threshold,
                       "vector_weight": vector_similarity_weight, "keyword_search": keyword,
                       "dataset_count": len(dataset_ids or DATASETS)},
    }, ensure_ascii=False)


server.run()
