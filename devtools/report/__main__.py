import sys

from executorch.devtools.report import main

sys.exit(main())
