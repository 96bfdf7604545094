#!/usr/bin/env python3
"""Writes BROAD trials with their first SECONDS removed, so a filter starts mid-motion.

The shared trials begin at rest, where any filter learns its heading and its magnetic reference from a
still, undisturbed field. Held-out recordings (and real apps) start wherever they start: in motion, or
beside a magnet. Cutting the start off the shared trials reproduces that on data with ground truth:

    scripts/bench/broad-cut.py ../shared/data/broad 60 /tmp/cut60
    coremotion bench broad /tmp/cut60
    python3 ../shared/tools/broad_reference.py /tmp/cut60 --no-offline    # VQF on the same cut

Every other line is kept as it is (the header, and `t`, which the readers do not need to start at 0).
"""
import os
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: broad-cut.py TRIAL_DIR SECONDS OUT_DIR", file=sys.stderr)
        return 2
    source, out = sys.argv[1], sys.argv[3]
    try:
        seconds = float(sys.argv[2])
    except ValueError:
        print(f"broad-cut.py: SECONDS must be a number, not {sys.argv[2]!r}", file=sys.stderr)
        return 2
    if not seconds >= 0 or seconds > 86_400:
        print("broad-cut.py: SECONDS must be between 0 and 86400", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    written = 0
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if name.endswith(".json"):
            with open(path, "rb") as f, open(os.path.join(out, name), "wb") as g:
                g.write(f.read())
            continue
        if not name.endswith(".csv"):
            continue
        with open(path) as f:
            comment, header = f.readline(), f.readline()
            rate = None
            for part in comment.split(";"):
                key, _, value = part.strip().partition("=")
                if key == "sampling_rate_hz":
                    rate = float(value)
            if rate is None:
                print(f"broad-cut.py: {name}: no sampling_rate_hz in its first line", file=sys.stderr)
                return 1
            skip = int(seconds * rate)
            with open(os.path.join(out, name), "w") as g:
                g.write(comment)
                g.write(header)
                for i, line in enumerate(f):
                    if i >= skip:
                        g.write(line)
        written += 1
    print(f"{written} trials, first {seconds:g} s removed, in {out}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
