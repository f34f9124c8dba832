"""Extensions of the runtime: data loaders, memory allocators, Python bindings."""
