"""Llama-architecture LLMs and their export (upstream ExecuTorch's
`examples.models.llama`)."""
