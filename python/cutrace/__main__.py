"""``python -m cutrace ARGS``: the ``cutrace`` command."""

import sys

from ._cli import main

sys.exit(main())
