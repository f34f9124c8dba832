import os
import sys

# Test helpers (program_interpreter) live beside the tests.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
