"""Emission of planned graphs as `.pte` program objects."""

from ._emitter import (
    ConstantData,
    EmitError,
    EmittedMethod,
    InstructionSource,
    emit_constant_method,
    emit_method,
)

__all__ = [
    "ConstantData",
    "EmitError",
    "EmittedMethod",
    "InstructionSource",
    "emit_constant_method",
    "emit_method",
]
