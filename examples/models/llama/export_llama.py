"""python -m executorch.examples.models.llama.export_llama --help"""

import sys

from executorch.examples.models.llama.export_llama_lib import (
    build_args_parser,
    export_llama,
)


def main(argv=None) -> None:
    args = build_args_parser().parse_args(argv)
    print(export_llama(args))


if __name__ == "__main__":
    main(sys.argv[1:])
