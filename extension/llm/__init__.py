"""LLM support: tokenizers, the text runner and its Python bindings."""
