#!/usr/bin/env python3
"""Summaries for the VM scenarios (Python 3 standard library).

  csvstat.py csv FILE [--skip S] [--head S | --tail S] [--where EXPR]
      FILE is `coremotion stream --format csv` output (header `timestamp,x,y,z`, `# sensor=…`
      comment, rows). Prints: ROWS MEAN_X MEAN_Y MEAN_Z RATE_HZ MIN_DT MAX_DT BACKWARDS
      (rate = (rows - 1) / time span; dt in seconds; backwards = timestamps not increasing).
      --skip S drops the rows of the first S seconds; --head S / --tail S keep the rows of the
      first / last S seconds of the file's own time.
      --where keeps rows for which the Python expression over x, y, z, t is true (e.g. 'y < -0.5').
  csvstat.py log FILE EVENT [FIELD=VALUE ...] --get KEY
      FILE is a device program's --log (JSON lines). Prints KEY of the last record of EVENT whose
      fields match, or `none`.
  csvstat.py count-log FILE EVENT [FIELD=VALUE ...] [--after-t T]
      Prints how many records of EVENT match.
"""

import json
import sys


def rows_of(path):
    out = []
    cols = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(",")
            if cols is None and not _is_number(parts[0]):
                cols = parts
                continue
            if cols is None:
                cols = ["timestamp", "x", "y", "z"][:len(parts)]
            try:
                rec = dict(zip(cols, (float(p) for p in parts)))
            except ValueError:
                continue
            out.append(rec)
    return out


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def cmd_csv(argv):
    path = argv[0]
    head = tail = skip = None
    where = None
    i = 1
    while i < len(argv):
        if argv[i] == "--head":
            head = float(argv[i + 1]); i += 2
        elif argv[i] == "--tail":
            tail = float(argv[i + 1]); i += 2
        elif argv[i] == "--skip":
            skip = float(argv[i + 1]); i += 2
        elif argv[i] == "--where":
            where = argv[i + 1]; i += 2
        else:
            raise SystemExit("csvstat: unknown option " + argv[i])
    try:
        rows = rows_of(path)
    except OSError:
        rows = []
    if rows and skip is not None:
        t0 = rows[0]["timestamp"]
        rows = [r for r in rows if r["timestamp"] - t0 >= skip]
    if rows and head is not None:
        t0 = rows[0]["timestamp"]
        rows = [r for r in rows if r["timestamp"] - t0 <= head]
    if rows and tail is not None:
        t1 = rows[-1]["timestamp"]
        rows = [r for r in rows if t1 - r["timestamp"] <= tail]
    if where:
        code = compile(where, "--where", "eval")
        rows = [r for r in rows if eval(code, {}, {"x": r.get("x", 0), "y": r.get("y", 0), "z": r.get("z", 0),
                                                     "t": r.get("timestamp", 0)})]
    n = len(rows)
    if n == 0:
        print("0 nan nan nan 0 0 0 0")
        return
    mean = [sum(r.get(k, 0.0) for r in rows) / n for k in ("x", "y", "z")]
    ts = [r["timestamp"] for r in rows]
    dts = [b - a for a, b in zip(ts, ts[1:])]
    span = ts[-1] - ts[0]
    rate = (n - 1) / span if span > 0 else 0.0
    backwards = sum(1 for d in dts if d <= 0)
    print("%d %.4f %.4f %.4f %.2f %.4f %.4f %d" % (n, mean[0], mean[1], mean[2], rate,
                                                  min(dts) if dts else 0, max(dts) if dts else 0, backwards))


def log_records(path, event, filters, after_t=None):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") != event:
                    continue
                if after_t is not None and rec.get("t", 0) < after_t:
                    continue
                if all(str(rec.get(k)) == v for k, v in filters):
                    out.append(rec)
    except OSError:
        pass
    return out


def parse_filters(args):
    filters, rest = [], {}
    i = 0
    while i < len(args):
        if args[i].startswith("--"):
            rest[args[i][2:]] = args[i + 1]; i += 2
        else:
            k, v = args[i].split("=", 1); filters.append((k, v)); i += 1
    return filters, rest


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    if argv[1] == "csv":
        cmd_csv(argv[2:])
    elif argv[1] == "log":
        filters, rest = parse_filters(argv[4:])
        recs = log_records(argv[2], argv[3], filters)
        print(recs[-1].get(rest.get("get"), "none") if recs else "none")
    elif argv[1] == "count-log":
        filters, rest = parse_filters(argv[4:])
        after = float(rest["after-t"]) if "after-t" in rest else None
        print(len(log_records(argv[2], argv[3], filters, after)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
