"""CompileSpec: one backend-specific compilation option."""

from dataclasses import dataclass


@dataclass
class CompileSpec:
    """A key and an opaque value handed to a backend's `preprocess` and
    stored with the delegate in the program (the runtime passes it to the
    backend's `init`)."""

    key: str
    value: bytes
