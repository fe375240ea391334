#!/usr/bin/env python3
"""Checks the text corpus for repetition and for eval/calib leakage.

1. No stripped line longer than 40 characters occurs more than once across all files.
2. No 8-token sequence (tokens = whitespace-separated words) appears in both an
   evaluation file and a calibration file (applied to every file).
3. No 12-character sequence (whitespace removed) appears in both an evaluation
   file and a calibration file, for the Chinese files (each zh file is compared
   against every file of the other purpose).

Exits 1 and prints the offending text when a check fails. Run from anywhere:
    python3 datasets/check_overlap.py
"""

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
KINDS = ("en-prose", "code", "zh-prose")
WORD_N = 8
CHAR_N = 12
LINE_MIN = 40


def files(purpose):
    return {k: ROOT / purpose / f"{k}.txt" for k in KINDS}


def word_ngrams(text, n=WORD_N):
    toks = text.split()
    return {" ".join(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def char_ngrams(text, n=CHAR_N):
    s = "".join(text.split())
    return {s[i:i + n] for i in range(len(s) - n + 1)}


def main():
    ev, ca = files("eval"), files("calib")
    texts = {p: p.read_text(encoding="utf-8") for p in list(ev.values()) + list(ca.values())}
    failures = 0

    seen = defaultdict(list)
    for p, t in texts.items():
        for no, line in enumerate(t.splitlines(), 1):
            s = line.strip()
            if len(s) > LINE_MIN:
                seen[s].append(f"{p.relative_to(ROOT)}:{no}")
    dup_lines = {s: w for s, w in seen.items() if len(w) > 1}
    for s, where in dup_lines.items():
        print(f"repeated line ({len(where)}x) {where}: {s[:80]}")
    failures += len(dup_lines)
    print(f"[lines>{LINE_MIN} chars repeated] {len(dup_lines)}")

    calib_words = set().union(*(word_ngrams(texts[p]) for p in ca.values()))
    shared_words = 0
    for p in ev.values():
        for g in sorted(word_ngrams(texts[p]) & calib_words):
            print(f"shared {WORD_N}-word sequence ({p.name}): {g}")
            shared_words += 1
    failures += shared_words
    print(f"[{WORD_N}-word sequences shared eval/calib] {shared_words}")

    zh_eval = char_ngrams(texts[ev["zh-prose"]])
    zh_calib = char_ngrams(texts[ca["zh-prose"]])
    all_eval = set().union(*(char_ngrams(texts[p]) for p in ev.values()))
    all_calib = set().union(*(char_ngrams(texts[p]) for p in ca.values()))
    shared_chars = sorted((zh_eval & all_calib) | (zh_calib & all_eval))
    for g in shared_chars:
        print(f"shared {CHAR_N}-char sequence: {g}")
    failures += len(shared_chars)
    print(f"[{CHAR_N}-char sequences shared eval/calib, Chinese files] {len(shared_chars)}")

    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
