"""Python bindings of the runtime; see portable_lib."""
