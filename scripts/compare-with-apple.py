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

With Orientation.csv (CMDeviceMotion.attitude) and MagnetometerUncalibrated.csv (the raw field) it also
fuses 9D from the raw field and prints the heading against Apple's, RMS in windows of the recording and
when our magnetometer calibration first reaches `low` and `medium`, with VQF 9D on the same raw field
beside it; with Magnetometer.csv (Apple's calibrated field), the median distance of our calibrated
field (the `magnetic_field_*` columns of `fuse`) from it, per window. The two attitudes' world frames
differ by a constant turn about the vertical (declination, reference frame), removed as the circular mean of the heading difference from the time our calibration
first reaches `medium` (before it our heading is the gyro's arbitrary start; VQF's is taken over the same
span).

Samples are paired with Apple's at the nearest timestamp within 2 ms (heading: within half a sample).
"""
import argparse, csv, os, shutil, subprocess, sys, tempfile

import numpy as np


def load(path, cols='xyz'):
    rows = list(csv.DictReader(open(path)))
    return np.array([float(r['time']) * 1e-9 for r in rows]), np.array([[float(r[c]) for c in cols] for r in rows])


def fuse_rows(coremotion, folder, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'fused.csv')
        subprocess.run([coremotion, 'fuse', folder, '-o', out] + args, check=True)
        return list(csv.DictReader(open(out)))


def fuse(coremotion, folder, offline=False):
    rows = fuse_rows(coremotion, folder, ['--no-magnetometer'] + (['--offline'] if offline else []))
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


def yaw_deg(q):
    """Heading of the device's x axis in the world frame of device -> world quaternions (w, x, y, z), degrees."""
    qw, qx, qy, qz = q.T
    return np.degrees(np.arctan2(2 * (qx * qy + qw * qz), 1 - 2 * (qy * qy + qz * qz)))


def heading_error(yaw, yaw_apple, reference=None):
    """Heading difference with the constant turn between the two world frames removed, degrees: the
    circular mean of the difference over the samples `reference` marks (all when None or none marked)."""
    d = np.radians(yaw - yaw_apple)
    use = d if reference is None or not reference.any() else d[reference]
    offset = np.angle(np.mean(np.exp(1j * use)))
    return np.degrees(np.angle(np.exp(1j * (d - offset))))


WINDOWS = [(0, 15), (15, 30), (30, 60), (60, 120), (120, float('inf'))]


def by_window(s, values, statistic, mask=None):
    """`statistic` of `values` in each of WINDOWS of `s` (seconds from the start) that holds a sample,
    restricted to `mask`, as 'a-b s x.x' parts."""
    keep = np.ones(len(s), bool) if mask is None else mask
    parts = []
    for a, b in WINDOWS:
        inside = keep & (s >= a) & (s < b)
        if inside.any():
            label = f'{a:.0f}-{b:.0f} s' if b != float('inf') else f'{a:.0f} s-'
            parts.append(f'{label} {statistic(values[inside]):.1f}')
    return ', '.join(parts)


def heading_report(coremotion, f):
    o = list(csv.DictReader(open(os.path.join(f, 'Orientation.csv'))))
    to = np.array([float(r['time']) * 1e-9 for r in o])
    yaw_apple = yaw_deg(np.array([[float(r[k]) for k in ('qw', 'qx', 'qy', 'qz')] for r in o]))
    rows = fuse_rows(coremotion, f, ['--reference-frame', 'xMagneticNorthZVertical'])
    t = np.array([float(r['timestamp']) for r in rows])
    yaw = yaw_deg(np.array([[float(r[k]) for k in ('q_w', 'q_x', 'q_y', 'q_z')] for r in rows]))
    accuracy = np.array([float(r['magnetic_field_accuracy']) for r in rows])
    half = float(np.median(np.diff(to))) / 2 + 1e-4  # pairing tolerance: half a sample
    yA, ok = paired(t, to, yaw_apple, tolerance=half)
    # The turn between the frames is taken where our heading is calibrated (medium or better): before
    # that it is the gyro's arbitrary start, which says nothing about the frames.
    calibrated_from = t[np.argmax(accuracy >= 1)] if (accuracy >= 1).any() else t[0]
    e = heading_error(yaw[ok], yA[ok], t[ok] >= calibrated_from)
    s = t[ok] - t[0]

    def first(level):
        hit = np.nonzero(accuracy >= level)[0]
        return f'{t[hit[0]] - t[0]:.1f} s' if len(hit) else 'never'

    print(f'heading vs Apple, degrees RMS: ours {rms(e):.1f} ({by_window(s, e, rms)}); '
          f'calibration low at {first(0)}, medium at {first(1)}')
    calibrated = os.path.join(f, 'Magnetometer.csv')
    if os.path.exists(calibrated):
        tc, mc = load(calibrated)
        field = np.array([[float(r['magnetic_field_' + a]) for a in 'xyz'] for r in rows])
        mA, okc = paired(t, tc, mc, tolerance=half)
        gap = np.linalg.norm(field - mA, axis=1)
        print(f"calibrated field vs Apple's (Magnetometer.csv), median distance, uT: "
              f"{by_window(t - t[0], gap, np.median, okc)}")
    try:
        import vqf
        tr, raw = load(os.path.join(f, 'GyroscopeUncalibrated.csv'))
        ta, acc = load(os.path.join(f, 'AccelerometerUncalibrated.csv'))
        tm, mag = load(os.path.join(f, 'MagnetometerUncalibrated.csv'))
        accP, oka = paired(tr, ta, acc, tolerance=half)
        magP, okm = paired(tr, tm, mag, tolerance=half)
        keep = oka & okm
        ts = tr[keep]
        q = vqf.VQF(float(np.median(np.diff(ts)))).updateBatch(
            np.ascontiguousarray(raw[keep]), np.ascontiguousarray(-accP[keep] * 9.80665),
            np.ascontiguousarray(magP[keep]))['quat9D']
        yV, okv = paired(ts, to, yaw_apple, tolerance=half)
        ev = heading_error(yaw_deg(q)[okv], yV[okv], ts[okv] >= calibrated_from)
        print(f'heading vs Apple, degrees RMS: VQF 9D on the raw field {rms(ev):.1f} ({by_window(ts[okv] - ts[0], ev, rms)})')
    except ImportError:
        print('(pip install vqf for VQF)')


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
    if ok.any():
        print('rotation rate vs Apple, rad/s RMS: ' + rate_line('ours', (w - wA)[ok]) + '; ' + rate_line('raw gyro', (wR - wA)[ok]))
    else:
        print("rotation rate and gravity vs Apple: no sample of Apple's within 2 ms of ours (not taken at the same instants)")
    gravity = os.path.join(f, 'Gravity.csv')
    if os.path.exists(gravity) and ok.any():
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
    if all(os.path.exists(os.path.join(f, n)) for n in ('Orientation.csv', 'MagnetometerUncalibrated.csv')):
        heading_report(a.coremotion, f)
    with tempfile.TemporaryDirectory() as d:
        for name in os.listdir(f):
            if name.endswith('.csv') and name not in ('GyroscopeUncalibrated.csv', 'Microphone.csv'):
                shutil.copy(os.path.join(f, name), d)
        t2, _, w2 = fuse(a.coremotion, d)
    wA2, ok3 = paired(t2, tA, apple)
    if not ok3.any():
        return
    invented = (wA2 - w2)[ok3]
    print(f'fed Apple\'s unbiased rates: invented bias RMS {rms(np.linalg.norm(invented, axis=1)):.4f} rad/s, '
          f'largest per axis {np.abs(invented).max(0).round(4).tolist()}')


if __name__ == '__main__':
    main()
