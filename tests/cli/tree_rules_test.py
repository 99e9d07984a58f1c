#!/usr/bin/env python3
"""The tree's size rule (issue 22): no .cc file over 450 lines in the
folders that hold the logic (collector/, analysis/, injection/, viewer_cli/,
interop/). A file that grows past it is a sign that it holds two ideas:
split it by idea, not by line count.

usage: tree_rules_test.py SOURCE_DIR
"""
import os
import sys

LIMIT = 450
FOLDERS = ("collector", "analysis", "injection", "viewer_cli", "interop")


def main():
    root = sys.argv[1]
    over, seen = [], 0
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith(".cc"):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = sum(1 for _ in f)
                seen += 1
                if lines > LIMIT:
                    over.append(f"{os.path.relpath(path, root)}: {lines} lines")
    if seen == 0:
        print(f"FAIL: no .cc files under {', '.join(FOLDERS)} in {root}")
        return 1
    for line in over:
        print(f"FAIL: {line} (over {LIMIT})")
    print(f"{'FAILED' if over else 'PASSED'}: {seen} .cc files, {len(over)} over {LIMIT} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
