"""The root of the SDK's Python errors.

Every error the compiler, the backends and the developer tools raise for a
user's model, program or file derives from `ExportError`, so one
`except ExportError` clause catches them all; `error_type` says which kind of
mistake it was. Each subclass also keeps the built-in base it had
(`ValueError` or `RuntimeError`), so existing handlers still match.

The code generator under `codegen/` is a build tool that needs only PyYAML,
so its errors stay outside this hierarchy.
"""

from enum import Enum
from typing import Optional, Union


class ExportErrorType(Enum):
    """What kind of user mistake an `ExportError` reports (upstream's
    names and values)."""

    INVALID_INPUT_TYPE = 1  # an input (model, file, argument) is malformed
    INVALID_OUTPUT_TYPE = 2  # the model returns something unsupported
    VIOLATION_OF_SPEC = 3  # the input breaks a documented rule or limit
    NOT_SUPPORTED = 4  # the input uses something the SDK does not handle
    MISSING_PROPERTY = 5  # something the SDK needs was not provided
    UNINITIALIZED = 6  # an API was used before its setup step


class ExportError(Exception):
    """An error caused by the user's model, program, file or API use.

    `ExportError(ExportErrorType.NOT_SUPPORTED, "msg")` reads
    "[ExportErrorType.NOT_SUPPORTED]: msg", as upstream's does. Subclasses
    are raised with just a message, which is kept unchanged; their class
    attribute `error_type` gives the kind.
    """

    error_type: ExportErrorType = ExportErrorType.VIOLATION_OF_SPEC

    def __init__(
        self, error_type_or_message: Union[ExportErrorType, str, None] = None, message: Optional[str] = None
    ) -> None:
        if isinstance(error_type_or_message, ExportErrorType):
            self.error_type = error_type_or_message
            super().__init__(f"[{error_type_or_message}]: {message or ''}")
        elif error_type_or_message is None:
            super().__init__()
        else:
            super().__init__(error_type_or_message)


class InternalError(Exception):
    """An invariant of the compiler itself broke: a bug to report, not a
    mistake in the user's program."""


def internal_assert(condition: bool, message: str) -> None:
    """Raises `InternalError(message)` unless `condition` holds."""
    if not condition:
        raise InternalError(message)
