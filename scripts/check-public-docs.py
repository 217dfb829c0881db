#!/usr/bin/env python3
"""Every public declaration in Sources/ has a `///` documentation line above it (its attributes may sit between).

Prints each one that has none, as FILE:LINE: declaration, and exits 1 when there is any (docs/DEVELOPMENT.md).
`public import` and `public extension` lines are not declarations of their own and are skipped.
"""
import glob
import re
import sys

KEYWORDS = r"(func|var|let|init|class|struct|enum|protocol|typealias|subscript|case|static|final|override|convenience|required|mutating|nonmutating|indirect|lazy|weak|unowned|actor|deinit|private|internal|package|fileprivate|public|open|consuming|borrowing|nonisolated|dynamic)"
DECLARATION = re.compile(r"(@\w+(\(.*?\))?\s+)*(public|open)\s+(\w+\s+)*?" + KEYWORDS + r"\b")


def missing(paths):
    for path in paths:
        lines = open(path, encoding="utf-8").read().split("\n")
        for index, line in enumerate(lines):
            text = line.strip()
            if not DECLARATION.match(text) or re.match(r"public\s+(import|extension)\b", text):
                continue
            above = index - 1
            while above >= 0 and lines[above].strip().startswith("@"):
                above -= 1
            if above >= 0 and lines[above].strip().startswith("///"):
                continue
            yield f"{path}:{index + 1}: {text[:100]}"


def main():
    found = list(missing(sorted(glob.glob("Sources/**/*.swift", recursive=True))))
    for entry in found:
        print(entry)
    if found:
        print(f"check-public-docs: {len(found)} public declarations without a /// line", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
