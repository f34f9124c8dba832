"""Custom operators of the LLM flow (`llama::`): `custom_ops` registers them
with torch; their runtime kernels are the C++ files beside it."""
