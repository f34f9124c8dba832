"""Verifiers of EXIR programs."""
