"""Helpers for exporting to the XNNPACK delegate (upstream's module paths)."""
