#!/usr/bin/env python3
"""Load on dlsched-ingestd over loopback (test-ingestd-load.sh runs it; Python 3 stdlib only).

Every client is a process of its own uid (munge credentials carry the process's uid; they are
made by libmunge through ctypes, a fresh one per request, as the collector does) and its own
127.0.0.x address (the per-address connection limit is by address; all of 127/8 is loopback):

  valid      VALID_UIDS uids from one address (one node's collectors), each posting BATCHES
             batches of RECORDS epochs for its own job, closed loop; a 429 or 503 is sent again
             (fresh credential) after its Retry-After, as the collector does. A request closed
             without an answer is counted as lost: the test fails.
  abuser     one uid, 4 connections at once, as fast as it can, never honouring Retry-After
  badauth    garbage bodies, credentials of another munged (forged), replayed credentials
  garbage    bytes that are not HTTP
  slow       connections that trickle a request one byte at a time
  oversize   a 16 MiB Content-Length (never sent), and chunked bodies past --max-request
  cluster    valid credentials for another cluster; another uid's job; a job nobody knows
  flood      opens 3 x --max-connections-per-ip connections from one address and holds them
  probe      GET /v1/stats every 0.2 s from its own address: each must be answered within
             PROBE_LIMIT s
  rss        VmRSS of the service every 0.05 s, and VmHWM at the end

The invalid clients run until the valid ones are done (or the time limit). Prints the figures
(a table, then one JSON line) and exits 1 when a check fails.
"""
import argparse
import ctypes
import ctypes.util
import http.client
import json
import multiprocessing as mp
import os
import random
import socket
import sqlite3
import sys
import time

# ---- munge through libmunge (munge.h) ----
MUNGE_OPT_SOCKET = 8


class Munge:
    def __init__(self, sock):
        self.lib = ctypes.CDLL(ctypes.util.find_library("munge") or "libmunge.so.2")
        self.libc = ctypes.CDLL(None)
        self.lib.munge_ctx_create.restype = ctypes.c_void_p
        self.lib.munge_ctx_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p]
        self.lib.munge_encode.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p,
                                          ctypes.c_char_p, ctypes.c_int]
        self.lib.munge_strerror.restype = ctypes.c_char_p
        self.libc.free.argtypes = [ctypes.c_void_p]
        self.ctx = self.lib.munge_ctx_create()
        self.lib.munge_ctx_set(self.ctx, MUNGE_OPT_SOCKET, sock.encode())

    def encode(self, payload):
        out = ctypes.c_char_p()
        data = payload.encode()
        rc = self.lib.munge_encode(ctypes.byref(out), self.ctx, data, len(data))
        if rc != 0:
            raise RuntimeError("munge_encode: " + self.lib.munge_strerror(rc).decode())
        cred = out.value
        self.libc.free(ctypes.cast(out, ctypes.c_void_p))
        return cred


def batch(cluster, job, first_epoch, n, now):
    recs = []
    for e in range(first_epoch, first_epoch + n):
        start = now - 2500000 + e * 2.0  # epochs up to 1e6 end in the past
        recs.append({"type": "epoch", "epoch": e, "gpus": 1, "start": start, "end": start + 1.5,
                     "bytes_read": 1000, "net_rx_bytes": 10, "nfs_read_bytes": -1})
    return json.dumps({"v": 1, "cluster": cluster, "job_id": job, "step": "batch", "node": "n1",
                       "run": 0, "records": recs})


def conn(a, src, timeout=10):
    return http.client.HTTPConnection("127.0.0.1", a.port, timeout=timeout, source_address=(src, 0))


def post(a, src, body, ctype="application/x-munge", headers=None, timeout=10):
    """(status, Retry-After, seconds); status 0: closed or failed without an answer."""
    t0 = time.monotonic()
    c = conn(a, src, timeout)
    try:
        h = {"Content-Type": ctype}
        h.update(headers or {})
        c.request("POST", "/v1/records", body=body, headers=h)
        r = c.getresponse()
        r.read()
        return r.status, int(r.getheader("Retry-After") or 0), time.monotonic() - t0
    except (OSError, http.client.HTTPException):
        return 0, 0, time.monotonic() - t0
    finally:
        c.close()


def status_of(data):
    """The status code of an HTTP answer's first bytes, else "closed"."""
    return data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "closed"


def raw(a, src, data):
    """Sends bytes as they are on a fresh connection from src; the answer's status or "closed"."""
    s = socket.socket()
    s.settimeout(5)
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", a.port))
        s.sendall(data)
        return status_of(s.recv(64))
    except OSError:
        return "closed"
    finally:
        s.close()


def count(d, code):
    d[str(code)] = d.get(str(code), 0) + 1


def become(uid):
    if os.getuid() == 0 and uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


# ---- the roles; each returns a dict that goes to the parent ----
def role_valid(a, uid, done):
    become(uid)
    m = Munge(a.sock)
    job = a.job_base + uid
    res = {"codes": {}, "lat": [], "lost": 0, "records": 0, "batches": 0}
    now = time.time()
    deadline = time.monotonic() + a.limit
    for k in range(a.batches):
        payload = batch(a.cluster, job, 1 + k * a.records, a.records, now)
        while time.monotonic() < deadline:
            st, retry, dt = post(a, a.valid_addr, m.encode(payload))
            count(res["codes"], st)
            res["lat"].append(dt)
            if st == 200:
                res["records"] += a.records
                res["batches"] += 1
                break
            if st == 0:
                res["lost"] += 1
                break  # the service closed a valid client's request: lost (the test fails)
            if st in (429, 503):
                time.sleep(min(retry or 1, 2))
                continue
            break  # any other answer: refused, also a failure (counted by code)
    return res


def role_abuser(a, uid, stop):
    become(uid)
    m = Munge(a.sock)
    import threading
    res = {"codes": {}, "records": 0}
    lock = threading.Lock()
    now = time.time()

    def run(t):
        e = 1 + t * 100000
        while not stop.is_set():
            st, _, _ = post(a, "127.0.0.50", m.encode(batch(a.cluster, a.job_base + uid, e, 1, now)))
            with lock:
                count(res["codes"], st)
                if st == 200:
                    res["records"] += 1
            e += 1

    ts = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return res


def role_badauth(a, uid, stop):
    m = Munge(a.sock)
    forger = Munge(a.sock2)
    res = {"codes": {}}
    now = time.time()
    i = 0
    while not stop.is_set():
        i += 1
        payload = batch(a.cluster, a.job_base + 1, 900000 + i, 1, now)  # would be root's: valid
        kind = i % 3
        if kind == 0:
            body = b"MUNGE:" + os.urandom(64).hex().encode() + b":"
        elif kind == 1:
            body = forger.encode(payload)
        else:
            body = m.encode(payload)
            post(a, "127.0.0.42", body)  # the first use (it may land); then the replay
        st, _, _ = post(a, "127.0.0.42", body)
        count(res["codes"], st)
        if kind == 2 and st == 200:
            res["replay_accepted"] = res.get("replay_accepted", 0) + 1
    return res


def role_garbage(a, uid, stop):
    res = {"codes": {}}
    while not stop.is_set():
        count(res["codes"], raw(a, "127.0.0.40", os.urandom(random.randint(1, 4096)) + b"\r\n\r\n"))
        time.sleep(0.01)
    return res


def role_slow(a, uid, stop):
    """Connections that send a request one byte every 0.25 s (and 8 at once per address)."""
    res = {"codes": {}}
    req = (b"POST /v1/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-munge\r\n"
           b"Content-Length: 40\r\n\r\n" + b"M" * 40)
    socks = []
    for i in range(32):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.bind(("127.0.0.%d" % (30 + i // 8), 0))
            s.connect(("127.0.0.1", a.port))
            socks.append([s, 0])
        except OSError:
            count(res["codes"], "connect_failed")
            s.close()
    while not stop.is_set() and socks:
        for e in list(socks):
            s, sent = e
            try:
                if sent < len(req):
                    s.sendall(req[sent:sent + 1])
                    e[1] += 1
                else:
                    s.settimeout(0.01)
                    data = s.recv(64)
                    count(res["codes"], status_of(data))
                    s.close()
                    socks.remove(e)
            except socket.timeout:
                pass
            except OSError:
                count(res["codes"], "closed")
                s.close()
                socks.remove(e)
        stop.wait(0.25)
    for s, sent in socks:
        count(res["codes"], "unfinished")
        s.close()
    return res


def role_oversize(a, uid, stop):
    res = {"codes": {}}
    i = 0
    while not stop.is_set():
        i += 1
        if i % 2:
            # Announced: 16 MiB never sent; the answer must come at once.
            code = raw(a, "127.0.0.41", b"POST /v1/records HTTP/1.1\r\nHost: x\r\n"
                       b"Content-Type: application/x-munge\r\nContent-Length: 16777216\r\n\r\n")
        else:
            c = conn(a, "127.0.0.41")
            try:
                def chunks():
                    for _ in range(a.max_request // 65536 + 2):
                        yield b"B" * 65536
                c.request("POST", "/v1/records", body=chunks(),
                          headers={"Content-Type": "application/x-munge"}, encode_chunked=True)
                r = c.getresponse()
                r.read()
                code = r.status
            except (OSError, http.client.HTTPException):
                code = "closed"
            finally:
                c.close()
        count(res["codes"], code)
        stop.wait(0.05)
    return res


def role_cluster(a, uid, stop):
    """Valid credentials of uid, refused for what they say: another cluster, another uid's job,
    a job nobody knows."""
    become(uid)
    m = Munge(a.sock)
    res = {"codes": {}}
    now = time.time()
    i = 0
    while not stop.is_set():
        i += 1
        if i % 3 == 0:
            payload = batch("othercluster", a.job_base + uid, i, 1, now)
        elif i % 3 == 1:
            payload = batch(a.cluster, a.job_base + a.valid_uids[0], 800000 + i, 1, now)
        else:
            payload = batch(a.cluster, 999999, i, 1, now)
        st, _, _ = post(a, "127.0.0.43", m.encode(payload))
        count(res["codes"], st)
        stop.wait(0.1)  # under the default --rate-limit (20 a second)
    return res


def role_flood(a, uid, stop):
    res = {"codes": {}, "closed_at_once": 0, "opened": 0, "waves": 0}
    while not stop.is_set():
        held = []
        for _ in range(3 * a.per_ip):
            s = socket.socket()
            s.settimeout(1)
            try:
                s.bind(("127.0.0.66", 0))
                s.connect(("127.0.0.1", a.port))
                held.append(s)
                res["opened"] += 1
            except OSError:
                s.close()
        stop.wait(0.5)
        for s in held:
            s.settimeout(0.2)
            try:
                if s.recv(1) == b"":
                    res["closed_at_once"] += 1
            except socket.timeout:
                pass
            except OSError:
                res["closed_at_once"] += 1
        stop.wait(1.5)
        for s in held:
            s.close()
        res["waves"] += 1
        stop.wait(0.2)
    return res


def role_probe(a, uid, stop):
    res = {"n": 0, "max": 0.0, "late": 0, "failed": 0}
    while not stop.is_set():
        t0 = time.monotonic()
        c = conn(a, "127.0.0.9", timeout=a.probe_limit * 5)
        try:
            c.request("GET", "/v1/stats")
            r = c.getresponse()
            r.read()
            ok = r.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
        finally:
            c.close()
        dt = time.monotonic() - t0
        res["n"] += 1
        res["max"] = max(res["max"], dt)
        res["late"] += dt > a.probe_limit
        res["failed"] += not ok
        stop.wait(0.2)
    return res


def rss_kib(pid, key="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def role_rss(a, uid, stop):
    peak = 0
    while not stop.is_set():
        peak = max(peak, rss_kib(a.pid))
        stop.wait(0.05)
    return {"peak_sampled_kib": peak}


def worker(name, fn, a, uid, stop, q):
    try:
        q.put((name, fn(a, uid, stop)))
    except Exception as e:  # the parent reports it
        q.put((name, {"error": "%s: %r" % (name, e)}))


def stats(a):
    c = conn(a, "127.0.0.9")
    c.request("GET", "/v1/stats")
    return json.loads(c.getresponse().read())


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True, help="dlsched-ingestd's pid (RSS)")
    p.add_argument("--db", required=True)
    p.add_argument("--sock", required=True, help="munged's socket")
    p.add_argument("--sock2", required=True, help="another munged's socket (forged credentials)")
    p.add_argument("--cluster", default="loadc")
    p.add_argument("--valid-addr", default="127.0.0.2")
    p.add_argument("--valid-uids", default="2001,2002,2003,2004,2005,2006,2007,2008")
    p.add_argument("--abuser-uid", type=int, default=2099)
    p.add_argument("--other-uid", type=int, default=2050)
    p.add_argument("--job-base", type=int, default=100000)
    p.add_argument("--batches", type=int, default=120, help="per valid uid")
    p.add_argument("--records", type=int, default=8, help="epochs per valid batch")
    p.add_argument("--per-ip", type=int, default=16, help="the service's --max-connections-per-ip")
    p.add_argument("--max-request", type=int, default=262144)
    p.add_argument("--limit", type=float, default=60, help="seconds for the valid clients")
    p.add_argument("--probe-limit", type=float, default=1.0)
    p.add_argument("--rss-growth-mib", type=float, default=32, help="peak RSS over the start, at most (negative: not checked)")
    a = p.parse_args()
    a.valid_uids = [int(u) for u in a.valid_uids.split(",")]

    # The jobs' owners are in the DB (as --owner-lookup slurm would have remembered them).
    db = sqlite3.connect(a.db)
    for u in a.valid_uids + [a.abuser_uid, a.other_uid]:
        db.execute("INSERT INTO jobs (cluster, job_id, user, gpus) VALUES (?, ?, ?, 1)",
                   (a.cluster, a.job_base + u, str(u)))
    db.execute("INSERT INTO jobs (cluster, job_id, user, gpus) VALUES (?, ?, 'root', 1)",
               (a.cluster, a.job_base + 1))
    db.commit()
    db.close()

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    stop = ctx.Event()
    rss_start = rss_kib(a.pid)
    s0 = stats(a)
    background = [("abuser", role_abuser, a.abuser_uid), ("badauth", role_badauth, None),
                  ("garbage", role_garbage, None), ("slow", role_slow, None),
                  ("oversize", role_oversize, None), ("cluster", role_cluster, a.other_uid),
                  ("flood", role_flood, None), ("probe", role_probe, None), ("rss", role_rss, None)]
    procs = []
    for name, fn, uid in background:
        pr = ctx.Process(target=worker, args=(name, fn, a, uid, stop, q))
        pr.start()
        procs.append(pr)
    time.sleep(1)  # the invalid load first, then the valid clients into it
    t0 = time.monotonic()
    valid = []
    for u in a.valid_uids:
        pr = ctx.Process(target=worker, args=("valid", role_valid, a, u, stop, q))
        pr.start()
        valid.append(pr)
    results = {}
    valid_res = []
    while len(valid_res) < len(valid):
        name, r = q.get(timeout=a.limit + 30)
        if name == "valid":
            valid_res.append(r)
        else:
            results[name] = r
    elapsed = time.monotonic() - t0
    time.sleep(0.5)
    stop.set()
    while len(results) < len(background):
        name, r = q.get(timeout=30)
        results[name] = r
    for pr in procs + valid:
        pr.join(10)
    time.sleep(1)  # the closed connections are gone
    s1 = stats(a)
    rss_after = rss_kib(a.pid)
    hwm = rss_kib(a.pid, "VmHWM")
    peak = max(hwm, results["rss"].get("peak_sampled_kib", 0))

    fails = []
    for r in list(results.values()) + valid_res:
        if "error" in r:
            fails.append(r["error"])
    lat = [x for r in valid_res for x in r.get("lat", [])]
    records_sent = sum(r.get("records", 0) for r in valid_res)
    lost = sum(r.get("lost", 0) for r in valid_res)
    vcodes = {}
    for r in valid_res:
        for k, v in r.get("codes", {}).items():
            vcodes[k] = vcodes.get(k, 0) + v
    want_records = len(a.valid_uids) * a.batches * a.records

    db = sqlite3.connect("file:%s?mode=ro" % a.db, uri=True)
    rows = {}
    for job, n in db.execute("SELECT job_id, COUNT(*) FROM epochs GROUP BY job_id"):
        rows[job] = n
    db.close()
    in_db_valid = sum(rows.get(a.job_base + u, 0) for u in a.valid_uids)
    abuser = results.get("abuser", {})
    in_db_abuser = rows.get(a.job_base + a.abuser_uid, 0)
    probe = results.get("probe", {})
    flood = results.get("flood", {})
    refused_conn = s1["connections_refused"] - s0["connections_refused"]

    # ---- checks ----
    if records_sent != want_records:
        fails.append("valid clients got %d records accepted, want %d (answers %s, lost %d)"
                     % (records_sent, want_records, vcodes, lost))
    if lost:
        fails.append("%d valid request(s) closed without an answer (--max-connections-per-ip too low "
                     "for one node's collectors, or the service dropped them)" % lost)
    if in_db_valid != want_records:
        fails.append("the DB has %d epochs of the valid jobs, want %d" % (in_db_valid, want_records))
    if in_db_abuser != abuser.get("records", -1):
        fails.append("the DB has %d epochs of the abuser's job, its 200 answers say %d"
                     % (in_db_abuser, abuser.get("records", -1)))
    if not abuser.get("codes", {}).get("429"):
        fails.append("the abuser was never answered 429: %s" % abuser.get("codes"))
    if probe.get("n", 0) < 5 or probe.get("late") or probe.get("failed"):
        fails.append("/v1/stats probes: %d, %d over %.1f s, %d failed, slowest %.2f s"
                     % (probe.get("n", 0), probe.get("late", 0), a.probe_limit, probe.get("failed", 0),
                        probe.get("max", 0)))
    if a.rss_growth_mib >= 0 and (peak - rss_start) / 1024.0 > a.rss_growth_mib:
        fails.append("peak RSS %.1f MiB, %.1f MiB over the start (bound %g MiB)"
                     % (peak / 1024.0, (peak - rss_start) / 1024.0, a.rss_growth_mib))
    if flood.get("closed_at_once", 0) < flood.get("waves", 0) * 2 * a.per_ip * 0.9 or refused_conn <= 0:
        fails.append("flood: %d of %d connections closed at once in %d waves (limit %d per address); "
                     "connections_refused +%d" % (flood.get("closed_at_once", 0), flood.get("opened", 0),
                                                  flood.get("waves", 0), a.per_ip, refused_conn))
    if results.get("badauth", {}).get("replay_accepted"):
        fails.append("a replayed credential was accepted")
    for name, want in (("badauth", {"401"}), ("oversize", {"413"}), ("cluster", {"403"})):
        got = set(results.get(name, {}).get("codes", {}))
        if not got or not got <= want | {"0", "closed"}:
            fails.append("%s: answers %s, want only %s" % (name, results.get(name, {}).get("codes"),
                                                           sorted(want)))
    refused = s1["refused"]
    for reason in ("bad_credential", "wrong_cluster", "wrong_user", "unknown_job", "too_large",
                   "rate_limited"):
        if refused.get(reason, 0) - s0["refused"].get(reason, 0) <= 0:
            fails.append("stats: no %s counted" % reason)

    figures = {
        "valid_records": in_db_valid,
        "valid_batches": sum(r.get("batches", 0) for r in valid_res),
        "valid_seconds": round(elapsed, 2),
        "valid_records_per_s": round(in_db_valid / elapsed, 1) if elapsed > 0 else 0,
        "valid_posts": len(lat),
        "valid_p50_ms": round(pct(lat, 50) * 1000, 1),
        "valid_p99_ms": round(pct(lat, 99) * 1000, 1),
        "valid_answers": vcodes,
        "valid_lost": lost,
        "probe_count": probe.get("n", 0),
        "probe_max_ms": round(probe.get("max", 0) * 1000, 1),
        "rss_start_mib": round(rss_start / 1024.0, 1),
        "rss_peak_mib": round(peak / 1024.0, 1),
        "rss_after_mib": round(rss_after / 1024.0, 1),
        "connections_refused": refused_conn,
        "flood_opened": flood.get("opened", 0),
        "flood_closed_at_once": flood.get("closed_at_once", 0),
        "answers": {n: results.get(n, {}).get("codes", {}) for n in
                    ("abuser", "badauth", "garbage", "slow", "oversize", "cluster")},
        "abuser_records": in_db_abuser,
        "refused": {k: refused[k] - s0["refused"].get(k, 0) for k in sorted(refused)
                    if refused[k] - s0["refused"].get(k, 0)},
    }
    print("%-28s %s" % ("figure", "value"))
    for k, v in figures.items():
        print("%-28s %s" % (k, v if not isinstance(v, dict) else json.dumps(v, sort_keys=True)))
    print("JSON " + json.dumps(figures, sort_keys=True))
    for f in fails:
        print("FAIL: " + f)
    print("load: %d failure(s)" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
