#!/usr/bin/env python3
"""Nested cross-validation of one filter parameter's default over several data sets, VQF beside it.

usage:
  nested-cv.py --data ../shared/data/broad --data DEV/fiumargdb \\
      --parameter magnetometerTimeConstant --values 3,5,9,15,25 [--measure causal_9d_total] \\
      [--outer trial|category|dataset] [--tolerance 0.01] [--coremotion .build/release/coremotion] \\
      [--cache FILE] [--json]

Every DIR holds BROAD compact CSV trials (../shared/data/broad, or the output of fiumargdb-to-broad.py).
A trial's category is its data set's name (groups.json's `dataset`, else the directory's) and its group: BROAD's motion or disturbance
group from trials.json (rotation, translation, combined, tapping, vibration, stationary_magnet,
attached_magnet), or groups.json's label for converted data sets.

1. Scores: `coremotion bench broad DIR --json --parameter NAME=V` for every value (the measure picks
   --no-magnetometer / --offline) and `broad_reference.py DIR --json` for VQF (offline VQF for offline
   measures): one figure per trial and value, with BROAD's metric (9D: total RMSE; 6D: inclination RMSE).
2. Outer folds hold out trials (one trial, one category or one data set at a time). Inside each outer
   fold, the inner folds (leave one training trial out) give every value its inner cross-validated error,
   and the value is chosen there: the lowest inner error among the admissible values, where a value is
   admissible when, on the training trials, no category's mean is worse than the current default's by
   more than --tolerance (relative; "a default change ships only if no category of trials gets worse").
   The default is always admissible. The held-out trials are then scored with the chosen value.
   (For a value that is not fitted to the training trials, a trial's inner held-out figure is its own
   score, so the inner error equals the training mean; the folds are kept explicit so that a procedure
   that does learn from the training trials plugs in unchanged.)
3. Report, per category and overall (a category's figure is the mean of its trials', the overall
   figure the mean of all trials): the outer-fold (nested cross-validated) error, the default's,
   VQF's, and what tuning on every trial would pick. Machine-readable with --json.
"""
import argparse, json, os, subprocess, sys

MEASURES = {  # name: (bench flags, VQF key in broad_reference.py's output, metric)
    'causal_9d_total': ([], 'vqf_9d', 'total'),
    'causal_6d_inclination': (['--no-magnetometer'], 'vqf_6d', 'inclination'),
    'offline_9d_total': (['--offline'], 'offline_vqf_9d', 'total'),
    'offline_6d_inclination': (['--no-magnetometer', '--offline'], 'offline_vqf_6d', 'inclination'),
}
BROAD_CATEGORIES = ['rotation', 'translation', 'combined', 'tapping', 'vibration', 'stationary_magnet',
                    'attached_magnet']
HERE = os.path.dirname(os.path.abspath(__file__))


def categories(directory, trials):
    """Trial name -> category ('dataset/group')."""
    ds = os.path.basename(os.path.normpath(directory))
    out = {t: f'{ds}/other' for t in trials}
    tj, gj = os.path.join(directory, 'trials.json'), os.path.join(directory, 'groups.json')
    if os.path.exists(tj):
        info = json.load(open(tj))['trials']
        for t in trials:
            g = info.get(t, {}).get('groups', [])
            out[t] = f'{ds}/' + next((c for c in BROAD_CATEGORIES if c in g), 'other')
    elif os.path.exists(gj):
        g = json.load(open(gj))
        ds = g.get('dataset', ds).lower()
        for t in trials:
            out[t] = f'{ds}/{g["trials"].get(t, "other")}'
    return out


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'{" ".join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-2000:]}')
    return json.loads(r.stdout)


def scores(args, cache):
    """{value: {trial: figure}}, {trial: vqf figure}, {trial: category}."""
    flags, vqf_key, metric = MEASURES[args.measure]
    table, vqf, cats = {v: {} for v in args.values}, {}, {}
    for d in args.data:
        for v in args.values:
            key = json.dumps([os.path.abspath(d), args.measure, args.parameter, v, args.binary_id])
            if key not in cache:
                print(f'scoring {d} {args.parameter}={v} ({args.measure})', file=sys.stderr)
                out = run_json([args.coremotion, 'bench', 'broad', d, '--json', *flags,
                                '--parameter', f'{args.parameter}={v}'])
                cache[key] = {t: e[metric] for t, e in out['trials'].items()}
            table[v].update(cache[key])
        key = json.dumps([os.path.abspath(d), 'vqf', vqf_key])
        if key not in cache:
            print(f'scoring {d} with VQF', file=sys.stderr)
            cmd = [sys.executable, args.reference, d, '--json']
            if not vqf_key.startswith('offline'):
                cmd.append('--no-offline')
            out = run_json(cmd)
            cache[key] = {t: r[vqf_key][metric] for t, r in out['trials'].items()}
        vqf.update(cache[key])
        cats.update(categories(d, list(cache[key])))
    return table, vqf, cats


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float('nan')


def choose(values, default, table, train, cats, tolerance):
    """The value chosen on `train` by inner leave-one-trial-out folds, and the evidence."""
    inner = {}
    for v in values:
        held = []
        for j in train:                      # inner fold: j held out, the rest would choose / fit
            held.append(table[v][j])         # nothing is fitted: j's held-out figure is its score
        inner[v] = mean(held)
    train_cats = sorted({cats[t] for t in train})
    cat_mean = {v: {c: mean(table[v][t] for t in train if cats[t] == c) for c in train_cats} for v in values}
    admissible = {v: all(cat_mean[v][c] <= cat_mean[default][c] * (1 + tolerance) for c in train_cats)
                  for v in values}
    best = min((v for v in values if admissible[v]), key=lambda v: (inner[v], v != default))
    return best, {'inner_cv_error': inner, 'admissible': admissible,
                  'worst_category_change': {v: max(cat_mean[v][c] / cat_mean[default][c] - 1 for c in train_cats)
                                            for v in values}}


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--data', action='append', required=True, help='directory of BROAD compact CSV trials (repeatable)')
    p.add_argument('--parameter', required=True, help='an AttitudeFilterParameters name (coremotion bench broad --parameter)')
    p.add_argument('--values', required=True, help='candidate values, comma-separated')
    p.add_argument('--default', type=float, help='the current default (must be among the values; default: the '
                   'value whose scores equal the plain run)')
    p.add_argument('--measure', default='causal_9d_total', choices=sorted(MEASURES))
    p.add_argument('--outer', default='trial', choices=['trial', 'category', 'dataset'])
    p.add_argument('--tolerance', type=float, default=0.01, help='relative worsening of a category allowed (0.01 = 1 %%)')
    p.add_argument('--coremotion', default=os.path.join(HERE, '..', '..', '.build', 'release', 'coremotion'))
    p.add_argument('--reference', default=os.path.join(HERE, '..', '..', '..', 'shared', 'tools', 'broad_reference.py'))
    p.add_argument('--cache', help='JSON file keeping scores between runs')
    p.add_argument('--json', action='store_true')
    args = p.parse_args()
    args.values = [float(v) for v in args.values.split(',')]
    if len(set(args.values)) != len(args.values) or len(args.values) < 1:
        sys.exit('--values: distinct numbers')
    st = os.stat(args.coremotion)
    args.binary_id = f'{st.st_size}:{int(st.st_mtime)}'
    cache = json.load(open(args.cache)) if args.cache and os.path.exists(args.cache) else {}
    table, vqf, cats = scores(args, cache)
    if args.cache:
        json.dump(cache, open(args.cache, 'w'))
    if args.default is None:
        flags = MEASURES[args.measure][0]
        plain = {}
        for d in args.data:
            out = run_json([args.coremotion, 'bench', 'broad', d, '--json', *flags])
            plain.update({t: e[MEASURES[args.measure][2]] for t, e in out['trials'].items()})
        same = [v for v in args.values if all(abs(table[v][t] - plain[t]) < 1e-9 for t in plain)]
        if not same:
            sys.exit('no candidate reproduces the defaults: give --default or include the default value')
        args.default = same[0]
    if args.default not in args.values:
        sys.exit('--default must be one of --values')
    trials = sorted(vqf)
    missing = [t for t in trials if any(t not in table[v] for v in args.values)]
    if missing:
        sys.exit(f'no score for {missing}')
    key = {'trial': lambda t: t, 'category': lambda t: cats[t], 'dataset': lambda t: cats[t].split('/')[0]}[args.outer]
    folds = sorted({key(t) for t in trials})
    held_out, chosen, evidence = {}, {}, {}
    for f in folds:
        test = [t for t in trials if key(t) == f]
        train = [t for t in trials if key(t) != f]
        if not train:
            sys.exit('an outer fold leaves no training trials')
        v, ev = choose(args.values, args.default, table, train, cats, args.tolerance)
        chosen[f] = v
        evidence[f] = ev
        for t in test:
            held_out[t] = table[v][t]
    all_means = {v: mean(table[v][t] for t in trials) for v in args.values}
    best_all, _ = choose(args.values, args.default, table, trials, cats, args.tolerance)
    groups = sorted(set(cats.values()))
    def summary(ts):
        return {'trials': len(ts), 'nested_cv': mean(held_out[t] for t in ts),
                'default': mean(table[args.default][t] for t in ts), 'vqf': mean(vqf[t] for t in ts),
                'best_on_all': mean(table[best_all][t] for t in ts),
                'per_value': {str(v): mean(table[v][t] for t in ts) for v in args.values}}
    report = {
        'parameter': args.parameter, 'values': args.values, 'default': args.default, 'measure': args.measure,
        'rival': MEASURES[args.measure][1], 'outer_folds': args.outer, 'tolerance': args.tolerance,
        'data': [os.path.abspath(d) for d in args.data],
        'overall': summary(trials),
        'categories': {g: summary([t for t in trials if cats[t] == g]) for g in groups},
        'chosen_per_outer_fold': {f: chosen[f] for f in folds},
        'choice_on_all_trials': best_all,
        'trials': {t: {'category': cats[t], 'nested_cv': held_out[t], 'vqf': vqf[t],
                       'per_value': {str(v): table[v][t] for v in args.values}} for t in trials},
        'inner_evidence': {f: {k: {str(v): x for v, x in d.items()} for k, d in ev.items()} for f, ev in evidence.items()},
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f'{args.measure}, {args.parameter} among {args.values} (default {args.default}), outer folds: one {args.outer}; '
          f'tolerance {args.tolerance:.0%} per category; degrees')
    print(f'{"category":34s} {"n":>3s} {"nested CV":>10s} {"default":>9s} {"VQF":>9s}  ' + ' '.join(f'{v:>8g}' for v in args.values))
    for g in groups + ['all']:
        s = report['overall'] if g == 'all' else report['categories'][g]
        print(f'{g:34s} {s["trials"]:3d} {s["nested_cv"]:10.3f} {s["default"]:9.3f} {s["vqf"]:9.3f}  '
              + ' '.join(f'{s["per_value"][str(v)]:8.3f}' for v in args.values))
    counts = {}
    for f in folds:
        counts[chosen[f]] = counts.get(chosen[f], 0) + 1
    print('chosen in the outer folds: ' + ', '.join(f'{v:g} x{n}' for v, n in sorted(counts.items()))
          + f'; on all trials: {best_all:g}')


if __name__ == '__main__':
    main()
