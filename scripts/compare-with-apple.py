#!/usr/bin/env python3
"""Compare our device motion with Apple's own, on an iPhone export of the Sensor Logger app.

usage: scripts/compare-with-apple.py FOLDER [--coremotion PATH]

FOLDER is an unzipped Sensor Logger (iOS) export with AccelerometerUncalibrated.csv and
GyroscopeUncalibrated.csv (the raw CMAccelerometerData / CMGyroData) and Gyroscope.csv (Apple's
bias-corrected CMDeviceMotion.rotationRate); Gravity.csv (CMDeviceMotion.gravity) adds the gravity
comparison. It runs `coremotion fuse` 6D (causal and --offline) on the raw samples and prints:

- rotation rate against Apple's, RMS of the vector difference and per axis, rad/s: ours and the raw gyro;
- gravity against Apple's, RMS angle, degrees: ours, and VQF (causal and offline, PyPI `vqf`) if installed;
- the bias we report when fed Apple's already-unbiased rates (a second run without
  GyroscopeUncalibrated.csv): whatever it reports is invented.

Samples are paired with Apple's at the nearest timestamp within 2 ms.
"""
import argparse, csv, os, shutil, subprocess, sys, tempfile

import numpy as np


def load(path, cols='xyz'):
    rows = list(csv.DictReader(open(path)))
    return np.array([float(r['time']) * 1e-9 for r in rows]), np.array([[float(r[c]) for c in cols] for r in rows])


def fuse(coremotion, folder, offline=False):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'fused.csv')
        subprocess.run([coremotion, 'fuse', folder, '--no-magnetometer', '-o', out] + (['--offline'] if offline else []),
                       check=True)
        rows = list(csv.DictReader(open(out)))
    t = np.array([float(r['timestamp']) for r in rows])
    return (t, np.array([[float(r['gravity_' + a]) for a in 'xyz'] for r in rows]),
            np.array([[float(r['rotation_rate_' + a]) for a in 'xyz'] for r in rows]))


def paired(tq, t, v, tolerance=0.002):
    """v at the timestamp of t nearest to each tq, and a mask of pairs within tolerance seconds."""
    i = np.clip(np.searchsorted(t, tq), 1, len(t) - 1)
    j = np.where(np.abs(t[i - 1] - tq) < np.abs(t[i] - tq), i - 1, i)
    return v[j], np.abs(t[j] - tq) < tolerance


def angle_deg(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return np.degrees(np.arccos(np.clip((a * b).sum(1), -1, 1)))


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def rate_line(name, d):
    return f'{name} {rms(np.linalg.norm(d, axis=1)):.4f} (x {rms(d[:, 0]):.4f}, y {rms(d[:, 1]):.4f}, z {rms(d[:, 2]):.4f})'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('folder')
    ap.add_argument('--coremotion', default=os.path.join(os.path.dirname(__file__), '..', '.build', 'release', 'coremotion'))
    a = ap.parse_args()
    f = a.folder
    for need in ('AccelerometerUncalibrated.csv', 'GyroscopeUncalibrated.csv', 'Gyroscope.csv'):
        if not os.path.exists(os.path.join(f, need)):
            sys.exit(f'error: {f} has no {need}')
    t, g, w = fuse(a.coremotion, f)
    tr, raw = load(os.path.join(f, 'GyroscopeUncalibrated.csv'))
    tA, apple = load(os.path.join(f, 'Gyroscope.csv'))
    wA, ok = paired(t, tA, apple)
    wR, ok2 = paired(t, tr, raw)
    ok &= ok2
    print(f'{f}: {len(t)} rows, {t[-1] - t[0]:.1f} s')
    print('rotation rate vs Apple, rad/s RMS: ' + rate_line('ours', (w - wA)[ok]) + '; ' + rate_line('raw gyro', (wR - wA)[ok]))
    gravity = os.path.join(f, 'Gravity.csv')
    if os.path.exists(gravity):
        tg, gA = load(gravity)
        gP, okg = paired(t, tg, gA)
        line = f'gravity vs Apple, degrees RMS: ours {rms(angle_deg(g[okg], gP[okg])):.3f}'
        to, go, _ = fuse(a.coremotion, f, offline=True)
        gPo, oko = paired(to, tg, gA)
        line += f', ours offline {rms(angle_deg(go[oko], gPo[oko])):.3f}'
        try:
            import vqf
            ta, acc = load(os.path.join(f, 'AccelerometerUncalibrated.csv'))
            accP, oka = paired(tr, ta, acc)
            gyr, acc_si = np.ascontiguousarray(raw[oka]), np.ascontiguousarray(-accP[oka] * 9.80665)
            ts = tr[oka]
            dt = float(np.median(np.diff(ts)))

            def down(q):  # gravity (Core Motion sign: down) in the device frame of a device -> earth quaternion
                qw, qx, qy, qz = q.T
                return -np.column_stack([2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)])

            gV, okv = paired(ts, tg, gA)
            q = vqf.VQF(dt).updateBatch(gyr, acc_si)['quat6D']
            qo = vqf.offlineVQF(gyr, acc_si, None, dt)['quat6D']
            line += f'; VQF {rms(angle_deg(down(q)[okv], gV[okv])):.3f}, offline VQF {rms(angle_deg(down(qo)[okv], gV[okv])):.3f}'
        except ImportError:
            line += ' (pip install vqf for VQF)'
        print(line)
    with tempfile.TemporaryDirectory() as d:
        for name in os.listdir(f):
            if name.endswith('.csv') and name not in ('GyroscopeUncalibrated.csv', 'Microphone.csv'):
                shutil.copy(os.path.join(f, name), d)
        t2, _, w2 = fuse(a.coremotion, d)
    wA2, ok3 = paired(t2, tA, apple)
    invented = (wA2 - w2)[ok3]
    print(f'fed Apple\'s unbiased rates: invented bias RMS {rms(np.linalg.norm(invented, axis=1)):.4f} rad/s, '
          f'largest per axis {np.abs(invented).max(0).round(4).tolist()}')


if __name__ == '__main__':
    main()
