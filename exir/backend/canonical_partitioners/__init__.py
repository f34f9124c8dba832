"""Partitioning helpers shared by backends (upstream's module paths)."""
