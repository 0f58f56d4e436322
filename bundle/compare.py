#!/usr/bin/env python3
"""Reads run.sh's compare/ folder (one BenchMain JSON per folder WHO-MODE-REPEAT, WHO "this" or
"base_<commit>") and prints, for every point this commit and a base measured, each one's median over the
repeats and this commit's over the base's; for latency points the p99s too. usage: compare.py COMPARE_DIR"""
import glob
import json
import os
import statistics
import sys


def points(root):
    found = {}
    for path in glob.glob(os.path.join(root, '*-*-*', 'bench-*.json')):
        who, mode, _ = os.path.basename(os.path.dirname(path)).rsplit('-', 2)
        with open(path) as f:
            run = json.load(f)
        for s in run['series']:
            for p in s['points']:
                key = (mode, s['sweep'], s['path'], s['variant'], s['unit'], p['x'])
                p99 = p['latency']['p99'] if p.get('latency') else None
                found.setdefault(key, {}).setdefault(who, []).append((p['value'], p99))
    return found


def main(root):
    found = points(root)
    print(f"{'mode':10} {'sweep':20} {'path':18} {'variant':26} {'x':>9} {'unit':5} {'base':14} {'this':>9} "
          f"{'base':>9} {'ratio':>6}  p99 this/base (runs)")
    for key in sorted(found, key=lambda k: tuple(str(x) for x in k)):
        runs = found[key]
        if 'this' not in runs:
            continue
        this = statistics.median(v for v, _ in runs['this'])
        for who in sorted(w for w in runs if w != 'this'):
            base = statistics.median(v for v, _ in runs[who])
            tail = ''
            if runs['this'][0][1] is not None and runs[who][0][1] is not None:
                t99 = statistics.median(p for _, p in runs['this'])
                b99 = statistics.median(p for _, p in runs[who])
                tail = f"{t99:.1f}/{b99:.1f} = {t99 / b99:.3f}"
            mode, sweep, path, variant, unit, x = key
            print(f"{mode:10} {sweep:20} {path:18} {variant[:26]:26} {x:9.0f} {unit:5} {who[:14]:14} {this:9.4g} "
                  f"{base:9.4g} {this / base:6.3f}  {tail} ({len(runs['this'])}/{len(runs[who])})")


if __name__ == '__main__':
    main(sys.argv[1])
