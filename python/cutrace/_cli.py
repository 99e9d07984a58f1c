"""The ``cutrace`` console command: runs the CLI binary that the wheel holds,
in this process's place, so its exit status and signals are the program's."""

import os
import sys

from ._native import cli_path


def main():
    path = cli_path()
    if not os.access(path, os.X_OK):
        sys.stderr.write("cutrace: the cutrace binary is missing at %s; reinstall the package\n"
                         % path)
        return 1
    os.execv(path, [path] + sys.argv[1:])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
