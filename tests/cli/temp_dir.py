"""A scratch folder for a CLI script test: removed when the test passes, kept
and named when it fails, so a failure's files can be looked at."""

from __future__ import annotations

import shutil
import tempfile
from typing import Callable


def run_in_temp_dir(prefix: str, checks: Callable[[str], int]) -> int:
    """checks(folder) -> exit status; the folder is removed when that is 0."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    rc = checks(tmp)
    if rc == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"files kept in {tmp}")
    return rc
