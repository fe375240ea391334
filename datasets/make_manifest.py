#!/usr/bin/env python3
"""Writes datasets/manifest.json from the text files as they are on disk.

Each entry records the byte length and SHA-256 of one file; `path` is relative to
the directory that holds manifest.json (this directory). Run after any edit:

    python3 datasets/make_manifest.py          # rewrite manifest.json
    python3 datasets/make_manifest.py --check  # exit 1 if manifest.json is stale
"""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
MANIFEST = ROOT / "manifest.json"

DESCRIPTIONS = {
    ("en-prose", "evaluation"): "English prose for perplexity/KL evaluation: essays, short fiction, "
        "technical explanations, how-to guides, dialogue, letters and news-style reports of fictional events.",
    ("code", "evaluation"): "Source code for perplexity/KL evaluation: commented Java, Python, C, Rust, Go, "
        "SQL, shell, JavaScript, Makefile, Dockerfile, YAML and JSON programs and configs.",
    ("zh-prose", "evaluation"): "Chinese prose (Mandarin, simplified characters) for perplexity/KL evaluation: "
        "essays, stories, popular science, how-to guides, dialogue, letters and fictional news reports.",
    ("en-prose", "calibration"): "English prose for importance-matrix calibration, on topics disjoint from "
        "the evaluation text: essays, fiction, explanations, guides, dialogue, letters and fictional news.",
    ("code", "calibration"): "Source code for importance-matrix calibration, programs disjoint from the "
        "evaluation text: Java, Python, C, Rust, Go, SQL, shell, TypeScript, YAML, JSON and TOML.",
    ("zh-prose", "calibration"): "Chinese prose (Mandarin, simplified characters) for importance-matrix "
        "calibration, on topics disjoint from the evaluation text.",
}

PURPOSES = (("eval", "evaluation"), ("calib", "calibration"))
TRAIN_DESCRIPTIONS = {
    "en-prose": "English prose for training (qlab train): stories, explanations, dialogue, letters, essays and "
        "fictional news, written for this project, sharing nothing with the evaluation and calibration text.",
    "code": "The project's own *.java and *.md files at one commit (datasets/snapshot_code.py), for training "
        "(qlab train).",
}
KINDS = ("en-prose", "code", "zh-prose")


def entries():
    out = []
    for folder, purpose in PURPOSES:
        for kind in KINDS:
            rel = f"{folder}/{kind}.txt"
            data = (ROOT / rel).read_bytes()
            data.decode("utf-8")  # fail loudly on invalid UTF-8
            out.append({
                "name": f"{kind}-{folder}",
                "path": rel,
                "kind": kind,
                "purpose": purpose,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "description": DESCRIPTIONS[(kind, purpose)],
            })
    for path in sorted((ROOT / "train").glob("*.txt")):
        rel = path.relative_to(ROOT).as_posix()
        data = path.read_bytes()
        data.decode("utf-8")
        kind = "code" if path.name.startswith("code-") else path.stem
        entry = {
            "name": f"{path.stem}-train" if kind != "code" else f"code-train-{path.stem[len('code-'):]}",
            "path": rel,
            "kind": kind,
            "purpose": "training",
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "description": TRAIN_DESCRIPTIONS[kind],
        }
        if kind == "code":
            entry["commit"] = full_commit(path.stem[len("code-"):])
        out.append(entry)
    return out


def full_commit(short):
    """The full hash of the commit a code snapshot was taken at (its file name carries the short one)."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", short + "^{commit}"],
                          check=True, capture_output=True, text=True).stdout.strip()


def render(items):
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


def main(argv):
    text = render(entries())
    if "--check" in argv:
        current = MANIFEST.read_text(encoding="utf-8") if MANIFEST.exists() else ""
        if current != text:
            print("manifest.json is out of date; run make_manifest.py", file=sys.stderr)
            return 1
        print("manifest.json matches the files")
        return 0
    MANIFEST.write_text(text, encoding="utf-8")
    total = sum(e["bytes"] for e in json.loads(text))
    print(f"wrote {MANIFEST.name}: {len(json.loads(text))} files, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
