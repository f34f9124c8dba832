"""Module rewrites applied to an LLM before export (custom KV caches, ...)."""
