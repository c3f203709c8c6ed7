"""Sentence-transformers model folders built here, offline, so a change of embedding model
can be tested without a second downloaded model: MiniLM's weights behind another head (a
Dense projection to 96 dimensions; CLS pooling at 384), and a tiny random MPNet (another
architecture, for the ONNX export), all saved with `model.save(path)`."""

from __future__ import annotations

from pathlib import Path

from ingest.embed import resolve_model_path

MINILM = "all-MiniLM-L6-v2"


def _minilm_transformer():  # a sentence-transformers Transformer module
    from sentence_transformers.sentence_transformer.modules import Transformer

    return Transformer(resolve_model_path(MINILM))


def save_projected(path: Path, dimension: int = 96) -> Path:
    """MiniLM, mean pooling, then a fixed random linear map to `dimension`, normalised."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize, Pooling

    torch.manual_seed(0)
    modules = [
        _minilm_transformer(),
        Pooling(384, "mean"),
        Dense(384, dimension, activation_function=torch.nn.Identity()),
        Normalize(),
    ]
    SentenceTransformer(modules=modules, device="cpu").save(str(path))
    return path


def save_cls_pooled(path: Path) -> Path:
    """MiniLM's weights and tokenizer with CLS pooling: 384 dimensions, other vectors."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling

    modules = [_minilm_transformer(), Pooling(384, "cls"), Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(path))
    return path


def save_tiny_mpnet(path: Path) -> Path:
    """A randomly initialised two-layer MPNet (32 dims) with a WordPiece tokenizer over
    MiniLM's vocabulary, mean pooled: MPNet's relative-position attention and a tokenizer
    without token_type_ids, at a size a test can afford."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizerFast

    torch.manual_seed(0)
    hf = path.parent / f"{path.name}-hf"
    tokenizer = MPNetTokenizerFast(
        tokenizer_file=str(Path(resolve_model_path(MINILM)) / "tokenizer.json"),
        bos_token="[CLS]",
        cls_token="[CLS]",
        eos_token="[SEP]",
        sep_token="[SEP]",
        unk_token="[UNK]",
        pad_token="[PAD]",
        mask_token="[MASK]",
    )
    config = MPNetConfig(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=130,
    )
    MPNetModel(config).eval().save_pretrained(hf)
    tokenizer.save_pretrained(hf)
    transformer = Transformer(str(hf), max_seq_length=128)
    modules = [transformer, Pooling(32, "mean")]
    SentenceTransformer(modules=modules, device="cpu").save(str(path))
    return path
