#!/usr/bin/env python3
"""Convert FIUMARGDB recordings into BROAD's compact CSV, which `coremotion bench broad`, `coremotion fuse`
and ../shared/tools/broad_reference.py read.

FIUMARGDB: P. Sonchan, N. Ratchatanantakit, N. O-larnnithipong, M. Adjouadi, A. Barreto, "Benchmarking
Dataset of Signals from a Commercial MEMS Magnetic-Angular Rate-Gravity (MARG) Sensor Manipulated in
Regions with and without Geomagnetic Distortion", Sensors 23(8):3786, 2023, doi:10.3390/s23083786.
Data: github.com/LABDSP/FIUMARGDB_marg_signals_and_reference_orientations (GPL-3.0). A YEI 3-Space MARG
hand-manipulated against an OptiTrack V120:Trio optical system (120 Hz), one row per optical frame.

usage: fiumargdb-to-broad.py SRC_DIR OUT_DIR     (SRC_DIR holds recNN.csv, as fetch-fiumargdb unpacks them)

What it does, and why (every figure it measures lands in OUT_DIR/alignment.json):
- Time base: the `Timestamp` column is the host's receive time (ms): it stalls for 0.1-0.6 s and then
  catches up in 2-5 ms steps, while the optical attitude barely moves across a stall, so rows are
  consecutive 120 Hz samples. `t` = index / rate, with the rate measured as (rows - 1) / duration
  (119.9-120.0 Hz on every trial) and rounded to 120 Hz.
- Units: accelerometer g (specific force, up axis +1 at rest) -> m/s^2 (x 9.80665, BROAD's sign);
  gyroscope rad/s; magnetometer gauss -> uT (x 100). Units as the dataset's own Matlab scripts label them.
- Ground truth: `cam_q*` (x, y, z, w; optical rigid body -> optical world), empty where `isTracked` = 0.
  Three constant rotations turn it into BROAD's sensor -> ENU truth, all estimated from the trial itself:
  1. lag: the optical rate |w| (from consecutive quaternions) against the gyroscope's |w|, the integer
     lag (within +-0.25 s) of best correlation; the truth is shifted by it;
  2. sensor -> rigid body: the rotation that best maps gyroscope rates onto the optical body rates
     (Wahba's problem by SVD, samples above 0.5 rad/s);
  3. optical world -> ENU: the mean of the accelerometer at rest, turned into the optical world, is
     up; the mean horizontal direction of the magnetometer at rest (samples whose field norm and dip are
     within 3 % / 3 deg of the trial's rest medians) is magnetic north (BROAD's convention: ENU with
     magnetic north, no declination). The optical world frame stays put between recordings (the
     trials' own estimates of north agree within 1.6 deg), so one heading alignment, the median of the
     trials' estimates, serves them all; a per-trial one would absorb each trial's constant heading error.
- Scored samples (`movement` = 1): tracked samples within 1 s of the gyroscope exceeding 0.3 rad/s,
  from the first such moment on (BROAD scores movement phases, not rests).
- A trial is labelled `disturbed` when more than 5 % of its samples have a field norm more than 10 %
  away from its rest median (a magnet or iron near the sensor), else `undisturbed`.
"""
import glob, json, os, sys
import numpy as np

G = 9.80665


def qmul(a, b):
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], -1)


def qconj(q):
    return q * np.array([1, -1, -1, -1])


def qrot(q, v):
    """Rotate vectors v by unit quaternions q (active, q v q*)."""
    p = np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], -1)
    return qmul(qmul(q, p), qconj(q))[..., 1:]


def mat_to_quat(R):
    w = np.sqrt(max(0.0, 1 + R[0, 0] + R[1, 1] + R[2, 2])) / 2
    x = np.sqrt(max(0.0, 1 + R[0, 0] - R[1, 1] - R[2, 2])) / 2
    y = np.sqrt(max(0.0, 1 - R[0, 0] + R[1, 1] - R[2, 2])) / 2
    z = np.sqrt(max(0.0, 1 - R[0, 0] - R[1, 1] + R[2, 2])) / 2
    x = np.copysign(x, R[2, 1] - R[1, 2]); y = np.copysign(y, R[0, 2] - R[2, 0]); z = np.copysign(z, R[1, 0] - R[0, 1])
    q = np.array([w, x, y, z])
    return q / np.linalg.norm(q)


def wahba(a, b):
    """R minimising sum |b - R a|^2 (rows of a, b are vector pairs)."""
    u, _, vt = np.linalg.svd(b.T @ a)
    d = np.sign(np.linalg.det(u @ vt))
    return u @ np.diag([1, 1, d]) @ vt


def rotation_between(a, b):
    """The smallest rotation taking unit vector a onto unit vector b, as a quaternion."""
    c = np.cross(a, b); s = np.linalg.norm(c); cosang = float(np.dot(a, b))
    if s < 1e-12:
        return np.array([1.0, 0, 0, 0])
    ang = np.arctan2(s, cosang); ax = c / s
    return np.concatenate([[np.cos(ang / 2)], np.sin(ang / 2) * ax])


def convert(path, out_dir):
    a = np.genfromtxt(path, delimiter=',', skip_header=1)
    name = 'fiu_' + os.path.splitext(os.path.basename(path))[0]
    n = len(a)
    t_host = a[:, 0] / 1000.0
    measured_rate = (n - 1) / (t_host[-1] - t_host[0])
    fs = 120.0
    if abs(measured_rate / fs - 1) > 0.01:
        sys.exit(f'{path}: measured rate {measured_rate:.2f} Hz is not 120 Hz')
    q_opt = a[:, [7, 4, 5, 6]].copy()
    gyr = a[:, 12:15].copy()
    acc = a[:, 15:18] * G
    mag = a[:, 18:21] * 100.0
    tracked = a[:, 22] > 0.5
    qn = np.linalg.norm(q_opt, axis=1)
    tracked &= np.abs(qn - 1) < 0.01
    q_opt[~tracked] = np.nan
    q_opt = q_opt / qn[:, None]
    # sign continuity for differences
    for i in range(1, n):
        if tracked[i] and tracked[i - 1] and np.dot(q_opt[i], q_opt[i - 1]) < 0:
            q_opt[i] = -q_opt[i]

    # 1. lag: optical body rate magnitude vs gyroscope magnitude
    dq = qmul(qconj(q_opt[:-1]), q_opt[1:])            # body-frame increment
    ok = tracked[:-1] & tracked[1:]
    w_body = np.zeros((n - 1, 3))
    vn = np.linalg.norm(dq[:, 1:], axis=1)
    ang = 2 * np.arctan2(vn, np.abs(dq[:, 0])) * np.sign(dq[:, 0] + 1e-300)
    w_body[ok] = (dq[ok, 1:] / np.maximum(vn[ok], 1e-12)[:, None]) * (ang[ok] * fs)[:, None]
    w_body[ok & (vn < 1e-12)] = 0
    w_mid = 0.5 * (gyr[:-1] + gyr[1:])                 # the gyroscope between the two optical frames
    mo = np.linalg.norm(w_body, axis=1); mg = np.linalg.norm(w_mid, axis=1)
    best, best_c = 0, -2.0
    for lag in range(-30, 31):                          # truth[i] = optical[i + lag]
        i0, i1 = max(0, -lag), min(n - 1, n - 1 - lag)
        g_ = mg[i0:i1]; o_ = mo[i0 + lag:i1 + lag]; k = ok[i0 + lag:i1 + lag]
        c = np.corrcoef(g_[k], o_[k])[0, 1]
        if c > best_c:
            best_c, best = c, lag
    lag = best
    def shift(x):
        y = np.full_like(x, np.nan)
        if lag >= 0:
            y[:len(x) - lag] = x[lag:]
        else:
            y[-lag:] = x[:lag]
        return y
    q_opt = shift(q_opt); w_b = shift(np.vstack([w_body, np.zeros((1, 3))]))
    okb = shift(np.append(ok, False).astype(float)) == 1
    tracked = shift(tracked.astype(float)) == 1

    # 2. sensor -> rigid body, from rotation increments over K samples (differencing single optical frames
    #    amplifies their noise; over K = 6 frames, 50 ms, the increment is still small enough to commute)
    K = 6
    i = np.arange(n - K)
    dK = qmul(qconj(q_opt[i]), q_opt[i + K])
    okK = ~np.isnan(dK).any(1)
    vnK = np.linalg.norm(dK[:, 1:], axis=1)
    rvK = np.zeros((n - K, 3))
    rvK[okK] = dK[okK, 1:] / np.maximum(vnK[okK], 1e-12)[:, None] * (2 * np.arctan2(vnK[okK], dK[okK, 0]))[:, None]
    cg = np.cumsum(np.vstack([np.zeros((1, 3)), 0.5 * (gyr[:-1] + gyr[1:]) / fs]), 0)
    gK = cg[i + K] - cg[i]
    gKn = np.linalg.norm(gK, axis=1)
    sel = okK & (gKn > 0.5 * K / fs) & (gKn < 0.3)
    R_bs = wahba(gK[sel], rvK[sel])
    rot_g = gK[sel] @ R_bs.T
    resid = np.degrees(np.arccos(np.clip(np.sum(rot_g * rvK[sel], 1) / np.linalg.norm(rot_g, axis=1)
                                         / np.linalg.norm(rvK[sel], axis=1), -1, 1)))
    scale = float(np.sum(np.linalg.norm(rvK[sel], axis=1)) / np.sum(gKn[sel]))
    q_bs = mat_to_quat(R_bs)
    q_so = qmul(q_opt, np.broadcast_to(q_bs, q_opt.shape))   # sensor -> optical world

    # 3. optical world -> ENU
    gn = np.linalg.norm(gyr, axis=1); an = np.linalg.norm(acc, axis=1)
    rest = tracked & (gn < 0.05) & (np.abs(an - G) < 0.02 * G)
    up_w = qrot(q_so[rest], acc[rest]); up = up_w.mean(0); up /= np.linalg.norm(up)
    up_spread = np.degrees(np.arccos(np.clip(up_w @ up / np.linalg.norm(up_w, axis=1), -1, 1)))
    q_lvl = rotation_between(up, np.array([0.0, 0, 1]))
    q_sl = qmul(np.broadcast_to(q_lvl, q_so.shape), q_so)     # sensor -> levelled optical world
    m_l = qrot(q_sl[rest], mag[rest])
    norm_l = np.linalg.norm(m_l, axis=1)
    dip_l = np.degrees(np.arcsin(np.clip(-m_l[:, 2] / norm_l, -1, 1)))
    med_n, med_d = np.median(norm_l), np.median(dip_l)
    clean = (np.abs(norm_l / med_n - 1) < 0.03) & (np.abs(dip_l - med_d) < 3)
    h = m_l[clean, :2].mean(0)
    yaw_north = np.arctan2(h[1], h[0])                      # direction of magnetic north in the levelled frame
    hd = np.degrees(np.arctan2(m_l[clean, 1], m_l[clean, 0]) - yaw_north)
    hd = (hd + 180) % 360 - 180

    # scored samples
    moving = gn > 0.3
    win = int(fs)
    near = np.convolve(moving.astype(float), np.ones(2 * win + 1), 'same') > 0
    first = int(np.argmax(moving)) if moving.any() else n
    movement = near & tracked & (np.arange(n) >= first)

    # disturbance label from the whole trial's field norm
    fn = np.linalg.norm(mag, axis=1)
    far = float(np.mean(np.abs(fn / med_n - 1) > 0.10))
    label = 'disturbed' if far > 0.05 else 'undisturbed'

    trial = dict(name=name, fs=fs, acc=acc, gyr=gyr, mag=mag, q_sl=q_sl, movement=movement, label=label,
                 lag=lag, source=os.path.basename(path), yaw_north=yaw_north)
    return name, dict(
        source=os.path.basename(path), samples=n, duration_s=round(n / fs, 2), measured_rate_hz=round(measured_rate, 3),
        group=label, tracked_fraction=round(float(tracked.mean()), 4), scored_samples=int(movement.sum()),
        truth_lag_samples=lag, lag_correlation=round(float(best_c), 4),
        sensor_to_body_quaternion=[round(float(v), 6) for v in q_bs],
        gyro_vs_optical_direction_residual_deg_median=round(float(np.median(resid)), 3),
        optical_over_gyro_rate_ratio=round(scale, 4),
        rest_samples=int(rest.sum()), gravity_direction_spread_deg_rms=round(float(np.sqrt(np.mean(up_spread ** 2))), 3),
        field_norm_uT_rest_median=round(float(med_n), 2), field_dip_deg_rest_median=round(float(med_d), 2),
        field_clean_rest_samples=int(clean.sum()),
        field_heading_spread_deg_rms=round(float(np.sqrt(np.mean(hd ** 2))), 3),
        magnetic_north_in_levelled_optical_frame_deg=round(float(np.degrees(yaw_north)), 2),
        field_norm_off_by_10pct_fraction=round(far, 4)), trial


def write(trial, yaw_north, out_dir):
    """Writes the trial with magnetic north at `yaw_north` (rad) in the levelled optical frame."""
    rot = np.pi / 2 - yaw_north                              # turn magnetic north onto +y
    q_yaw = np.array([np.cos(rot / 2), 0, 0, np.sin(rot / 2)])
    q_truth = qmul(np.broadcast_to(q_yaw, trial['q_sl'].shape), trial['q_sl'])
    acc, gyr, mag, movement, fs, n = trial['acc'], trial['gyr'], trial['mag'], trial['movement'], trial['fs'], len(trial['acc'])
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, trial['name'] + '.csv')
    with open(out, 'w') as f:
        f.write(f'# FIUMARGDB {trial["source"]} (Sonchan et al., Sensors 23(8):3786, 2023, GPL-3.0) '
                f'converted to BROAD compact CSV; sampling_rate_hz={fs}; group={trial["label"]}; '
                f'truth lag {trial["lag"]} samples; see scripts/dev-data/fiumargdb-to-broad.py\n')
        f.write('t,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,mag_x,mag_y,mag_z,q_w,q_x,q_y,q_z,movement\n')
        for i in range(n):
            qs = ',,,' if np.isnan(q_truth[i]).any() else ','.join(f'{v:.7f}' for v in q_truth[i])
            f.write(f'{i / fs:.6f},' + ','.join(f'{v:.6g}' for v in acc[i]) + ',' + ','.join(f'{v:.6g}' for v in gyr[i])
                    + ',' + ','.join(f'{v:.6g}' for v in mag[i]) + f',{qs},{int(movement[i])}\n')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[1])
    src, out = sys.argv[1:]
    paths = sorted(glob.glob(os.path.join(src, 'rec*.csv')))
    if not paths:
        sys.exit(f'no rec*.csv in {src} (run scripts/dev-data/fetch-fiumargdb first)')
    info, trials = {}, []
    for p in paths:
        name, d, trial = convert(p, out)
        info[name] = d
        trials.append(trial)
    # The optical world frame stays put between recordings (magnetic north lies within 1.6 deg in all of
    # them), so one heading alignment serves every trial: the circular median of the trials' estimates.
    # A per-trial alignment would absorb each trial's own constant heading error into the truth.
    yaws = np.array([t['yaw_north'] for t in trials])
    ref = np.angle(np.mean(np.exp(1j * yaws)))
    yaw = ref + float(np.median(np.angle(np.exp(1j * (yaws - ref)))))
    for t in trials:
        write(t, yaw, out)
        d = info[t['name']]
        d['heading_alignment_deg_minus_own_estimate'] = round(float(np.degrees(np.angle(np.exp(1j * (yaw - t['yaw_north']))))), 2)
        print(t['name'], json.dumps(d))
    info = {'magnetic_north_in_levelled_optical_frame_deg_used': round(float(np.degrees(yaw)), 3), 'trials': info}
    with open(os.path.join(out, 'alignment.json'), 'w') as f:
        json.dump(info, f, indent=1)
    groups = {'dataset': 'FIUMARGDB', 'trials': {k: v['group'] for k, v in info['trials'].items()}}
    with open(os.path.join(out, 'groups.json'), 'w') as f:
        json.dump(groups, f, indent=1)


if __name__ == '__main__':
    main()
