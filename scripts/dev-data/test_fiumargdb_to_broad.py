#!/usr/bin/env python3
"""Checks fiumargdb-to-broad.py on a synthetic recording in FIUMARGDB's layout whose truth is known: a sensor
turned about by a smooth random motion with rests, a rigid-body frame 7 deg off the sensor's, an optical
world frame with y up and magnetic north 190 deg away, the optical rows two samples late, untracked rows
and the host timestamps' stalls. The converted truth must be the sensor's attitude in ENU.

  python3 -m unittest discover -s scripts/dev-data -p 'test_*.py'
"""
import importlib.util, json, os, tempfile, unittest
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('conv', os.path.join(HERE, 'fiumargdb-to-broad.py'))
conv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conv)


def axis_angle(axis, deg):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(np.radians(deg) / 2)], np.sin(np.radians(deg) / 2) * axis])


def recording(path, seed, lag=2):
    rng = np.random.default_rng(seed)
    fs, n = 120.0, 120 * 40
    t = np.arange(n) / fs
    # body rate: smooth noise, zero in rests (0-3 s, 12-14 s, 25-27 s, 37-40 s)
    w = np.cumsum(rng.normal(0, 0.15, (n, 3)), 0)
    w = np.apply_along_axis(lambda x: np.convolve(x, np.ones(60) / 60, 'same'), 0, w)
    w = w / np.abs(w).max() * 2.5
    for a, b in [(0, 3), (12, 14), (25, 27), (37, 40)]:
        w[(t >= a) & (t < b)] = 0
    q = np.zeros((n, 4)); q[0] = axis_angle([1, 2, 0.5], 30)          # sensor -> ENU
    for k in range(1, n):
        q[k] = conv.qmul(q[k - 1], axis_angle(w[k - 1], np.degrees(np.linalg.norm(w[k - 1]) / fs))
                         if np.linalg.norm(w[k - 1]) > 0 else np.array([1.0, 0, 0, 0]))
        q[k] /= np.linalg.norm(q[k])
    gyr = np.vstack([w[:1], 0.5 * (w[1:] + w[:-1])])                # the rate about each sample
    up_enu = np.array([0, 0, 1.0])
    dip = np.radians(44)
    field = 33.0 * np.array([0, np.cos(dip), -np.sin(dip)])           # uT, magnetic north, pointing down
    acc_g = conv.qrot(conv.qconj(q), np.broadcast_to(up_enu, (n, 3)))
    mag_gauss = conv.qrot(conv.qconj(q), np.broadcast_to(field, (n, 3))) / 100
    q_bs = axis_angle([0.3, -1, 0.4], 7)                               # sensor -> rigid body
    q_eo = conv.qmul(axis_angle([0, 0, 1], 190), axis_angle([1, 0, 0], 90))   # optical (y up) -> ENU
    q_opt = conv.qmul(conv.qmul(np.broadcast_to(conv.qconj(q_eo), q.shape), q),
                      np.broadcast_to(conv.qconj(q_bs), q.shape))     # rigid body -> optical world
    q_opt = np.roll(q_opt, lag, 0)                                    # optical rows `lag` samples late
    tracked = np.ones(n, bool); tracked[:lag] = False; tracked[2000:2030] = False
    host = (t + rng.uniform(-0.003, 0.003, n)) * 1000
    host[1500:1520] = host[1500]                                       # a stall, then catching up
    host = np.maximum.accumulate(host); host -= host[0]
    with open(path, 'w') as f:
        f.write('Timestamp, pos_x, pos_y, pos_z, cam_qx, cam_qy, cam_qz, cam_qw, ss_qx, ss_qy, ss_qz, ss_qw, '
                'gyro_x, gyro_y, gyro_z, acc_x, acc_y, acc_z, mag_x, mag_y, mag_z, stillness, isTracked\n')
        for k in range(n):
            row = [host[k], 0, 0, 0, *q_opt[k, 1:], q_opt[k, 0], 0, 0, 0, 1, *gyr[k], *acc_g[k], *mag_gauss[k],
                   float(np.linalg.norm(w[k]) == 0), int(tracked[k])]
            f.write(','.join(f'{v:.9g}' for v in row) + '\n')
    return q


class ConverterTests(unittest.TestCase):
    def test_truth_is_the_sensor_attitude_in_enu(self):
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, 'raw'), os.path.join(d, 'out')
            os.makedirs(src)
            truths = {f'fiu_rec{s:02d}': recording(os.path.join(src, f'rec{s:02d}.csv'), s) for s in (1, 2)}
            conv.main.__globals__['sys'].argv = ['x', src, out]
            conv.main()
            with open(os.path.join(out, 'alignment.json')) as f:
                info = json.load(f)
            for name, q in truths.items():
                self.assertEqual(info['trials'][name]['truth_lag_samples'], 2)
                a = np.genfromtxt(os.path.join(out, name + '.csv'), delimiter=',', skip_header=2)
                self.assertEqual(len(a), len(q))
                np.testing.assert_allclose(a[:, 1:4], conv.qrot(conv.qconj(q), np.broadcast_to([0, 0, 9.80665], q.shape[:1] + (3,))), atol=1e-4)
                qt = a[:, 10:14]
                ok = ~np.isnan(qt).any(1)
                self.assertGreater(ok.mean(), 0.98)
                e = conv.qmul(qt[ok], conv.qconj(q[ok]))
                ang = np.degrees(2 * np.arccos(np.clip(np.abs(e[:, 0]), 0, 1)))
                self.assertLess(ang.max(), 0.2, name)
                self.assertTrue(a[:, 14].any() and not a[:360, 14].any())   # the first rest is not scored


if __name__ == '__main__':
    unittest.main()
