"""BundledProgram: a program bundled with test cases (.bpte)."""
