"""The demo backend and partitioners upstream's tutorials import
(`backend_with_compiler_demo`, `op_partitioner_demo`)."""
