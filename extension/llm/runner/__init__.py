"""The LLM text runner and tokenizers (C++), with the names upstream's
``executorch.extension.llm.runner`` uses: ``TextLLMRunner``,
``GenerationConfig``, ``Stats``; and ``load_tokenizer`` / ``Tokenizer``
(Hugging Face tokenizer.json, SentencePiece, tiktoken)."""

from executorch.extension.llm.runner._llm_runner import (  # noqa: F401
    GenerationConfig,
    load_tokenizer,
    Stats,
    TextLLMRunner,
    Tokenizer,
    TokenizerError,
)
