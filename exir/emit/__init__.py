"""Emission of planned graphs as `.pte` program objects."""

from ._emitter import (
    ConstantData,
    DelegateData,
    EmitError,
    EmittedMethod,
    InstructionSource,
    emit_constant_method,
    emit_method,
)

__all__ = [
    "ConstantData",
    "DelegateData",
    "EmitError",
    "EmittedMethod",
    "InstructionSource",
    "emit_constant_method",
    "emit_method",
]
