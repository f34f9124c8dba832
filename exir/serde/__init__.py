"""Saving and loading Edge dialect programs (serialize.py)."""
