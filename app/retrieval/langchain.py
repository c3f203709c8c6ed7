"""neorag as a langchain-core retriever, for use in people's own chains.

    from app.retrieval.langchain import NeoragRetriever
    retriever = NeoragRetriever.from_settings(Settings(), mode="default")
    docs = retriever.invoke("When did Lothair II's mother die?")

Each Document is one context chunk; metadata carries what a citation needs: chunk and
document ids, title, section path, source, community, the fused score and per-signal
scores, and the chunk's rank.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from app.engine import Engine, open_engine
from app.retrieval.base import RetrievalResult
from app.settings import Settings


def to_documents(result: RetrievalResult) -> list[Document]:
    scored = {s.chunk_id: s for s in result.ranking}
    docs = []
    for rank, chunk in enumerate(result.context, start=1):
        s = scored.get(chunk.id)
        docs.append(
            Document(
                page_content=chunk.text,
                metadata={
                    "chunk_id": chunk.id,
                    "doc_id": chunk.doc_id,
                    "title": chunk.title,
                    "section_path": list(chunk.section_path),
                    "source": chunk.source,
                    "community": chunk.community,
                    "rank": rank,
                    "score": s.score if s else None,
                    "signals": dict(s.signals) if s else {},
                    "mode": result.mode,
                },
            )
        )
    return docs


class NeoragRetriever(BaseRetriever):
    engine: Any
    mode: str = "default"
    top_k: int | None = None
    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def from_settings(cls, settings: Settings, mode: str = "default", **kw: Any) -> NeoragRetriever:
        return cls(engine=open_engine(settings), mode=mode, **kw)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        engine: Engine = self.engine
        engine.refresh()
        result = engine.retriever(self.mode).retrieve(query, top_k=self.top_k)
        return to_documents(result)
