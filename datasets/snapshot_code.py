#!/usr/bin/env python3
"""Writes the project's own source at one commit as training text: datasets/train/code-<commit>.txt.

Every *.java and *.md file of the commit (read from git, not from the working tree), sorted by
path, each under a header line `=== Language: path ===` like the code files of the eval and calib
splits. datasets/ itself is left out: its texts are the corpus, and the train split must share
nothing with the evaluation and calibration splits (check_overlap.py verifies it).

    python3 datasets/snapshot_code.py 9ee55b0      # then: check_overlap.py, make_manifest.py
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
LANGUAGES = {".java": "Java", ".md": "Markdown"}


def git(*args):
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True).stdout


def snapshot(commit):
    full = git("rev-parse", "--verify", commit + "^{commit}").decode().strip()
    short = full[:7]
    paths = sorted(p for p in git("ls-tree", "-r", "--name-only", full).decode().splitlines()
                   if Path(p).suffix in LANGUAGES and not p.startswith("datasets/"))
    parts = []
    for p in paths:
        text = git("show", f"{full}:{p}").decode("utf-8")
        if not text.endswith("\n"):
            text += "\n"
        parts.append(f"=== {LANGUAGES[Path(p).suffix]}: {p} ===\n{text}")
    out = ROOT / "train" / f"code-{short}.txt"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {out.relative_to(REPO)}: {len(paths)} files of commit {full}, {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(snapshot(sys.argv[1]))
