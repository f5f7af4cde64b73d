#!/usr/bin/env python3
"""Clients that misbehave, for t5911-serve-faults.sh (gitpack serve).

Run as "python3 lib-serve-faults.py COMMAND ARGS..."; every command
talks to 127.0.0.1 only, bounds each wait by a timeout and prints what
it saw on standard output, one fact a line, for the script to compare.
Exit status: 0 when the command ran (whatever it saw), 2 on a usage
error, 1 when the exchange itself failed in a way the command names.

Commands:
  malformed PORT CASE      send the request CASE (see CASES); print the
                           status answered ("none" when the connection
                           closed first), "continue" if a "100 Continue"
                           came, and "closed" if the server then closed
  trickle PORT DELAY       send a request head one byte every DELAY
                           seconds; print the status and the seconds
                           from the first byte to the answer
  stall-body PORT          send a head and part of its body, then
                           nothing; print the status and the seconds
  idle PORT REPO           one request on a keep-alive connection, then
                           silence: print the seconds until the server
                           closes
  hold PORT N READY STOP   open N connections (alternating HTTP ones
                           that sent nothing and ones that sent half a
                           head), write READY, wait for the file STOP
                           (at most 120 s), close them all
  fetch-drop PORT REPO BYTES OID...
                           a protocol v2 fetch POST of the OIDs; read
                           BYTES bytes of the answer and close
  git-drop PORT REPO STAGE OID...
                           git:// upload-pack, closed after STAGE:
                           "advert" (the ref advertisement read halfway),
                           "wants" (wants sent, no done), "haves" (a
                           have sent), "pack" (some pack bytes read)
  queue PORT GITPORT REPO [HOLD]
                           the queue test for --workers=1 --max-queue=1:
                           see queue_test()
  conns PORT N             open N connections and print how many the
                           server closed at once
  steady-body, pipe-trickle, slow-reader, git-malformed, git-cases,
  git-trickle, tls-faults, flood, get
                           see each function's docstring
  exec-limited [fsize=BYTES] [nofile=N] -- CMD...
                           run CMD under those resource limits
  soak KEY=VALUE...        see soak_main()
"""

import gzip
import os
import random
import socket
import subprocess
import sys
import threading
import time
import zlib

HOST = "127.0.0.1"


def connect(port, timeout=10.0):
    s = socket.create_connection((HOST, int(port)), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_head(s, deadline):
    """Read until the end of a response head; returns (status, head bytes,
    the bytes after it) or (None, bytes, b"") when the connection ends
    first."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = s.recv(65536)
        except (ConnectionResetError, socket.timeout, OSError):
            return None, buf, b""
        if not data:
            return None, buf, b""
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    line = head.split(b"\r\n", 1)[0].split(b" ")
    try:
        status = int(line[1])
    except (IndexError, ValueError):
        return None, buf, b""
    return status, head, rest


def wait_closed(s, timeout):
    """Whether the peer closes (EOF or reset) within timeout seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            data = s.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            return True
        if not data:
            return True
    return False


def header(head, name):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name.lower().encode():
            return v.strip().decode("latin-1")
    return None


# ---- malformed requests ---------------------------------------------------

GET = b"GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n"
POST = (b"POST /repo.git/git-upload-pack HTTP/1.1\r\nHost: h\r\n"
        b"Content-Type: application/x-git-upload-pack-request\r\n")


def gz(data):
    return gzip.compress(data, 9)


def bomb(mib):
    """A gzip member that inflates to mib MiB of zeros, made without
    holding them."""
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    out = [c.compress(block) for _ in range(mib)]
    out.append(c.flush())
    return b"".join(out)


def chunk(data, size=4096):
    out = b""
    for i in range(0, len(data), size):
        part = data[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


# name: the bytes sent (a function of the server's --max-body-mb, MB)
CASES = {
    "garbage": lambda mb: b"\x00\x01\x02 garbage \xff\xfe\r\n\r\n",
    "no-version": lambda mb: b"GET /repo.git/info/refs\r\n\r\n",
    "http09": lambda mb: b"GET /\r\n\r\n",
    "version-2": lambda mb: b"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
    "version-3": lambda mb: b"GET / HTTP/3.1\r\nHost: h\r\n\r\n",
    "version-junk": lambda mb: b"GET / HTTP/1.x\r\nHost: h\r\n\r\n",
    "version-lower": lambda mb: b"GET / http/1.1\r\nHost: h\r\n\r\n",
    "no-colon": lambda mb: GET + b"NoColonHere\r\n\r\n",
    "space-before-colon": lambda mb: GET + b"X-Thing : v\r\n\r\n",
    "obs-fold": lambda mb: GET + b"X-Thing: a\r\n  folded\r\n\r\n",
    "control-in-value": lambda mb: GET + b"X-Thing: a\x01b\r\n\r\n",
    "two-hosts": lambda mb: GET + b"Host: other\r\n\r\n",
    "no-host": lambda mb: b"GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\n\r\n",
    "bare-cr": lambda mb: GET + b"X-Thing: a\rb\r\n\r\n",
    "two-lengths": lambda mb: POST + b"Content-Length: 4\r\nContent-Length: 5\r\n\r\n0000",
    "length-list": lambda mb: POST + b"Content-Length: 4, 5\r\n\r\n0000",
    "length-sign": lambda mb: POST + b"Content-Length: +4\r\n\r\n0000",
    "length-huge-number": lambda mb: POST + b"Content-Length: 99999999999999999999999\r\n\r\n",
    "length-and-chunked": lambda mb: POST + b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n0000\r\n0\r\n\r\n",
    "te-gzip": lambda mb: POST + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "chunk-size-junk": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n0000\r\n0\r\n\r\n",
    "chunk-size-negative": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\n-4\r\n0000\r\n0\r\n\r\n",
    "chunk-size-17-digits": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
    "chunk-size-space": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\n4 4\r\n0000\r\n0\r\n\r\n",
    "chunk-no-crlf": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\n4\r\n0000XX0\r\n\r\n",
    "gzip-truncated": lambda mb: (lambda z: POST + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(z) + z)(gz(b"0014command=ls-refs\n0000" * 50)[:-10]),
    "gzip-garbage": lambda mb: POST + b"Content-Encoding: gzip\r\nContent-Length: 8\r\n\r\nnot gzip",
    "gzip-two-members": lambda mb: (lambda z: POST + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(z) + z)(gz(b"0000") + gz(b"0000")),
    "encoding-br": lambda mb: POST + b"Content-Encoding: br\r\nContent-Length: 4\r\n\r\n0000",
    "expect-other": lambda mb: POST + b"Expect: 200-ok\r\nContent-Length: 4\r\n\r\n0000",
    "percent-nul": lambda mb: b"GET /repo.git%00/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n",
    "percent-bad": lambda mb: b"GET /repo.git%zz/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n",
    "dot-dot": lambda mb: b"GET /%2e%2e/repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n",
    "method-lower": lambda mb: b"get /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n",
    "method-delete": lambda mb: b"DELETE /repo.git HTTP/1.1\r\nHost: h\r\n\r\n",
    "receive-pack": lambda mb: b"GET /repo.git/info/refs?service=git-receive-pack HTTP/1.1\r\nHost: h\r\n\r\n",
    "huge-header": lambda mb: GET + b"X-Big: " + b"a" * 20000 + b"\r\n\r\n",
    "many-headers": lambda mb: GET + b"".join(b"X-%d: v\r\n" % i for i in range(150)) + b"\r\n",
    "huge-target": lambda mb: b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: h\r\n\r\n",
    "endless-target": lambda mb: b"GET /" + b"a" * 40000,
    "endless-blank-lines": lambda mb: b"\r\n" * 20000,
    "random-bytes": lambda mb: random.Random(5911).getrandbits(8 * 40000).to_bytes(40000, "little"),
    "huge-length": lambda mb: POST + b"Content-Length: %d\r\n\r\n" % ((mb + 1) << 20),
    "huge-length-expect": lambda mb: POST + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % ((mb + 1) << 20),
    "huge-chunk": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n" % ((mb + 1) << 20),
    "huge-body-sent": lambda mb: POST + b"Transfer-Encoding: chunked\r\n\r\n" + chunk(b"0" * ((mb + 1) << 20), 65536)[:-5],
    "gzip-bomb": lambda mb: (lambda z: POST + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(z) + z)(bomb(100 * mb)),
    "gzip-bomb-chunked": lambda mb: POST + b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(bomb(100 * mb), 8192),
}


def sender(s, data):
    """Send data from a thread: the server may answer (and close) before
    it has read it all, as it should for a body it refuses."""
    def run():
        try:
            s.sendall(data)
        except OSError:
            pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def malformed(port, case, mb="1"):
    """Prints one line: the status, "continue" if a 100 Continue came
    first, "closed" if the server closed the connection after."""
    data = CASES[case](int(mb))
    s = connect(port)
    t = sender(s, data)
    deadline = time.monotonic() + 20
    status, head, rest = read_head(s, deadline)
    out = []
    if status == 100:
        out.append("continue")
        buf = rest
        # a second head may follow in the same bytes
        if b"\r\n\r\n" in buf:
            line = buf.split(b"\r\n", 1)[0].split(b" ")
            status = int(line[1])
        else:
            status, head, rest = read_head(s, deadline)
    out.insert(0, str(status) if status else "none")
    # a refused request is closed right after its answer; one answered
    # with keep-alive stays open, which only a wait can tell
    if status and wait_closed(s, 1):
        out.append("closed")
    t.join(5)
    s.close()
    print(" ".join(out))


# ---- slow clients ---------------------------------------------------------------

def trickle(port, delay):
    delay = float(delay)
    data = GET + b"X-Pad: " + b"p" * 200 + b"\r\n\r\n"
    s = connect(port)
    start = time.monotonic()
    status = None
    for i in range(len(data)):
        try:
            s.sendall(data[i:i + 1])
        except OSError:
            break
        # the answer may have come: look without waiting
        s.setblocking(False)
        try:
            peek = s.recv(65536, socket.MSG_PEEK)
        except BlockingIOError:
            peek = None
        except OSError:
            peek = b""
        s.setblocking(True)
        if peek is not None:
            break
        time.sleep(delay)
    status, head, _ = read_head(s, time.monotonic() + 10)
    elapsed = time.monotonic() - start
    print(status if status else "none")
    print("%.1f" % elapsed)
    print("closed" if wait_closed(s, 5) else "open")


def stall_body(port):
    s = connect(port)
    start = time.monotonic()
    s.sendall(POST + b"Content-Length: 100\r\n\r\n0014command=ls-refs")
    status, head, _ = read_head(s, time.monotonic() + 30)
    print(status if status else "none")
    print("%.1f" % (time.monotonic() - start))
    print("closed" if wait_closed(s, 5) else "open")


def steady_body(port, repo, delay):
    """A body that arrives a byte every DELAY seconds: slower in total
    than --body-timeout, but never silent that long."""
    s = connect(port)
    body = b"0000"
    s.sendall(b"POST /%s/git-upload-pack HTTP/1.1\r\nHost: h\r\n"
              b"Content-Type: application/x-git-upload-pack-request\r\n"
              b"Git-Protocol: version=2\r\nContent-Length: %d\r\n\r\n" % (repo.encode(), len(body)))
    start = time.monotonic()
    for i in range(len(body)):
        time.sleep(float(delay))
        s.sendall(body[i:i + 1])
    status, head, _ = read_head(s, time.monotonic() + 10)
    print(status if status else "none")
    print("%.1f" % (time.monotonic() - start))


def read_response_body(s, head, rest, deadline):
    """The rest of a response with a length or chunked; returns bytes."""
    body = rest
    length = header(head, "Content-Length")
    if length is not None:
        n = int(length)
        while len(body) < n:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            data = s.recv(65536)
            if not data:
                raise EOFError("short body")
            body += data
        return body[:n]
    if (header(head, "Transfer-Encoding") or "").lower() == "chunked":
        while not (body.endswith(b"\r\n0\r\n\r\n") or body == b"0\r\n\r\n"):
            s.settimeout(max(0.01, deadline - time.monotonic()))
            data = s.recv(65536)
            if not data:
                raise EOFError("short chunked body")
            body += data
        return body
    return body


def get(port, path):
    """GET PATH on a fresh connection; print the body."""
    s = connect(port)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n" % path.encode())
    deadline = time.monotonic() + 20
    status, head, rest = read_head(s, deadline)
    if status != 200:
        raise SystemExit("GET %s: %s" % (path, status))
    sys.stdout.write(read_response_body(s, head, rest, deadline).decode())


def idle(port, repo):
    s = connect(port)
    s.sendall(b"GET /%s/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n" % repo.encode())
    deadline = time.monotonic() + 20
    status, head, rest = read_head(s, deadline)
    read_response_body(s, head, rest, deadline)
    start = time.monotonic()
    print(status)
    print("closed" if wait_closed(s, 30) else "open")
    print("%.1f" % (time.monotonic() - start))


# ---- many connections -------------------------------------------------------------

def raise_fd_limit():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def hold(port, n, ready, stop):
    raise_fd_limit()
    socks = []
    for i in range(int(n)):
        s = socket.socket()
        s.connect((HOST, int(port)))
        if i % 2:
            s.sendall(b"GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHo")
        socks.append(s)
    with open(ready, "w") as f:
        f.write("%d\n" % len(socks))
    end = time.monotonic() + 120
    while not os.path.exists(stop) and time.monotonic() < end:
        time.sleep(0.1)
    # the ones the server closed meanwhile (it should not have: timeouts are long)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print("closed-by-server %d" % closed)


def conns(port, n):
    raise_fd_limit()
    socks = []
    for _ in range(int(n)):
        s = socket.socket()
        s.connect((HOST, int(port)))
        socks.append(s)
    time.sleep(0.5)
    closed = 0
    for s in socks:
        if wait_closed(s, 0.2):
            closed += 1
    print("closed %d" % closed)
    for s in socks:
        s.close()


# ---- fetches that stop halfway ------------------------------------------------------

def pkt(data):
    if isinstance(data, str):
        data = data.encode()
    return b"%04x" % (len(data) + 4) + data


def v2_fetch_body(oids, algo="sha1", extra=()):
    body = pkt("command=fetch\n")
    if algo != "sha1":
        body += pkt("object-format=%s\n" % algo)
    body += b"0001"
    for x in extra:
        body += pkt(x)
    for oid in oids:
        body += pkt("want %s\n" % oid)
    body += pkt("done\n") + b"0000"
    return body


def fetch_drop(port, repo, nbytes, *oids):
    algo = "sha1"
    if oids and oids[-1].startswith("algo="):
        algo = oids[-1][5:]
        oids = oids[:-1]
    body = v2_fetch_body(oids, algo, ("ofs-delta\n", "no-progress\n"))
    s = connect(port)
    s.sendall(b"POST /%s/git-upload-pack HTTP/1.1\r\nHost: h\r\n"
              b"Content-Type: application/x-git-upload-pack-request\r\n"
              b"Git-Protocol: version=2\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % (repo.encode(), len(body)) + body)
    got = 0
    want = int(nbytes)
    s.settimeout(30)
    while got < want:
        data = s.recv(min(65536, want - got))
        if not data:
            break
        got += len(data)
    # a reset rather than a FIN: the harshest goodbye
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
    print("read %d" % got)


def read_pkt(s):
    n = b""
    while len(n) < 4:
        d = s.recv(4 - len(n))
        if not d:
            raise EOFError
        n += d
    size = int(n, 16)
    if size < 4:
        return size, b""
    data = b""
    while len(data) < size - 4:
        d = s.recv(size - 4 - len(data))
        if not d:
            raise EOFError
        data += d
    return size, data


def git_drop(port, repo, stage, *oids):
    s = connect(port)
    s.settimeout(30)
    s.sendall(pkt(b"git-upload-pack /%s\0host=localhost\0" % repo.encode()))
    if stage == "advert":
        s.recv(20)
    else:
        while read_pkt(s)[0] != 0:
            pass
        caps = " multi_ack_detailed side-band-64k ofs-delta no-progress"
        for i, oid in enumerate(oids):
            s.sendall(pkt("want %s%s\n" % (oid, caps if i == 0 else "")))
        s.sendall(b"0000")
        if stage in ("haves", "pack"):
            s.sendall(pkt("have %s\n" % ("1" * len(oids[0]))))
            s.sendall(b"0000")
            # NAK for the round
            read_pkt(s)
        if stage == "pack":
            s.sendall(pkt("done\n"))
            got = 0
            while got < 4096:
                d = s.recv(4096)
                if not d:
                    break
                got += len(d)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
    print("dropped at %s" % stage)


# ---- the queue --------------------------------------------------------------------------

def queue_test(port, gitport, repo, hold_seconds="0"):
    """With --workers=1 --max-queue=1: a git:// session that says nothing
    after the advertisement holds the only worker; one HTTP request then
    waits in the queue; the next HTTP request is answered 429 at once,
    a git:// one "ERR server busy". When the session ends the queued
    request is answered 200."""
    holder = connect(gitport)
    holder.settimeout(10)
    holder.sendall(pkt(b"git-upload-pack /%s\0host=localhost\0" % repo.encode()))
    while read_pkt(holder)[0] != 0:
        pass
    print("holder advertised")
    req = b"GET /%s/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n" % repo.encode()
    queued = connect(port)
    queued.sendall(req)
    time.sleep(0.5)
    extra = connect(port)
    extra.sendall(req)
    status, head, _ = read_head(extra, time.monotonic() + 10)
    print("extra http %s retry-after %s" % (status, header(head, "Retry-After") if status else None))
    g = connect(gitport)
    g.settimeout(10)
    g.sendall(pkt(b"git-upload-pack /%s\0host=localhost\0" % repo.encode()))
    try:
        size, data = read_pkt(g)
        print("extra git %s" % data.decode(errors="replace").strip())
    except (EOFError, OSError) as e:
        print("extra git error %s" % e)
    # the queued one is still waiting
    queued.setblocking(False)
    try:
        early = queued.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        early = None
    queued.setblocking(True)
    print("queued answered early" if early is not None else "queued waiting")
    time.sleep(float(hold_seconds))
    holder.sendall(b"0000")
    holder.close()
    status, head, rest = read_head(queued, time.monotonic() + 20)
    print("queued http %s" % status)


# ---- the soak ---------------------------------------------------------------------------

def vmrss_kb(pid):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise OSError("no VmRSS")


class Soak:
    """Clients of every kind against the servers, for a bounded time.

    Workers loop over full clones, --depth=1 clones, fetches into a
    clone they keep (the repositories grow: a pusher adds a commit every
    few seconds) and ls-remote, over http:// with protocol v0 and v2 and
    git://, to a server with the cache and one without. Disconnectors
    start fetches and drop them: raw v2 POSTs cut at a random byte,
    git:// sessions dropped at a random stage, and git clones killed
    after a random delay. Every operation of a worker must succeed; what
    a disconnector does may fail, and is not counted."""

    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.failures = []
        self.counts = {}
        self.stop = threading.Event()
        self.rss = {pid: [] for pid in a["pids"]}
        self.rng = random.Random(int(a.get("seed", "5911")))

    def log(self, msg):
        with self.lock:
            sys.stdout.write(msg + "\n")
            sys.stdout.flush()

    def count(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def fail(self, what, detail):
        with self.lock:
            self.failures.append((what, detail))
        self.log("FAIL %s: %s" % (what, detail[-2000:]))

    def git(self, args, what, timeout=60, env=None):
        try:
            p = subprocess.run(["git"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            self.fail(what, "timed out after %ds: git %s" % (timeout, " ".join(args)))
            return None
        if p.returncode:
            self.fail(what, "exit %d: git %s\n%s" % (p.returncode, " ".join(args),
                                                    p.stderr.decode(errors="replace")))
            return None
        return p.stdout

    def urls(self, repo, rng):
        kind = rng.choice(["http", "http", "git"])
        server = rng.choice(["cache", "nocache"])
        port = self.a["%s-%s" % (kind, server)]
        version = rng.choice(["0", "2"])
        return "%s://127.0.0.1:%s/%s" % (kind, port, repo), version, "%s-%s-v%s" % (kind, server, version)

    def worker(self, n):
        rng = random.Random(self.rng.random())
        work = os.path.join(self.a["dir"], "w%d" % n)
        os.makedirs(work, exist_ok=True)
        kept = {}
        i = 0
        while not self.stop.is_set():
            i += 1
            repo = rng.choice(self.a["repos"])
            url, version, how = self.urls(repo, rng)
            op = rng.choice(["clone", "clone", "shallow", "fetch", "fetch", "ls-remote"])
            cfg = ["-c", "protocol.version=%s" % version]
            what = "%s %s %s" % (op, repo, how)
            dest = os.path.join(work, "c%d" % i)
            if op == "clone" or op == "shallow":
                extra = ["--depth=1"] if op == "shallow" else []
                if self.git(cfg + ["clone", "-q", "--bare"] + extra + [url, dest], what) is not None:
                    # the clone checked connectivity; check what it holds, cheaply
                    self.git(["-C", dest, "rev-parse", "--verify", "HEAD^{commit}"], what + " verify")
                subprocess.run(["rm", "-rf", dest])
            elif op == "fetch":
                if repo not in kept:
                    dest = os.path.join(work, "keep-" + repo.replace("/", "_"))
                    if self.git(cfg + ["clone", "-q", "--bare", url, dest], what + " (first clone)") is None:
                        subprocess.run(["rm", "-rf", dest])
                        continue
                    kept[repo] = dest
                # any server, any protocol: each has the same repository
                self.git(cfg + ["-C", kept[repo], "fetch", "-q", url,
                                "+refs/heads/*:refs/heads/*"], what)
            else:
                self.git(cfg + ["ls-remote", url], what)
            self.count(op)
        with self.lock:
            self.kept_clones = getattr(self, "kept_clones", []) + list(kept.items())

    def tip(self, repo):
        p = subprocess.run(["git", "-C", os.path.join(self.a["base"], repo), "rev-parse", "main"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return p.stdout.decode().strip()

    def disconnector(self, n):
        rng = random.Random(self.rng.random())
        work = os.path.join(self.a["dir"], "d%d" % n)
        os.makedirs(work, exist_ok=True)
        i = 0
        while not self.stop.is_set():
            i += 1
            repo = rng.choice(self.a["repos"])
            algo = "sha256" if "sha256" in repo else "sha1"
            how = rng.choice(["raw-http", "raw-git", "clone-kill"])
            server = rng.choice(["cache", "nocache"])
            try:
                if how == "raw-http":
                    self.raw_http_drop(self.a["http-" + server], repo, self.tip(repo), algo,
                                       rng.randint(1, 300000))
                elif how == "raw-git":
                    self.raw_git_drop(self.a["git-" + server], repo, self.tip(repo),
                                      rng.choice(["advert", "wants", "haves", "pack"]))
                else:
                    url, version, _ = self.urls(repo, rng)
                    dest = os.path.join(work, "c%d" % i)
                    p = subprocess.Popen(["git", "-c", "protocol.version=" + version, "clone",
                                          "-q", "--bare", url, dest],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(rng.uniform(0, 0.3))
                    p.kill()
                    p.wait()
                    subprocess.run(["rm", "-rf", dest])
            except (OSError, EOFError, ValueError):
                pass
            self.count("drop-" + how)

    def raw_http_drop(self, port, repo, oid, algo, nbytes):
        body = v2_fetch_body([oid], algo, ("ofs-delta\n",))
        s = connect(port)
        try:
            s.sendall(b"POST /%s/git-upload-pack HTTP/1.1\r\nHost: h\r\n"
                      b"Content-Type: application/x-git-upload-pack-request\r\n"
                      b"Git-Protocol: version=2\r\nContent-Length: %d\r\n\r\n"
                      % (repo.encode(), len(body)) + body)
            got = 0
            s.settimeout(30)
            while got < nbytes:
                data = s.recv(min(65536, nbytes - got))
                if not data:
                    break
                got += len(data)
        finally:
            # half of them reset (SO_LINGER 0), half close politely
            if nbytes % 2:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            s.close()

    def raw_git_drop(self, port, repo, oid, stage):
        s = connect(port)
        s.settimeout(30)
        try:
            s.sendall(pkt(b"git-upload-pack /%s\0host=localhost\0" % repo.encode()))
            if stage == "advert":
                s.recv(20)
                return
            while read_pkt(s)[0] != 0:
                pass
            s.sendall(pkt("want %s multi_ack_detailed side-band-64k ofs-delta\n" % oid))
            s.sendall(b"0000")
            if stage == "wants":
                return
            s.sendall(pkt("have %s\n" % ("1" * len(oid))) + b"0000")
            read_pkt(s)
            if stage == "haves":
                return
            s.sendall(pkt("done\n"))
            s.recv(4096)
        finally:
            s.close()

    def pusher(self):
        n = 0
        while not self.stop.wait(float(self.a.get("push-interval", "3"))):
            n += 1
            for repo, work in zip(self.a["repos"], self.a["pushers"]):
                name = "soak-%d.t" % n
                with open(os.path.join(work, name), "w") as f:
                    f.write("%d\n" % n + "x" * self.rng.randint(1, 5000) + "\n")
                ok = (self.git(["-C", work, "add", name], "push add") is not None and
                      self.git(["-C", work, "commit", "-q", "-m", name], "push commit") is not None and
                      self.git(["-C", work, "push", "-q", "origin", "HEAD:refs/heads/main"],
                               "push") is not None)
                if ok:
                    self.count("push")

    def sampler(self):
        start = time.monotonic()
        while not self.stop.wait(0.25):
            for pid in self.rss:
                try:
                    self.rss[pid].append((time.monotonic() - start, vmrss_kb(pid)))
                except OSError:
                    self.fail("server %s" % pid, "gone")
                    return

    def run(self):
        seconds = float(self.a["seconds"])
        threads = [threading.Thread(target=self.worker, args=(i,)) for i in range(int(self.a["workers"]))]
        threads += [threading.Thread(target=self.disconnector, args=(i,))
                    for i in range(int(self.a["disconnectors"]))]
        threads += [threading.Thread(target=self.pusher), threading.Thread(target=self.sampler)]
        for t in threads:
            t.start()
        self.stop.wait(seconds)
        self.stop.set()
        for t in threads:
            t.join()
        # the end: one more fetch into each kept clone, which must then
        # hold what the served repository holds, and pass fsck
        for repo, dest in getattr(self, "kept_clones", []):
            url = "http://127.0.0.1:%s/%s" % (self.a["http-nocache"], repo)
            self.git(["-C", dest, "fetch", "-q", url, "+refs/heads/*:refs/heads/*"], "final fetch")
            got = self.git(["-C", dest, "rev-parse", "main"], "final rev-parse")
            if got is not None and got.decode().strip() != self.tip(repo):
                self.fail("final fetch", "%s: main is %s, the server has %s" %
                          (dest, got.decode().strip(), self.tip(repo)))
            self.git(["-C", dest, "fsck", "--no-dangling", "--no-progress"], "fsck " + dest,
                     timeout=300)
        for k in sorted(self.counts):
            self.log("count %s %d" % (k, self.counts[k]))
        self.log("failures %d" % len(self.failures))
        self.log("kept-clones %d" % len(getattr(self, "kept_clones", [])))
        # flat RSS: see t5911's soak test for why this criterion
        for pid, samples in self.rss.items():
            if len(samples) < 6:
                self.log("rss %s too-few-samples" % pid)
                continue
            third = len(samples) // 3
            first = max(kb for _, kb in samples[:third])
            last = max(kb for _, kb in samples[-third:])
            bound = first * 1.5 + 20 * 1024
            self.log("rss %s first-max %d last-max %d bound %d %s" %
                     (pid, first, last, bound, "flat" if last <= bound else "GROWING"))
        return 0


def soak_main(argv):
    """soak KEY=VALUE...: dir, base, repos (comma-separated), pushers
    (their work trees, in the order of repos), pids (the servers'),
    http-cache, http-nocache, git-cache, git-nocache (ports), seconds,
    workers, disconnectors, push-interval, seed."""
    a = {}
    for arg in argv:
        k, _, v = arg.partition("=")
        a[k] = v
    for k in ("repos", "pushers", "pids"):
        a[k] = a[k].split(",")
    return Soak(a).run()


def exec_limited(*args):
    """exec-limited [fsize=BYTES] [nofile=N] -- CMD...: run CMD with files
    limited to BYTES, as on a disk that fills (a write past the limit
    fails with EFBIG: SIGXFSZ is ignored, which exec keeps), or with at
    most N descriptors (soft and hard, so CMD cannot raise it)."""
    import resource
    import signal
    args = list(args)
    while args and args[0] != "--":
        k, _, v = args.pop(0).partition("=")
        if k == "fsize":
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (int(v), int(v)))
        elif k == "nofile":
            resource.setrlimit(resource.RLIMIT_NOFILE, (int(v), int(v)))
        else:
            raise SystemExit("exec-limited: unknown limit %s" % k)
    cmd = args[1:]
    os.execvp(cmd[0], cmd)


def cpu_seconds(pid):
    with open("/proc/%s/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def flood(port, pid, n):
    """Open N connections at once and hold them 2 s: print the CPU
    seconds the server spent meanwhile and how many it closed."""
    raise_fd_limit()
    socks = []
    for _ in range(int(n)):
        s = socket.socket()
        s.connect((HOST, int(port)))
        socks.append(s)
    c0 = cpu_seconds(pid)
    time.sleep(2)
    print("cpu %.2f" % (cpu_seconds(pid) - c0))
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print("closed %d" % closed)
    for s in socks:
        s.close()


def pipe_trickle(port, first):
    """A request, and FIRST bytes of the next in the same write; the rest
    of that one a byte every 50 ms. Prints the statuses and the seconds
    until the second answer."""
    req = GET + b"X-Pad: " + b"p" * 300 + b"\r\n\r\n"
    req = req.replace(b"/repo.git/", b"/repo-sha1.git/")
    s = connect(port)
    start = time.monotonic()
    s.sendall(req + req[:int(first)])
    rest = req[int(first):]
    got = b""
    s.setblocking(False)
    for i in range(len(rest)):
        try:
            s.send(rest[i:i + 1])
        except OSError:
            break
        time.sleep(0.05)
        try:
            data = s.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not data:
            break
        got += data
        if got.count(b"HTTP/1.1 ") >= 2:
            break
    statuses = [l.split(b" ")[1].decode() for l in got.split(b"\r\n") if l.startswith(b"HTTP/1.1 ")]
    print(" ".join(statuses))
    print("%.1f" % (time.monotonic() - start))


def tls_faults(port, repo):
    """Against --https: a client that says nothing, one that speaks plain
    HTTP, one that sends half a ClientHello, one that trickles it, one
    that completes the handshake and says nothing; then a request over
    TLS. Prints one line each: what the server did and when."""
    import ssl

    def ending(s, timeout=10):
        start = time.monotonic()
        s.settimeout(timeout)
        try:
            while True:
                if not s.recv(4096):
                    return "closed %.1f" % (time.monotonic() - start)
        except socket.timeout:
            return "open"
        except OSError:
            return "closed %.1f" % (time.monotonic() - start)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    into, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(into, out)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = out.read()

    print("silent " + ending(connect(port)))
    s = connect(port)
    s.sendall(GET)
    print("plain-http " + ending(s).split(" ")[0])
    s = connect(port)
    s.sendall(hello[:len(hello) // 2])
    print("half-hello " + ending(s))
    s = connect(port)
    start = time.monotonic()
    for i in range(len(hello)):
        try:
            s.sendall(hello[i:i + 1])
        except OSError:
            break
        time.sleep(0.05)
    # the whole hello takes 25 s at this pace
    print("trickled-hello " + ending(s).split(" ")[0] + " %.1f" % (time.monotonic() - start))
    c = ctx.wrap_socket(connect(port))
    print("silent-after-handshake " + ending(c))
    c = ctx.wrap_socket(connect(port))
    c.sendall(b"GET /%s/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n" % repo.encode())
    status, head, _ = read_head(c, time.monotonic() + 10)
    print("request %s" % status)


GIT_CASES = {
    "bad-length": b"zzzzgit-upload-pack /repo-sha1.git\0",
    "length-3": b"0003",
    "length-4": b"0004",
    "flush": b"0000",
    "length-too-large": b"ffff" + b"a" * 100,
    "data-after-line": pkt(b"git-upload-pack /repo-sha1.git\0host=x\0") + b"0009done\n",
    "garbage": pkt(bytes(range(1, 40))),
    "receive-pack": pkt(b"git-receive-pack /repo-sha1.git\0host=x\0"),
    "upload-archive": pkt(b"git-upload-archive /repo-sha1.git\0host=x\0"),
    "no-path": pkt(b"git-upload-pack \0host=x\0"),
    "relative-path": pkt(b"git-upload-pack repo-sha1.git\0host=x\0"),
    "dot-dot": pkt(b"git-upload-pack /../srv/repo-sha1.git\0host=x\0"),
    "missing": pkt(b"git-upload-pack /nope.git\0host=x\0"),
    "bad-want": pkt(b"git-upload-pack /repo-sha1.git\0host=x\0"),
}


def git_malformed(port, case):
    """Send the git:// bytes CASE; print the first packet answered (an
    ERR, "advert" for a ref advertisement, or "nothing") and "closed"
    when the server then closes."""
    s = connect(port)
    s.settimeout(10)
    s.sendall(GIT_CASES[case])
    out = "nothing"
    try:
        size, data = read_pkt(s)
        out = data.decode(errors="replace").strip() if data.startswith(b"ERR ") else "advert"
        if case == "bad-want":
            while size:
                size, data = read_pkt(s)
            s.sendall(pkt("want %s side-band-64k\n" % ("1" * 40)) + b"0000")
            size, data = read_pkt(s)
            out += " then " + (data.decode(errors="replace").strip() if data else "flush")
    except (EOFError, OSError):
        pass
    print(out + (" closed" if wait_closed(s, 5) else " open"))


def git_trickle(port, delay):
    """A git:// request line a byte every DELAY seconds: print the
    seconds until the server closes."""
    data = pkt(b"git-upload-pack /repo-sha1.git\0host=" + b"h" * 100 + b"\0")
    s = connect(port)
    start = time.monotonic()
    for i in range(len(data)):
        try:
            s.sendall(data[i:i + 1])
        except OSError:
            break
        s.setblocking(False)
        try:
            peek = s.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            peek = None
        except OSError:
            peek = b""
        s.setblocking(True)
        if peek is not None:
            break
        time.sleep(float(delay))
    print("closed" if wait_closed(s, 10) else "open")
    print("%.1f" % (time.monotonic() - start))


def write_ahead(port, proto):
    """A client that goes on writing after the server refused it, as git
    archive --remote writes its arguments after the request line before
    it reads: a refused git:// request line, or an HTTP POST head over
    the body limit, then, once the refusal is surely sent, the rest in
    several writes; then it reads. A server that has closed the socket
    answers those writes with a reset: prints "write failed" (git would
    die of SIGPIPE) or "reset", else the ERR packet or the status."""
    s = connect(port)
    if proto == "git":
        s.sendall(pkt(b"git-upload-archive /nope.git\0host=x\0"))
        rest = [pkt(b"argument --prefix=" + b"x" * 1000 + b"\n") for _ in range(8)]
    else:
        s.sendall(POST + b"Content-Length: %d\r\n\r\n" % (64 << 20))
        rest = [bytes(16384) for _ in range(8)]
    time.sleep(0.3)
    try:
        for data in rest:
            s.sendall(data)
            time.sleep(0.05)
    except OSError:
        print("write failed")
        return
    try:
        if proto == "git":
            size, answer = read_pkt(s)
            out = answer.decode(errors="replace").strip()
        else:
            status, head, body = read_head(s, time.monotonic() + 10)
            out = str(status) if status else "reset"
    except (EOFError, OSError):
        out = "reset"
    s.close()
    print(out)


def bodies(port, n, kib):
    """N connections, one after the other, each sending the head of a
    POST of 2*KIB KiB and KIB KiB of its body, then holding it: prints
    per connection "open" (still reading its body) or the status it was
    answered, once all were sent."""
    n, kib = int(n), int(kib)
    socks = []
    for _ in range(n):
        s = connect(port)
        s.sendall(POST + b"Content-Length: %d\r\n\r\n" % (2 * kib << 10) + bytes(kib << 10))
        socks.append(s)
        time.sleep(0.2)
    out = []
    for s in socks:
        status, head, rest = read_head(s, time.monotonic() + 0.5)
        out.append(str(status) if status else "open")
    for s in socks:
        s.close()
    print(" ".join(out))


def slow_reader(port, repo, seconds, *oids):
    """A fetch whose answer is never read: hold the connection SECONDS
    seconds, then print whether the server closed it meanwhile."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((HOST, int(port)))
    body = v2_fetch_body(oids, "sha1", ("ofs-delta\n",))
    s.sendall(b"POST /%s/git-upload-pack HTTP/1.1\r\nHost: h\r\n"
              b"Content-Type: application/x-git-upload-pack-request\r\n"
              b"Git-Protocol: version=2\r\nContent-Length: %d\r\n\r\n" % (repo.encode(), len(body)) + body)
    time.sleep(float(seconds))
    s.close()


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    table = {
        "malformed": malformed,
        "trickle": trickle,
        "stall-body": stall_body,
        "steady-body": steady_body,
        "exec-limited": exec_limited,
        "flood": flood,
        "pipe-trickle": pipe_trickle,
        "git-malformed": git_malformed,
        "git-trickle": git_trickle,
        "slow-reader": slow_reader,
        "write-ahead": write_ahead,
        "bodies": bodies,
        "tls-faults": tls_faults,
        "idle": idle,
        "get": get,
        "hold": hold,
        "conns": conns,
        "fetch-drop": fetch_drop,
        "git-drop": git_drop,
        "queue": queue_test,
    }
    if cmd == "cases":
        print("\n".join(CASES))
        return 0
    if cmd == "git-cases":
        print("\n".join(GIT_CASES))
        return 0
    if cmd == "soak":
        return soak_main(args)
    if cmd not in table:
        print("unknown command %s" % cmd, file=sys.stderr)
        return 2
    table[cmd](*args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
