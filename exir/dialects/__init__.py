"""EXIR dialects (`executorch.exir.dialects._ops.ops.edge`)."""
