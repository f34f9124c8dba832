"""Reading and writing upstream ExecuTorch's flat tensor (.ptd) files."""
