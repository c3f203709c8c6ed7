"""Loading spaCy pipelines without PyTorch.

spaCy's numeric layer (thinc) imports PyTorch when it is installed, only to offer models
that run on it; the pipelines used here (`en_core_web_sm`) run on numpy. PyTorch's import
costs 1.5-2 s, most of a cold `neorag ask` once the query encoder runs from its ONNX export.
So when PyTorch is not loaded yet, thinc is imported with PyTorch hidden: it then records
that PyTorch is absent, for this process, and the spaCy pipelines load and run exactly as
before. A process that imports PyTorch later (an ingest's embedding model) gets it as
usual; only thinc's own PyTorch wrappers, which no pipeline here uses, stay off.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language


def load(model: str, **kwargs: Any) -> Language:
    """`spacy.load(model, **kwargs)`, importing spaCy without PyTorch if it is not loaded."""
    if "thinc" not in sys.modules and "torch" not in sys.modules:
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` fails
        try:
            import spacy  # imports thinc, which now records "no torch"
        finally:
            del sys.modules["torch"]
    import spacy

    return spacy.load(model, **kwargs)
