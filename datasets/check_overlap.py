#!/usr/bin/env python3
"""Checks the text corpus for repetition and for eval/calib leakage.

1. No stripped line longer than 40 characters occurs more than once across all files.
2. No 8-token sequence (tokens = whitespace-separated words) appears in both an
   evaluation file and a calibration file (applied to every file).
3. No 12-character sequence (whitespace removed) appears in both an evaluation
   file and a calibration file, for the Chinese files (each zh file is compared
   against every file of the other purpose).
4. The training split (every file under train/) shares nothing with either: no
   8-word sequence of a training file occurs in an evaluation or calibration file
   (for the code snapshot against the held-out code files: no 16-word sequence;
   eight words of Java are often just an import block or a loop header, which any
   two programs share, while a passage taken over is longer), and no 12-character sequence of a Chinese evaluation or calibration file occurs
   in a training file. Within the training prose no line longer than 40
   characters repeats (source code repeats lines by nature, so the code snapshot
   is exempt from that one).

Exits 1 and prints the offending text when a check fails. Run from anywhere:
    python3 datasets/check_overlap.py
"""

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
KINDS = ("en-prose", "code", "zh-prose")
WORD_N = 8
CODE_WORD_N = 16
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


def train_files():
    return sorted((ROOT / "train").glob("*.txt"))


def check_train(texts, ev, ca):
    """Check 4: returns the number of failures."""
    failures = 0
    train = {p: p.read_text(encoding="utf-8") for p in train_files()}
    held_out = list(ev.values()) + list(ca.values())
    held_words = set().union(*(word_ngrams(texts[p]) for p in held_out))
    held_prose_words = set().union(*(word_ngrams(texts[p]) for p in held_out if p.stem != "code"))
    held_code_long = set().union(*(word_ngrams(texts[p], CODE_WORD_N) for p in held_out if p.stem == "code"))
    shared_words = 0
    for p, t in train.items():
        if p.name.startswith("code-"):
            shared = (word_ngrams(t) & held_prose_words) | (word_ngrams(t, CODE_WORD_N) & held_code_long)
        else:
            shared = word_ngrams(t) & held_words
        for g in sorted(shared):
            print(f"shared word sequence ({p.relative_to(ROOT)} and eval/calib): {g}")
            shared_words += 1
    print(f"[{WORD_N}-word ({CODE_WORD_N} code against code) sequences shared train/(eval, calib)] {shared_words}")
    failures += shared_words

    zh_held = char_ngrams(texts[ev["zh-prose"]]) | char_ngrams(texts[ca["zh-prose"]])
    shared_chars = 0
    for p, t in train.items():
        for g in sorted(char_ngrams(t) & zh_held):
            print(f"shared {CHAR_N}-char sequence ({p.relative_to(ROOT)} and a Chinese eval/calib file): {g}")
            shared_chars += 1
    print(f"[{CHAR_N}-char sequences shared train/Chinese (eval, calib)] {shared_chars}")
    failures += shared_chars

    repeated = 0
    for p, t in train.items():
        if p.name.startswith("code-"):
            continue
        seen = defaultdict(list)
        for no, line in enumerate(t.splitlines(), 1):
            s = line.strip()
            if len(s) > LINE_MIN:
                seen[s].append(no)
        for s, where in seen.items():
            if len(where) > 1:
                print(f"repeated line ({len(where)}x) {p.relative_to(ROOT)}:{where}: {s[:80]}")
                repeated += 1
    print(f"[lines>{LINE_MIN} chars repeated in the training prose] {repeated}")
    failures += repeated
    print(f"[training files] {len(train)}, {sum(len(t.encode('utf-8')) for t in train.values())} bytes")
    return failures


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

    failures += check_train(texts, ev, ca)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
