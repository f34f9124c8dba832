"""ETDump: the runtime's record of a run (profiling events, allocations and
logged values), in upstream ExecuTorch's format. Written on the device by
ETDumpGen (etdump_gen.h); read here (serialize.py) into the dataclasses of
schema_flatcc.py."""
