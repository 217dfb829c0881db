"""Row 6's measurement, run as its own process on the client core (python3 -m benchkit.rows.startup_probe PORT LOG
STARTS OUT_FIRST OUT_SETTINGS cmd...).

nghttpd -v stamps each frame with seconds on its own monotonic timer. A probe connection sends its SETTINGS at a
known time.monotonic(), which gives the offset between that timer and ours; then each start of the command is
timed from just before its spawn to the first request header nghttpd logs (and, for a breakdown, to the client's
first SETTINGS frame: process start, JWT, TCP and TLS done)."""
import os
import re
import socket
import ssl
import subprocess
import sys
import time

FRAME = re.compile(r"^\[id=(\d+)\] \[\s*([0-9.]+)\] (.*)$")


def is_client_settings(text):
    return text.startswith("recv SETTINGS frame") and "flags=0x00" in text


def is_request_headers(text):
    return text.startswith("recv (stream_id=") or text.startswith("recv HEADERS frame")


def first(lines, test):
    """(connection id, nghttpd's time stamp) of the first frame line passing test."""
    for line in lines:
        m = FRAME.match(line)
        if m and test(m.group(3)):
            return int(m.group(1)), float(m.group(2))
    raise SystemExit(f"start-up: no such frame in nghttpd's log: {lines[:20]}")


def new_lines(log, offset):
    time.sleep(0.2)  # nghttpd writes its log as it goes
    with open(log, "rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", "replace").splitlines()


def skew_of(port, log):
    """Our monotonic time = nghttpd's stamp + skew (to its 1 ms resolution): the probe nghttpd saw soonest."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    skew = None
    for _ in range(3):
        offset = os.path.getsize(log)
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10)) as probe:
            sent = time.monotonic()
            probe.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            probe.recv(64)
        _, stamp = first(new_lines(log, offset), is_client_settings)
        skew = sent - stamp if skew is None else max(skew, sent - stamp)
    return skew


def main(argv):
    port, log, starts = int(argv[0]), argv[1], int(argv[2])
    out_first, out_settings, cmd = argv[3], argv[4], argv[5:]
    results = cmd[cmd.index("--results") + 1] if "--results" in cmd else None
    skew = skew_of(port, log)
    with open(out_first, "a") as ff, open(out_settings, "a") as fs:
        for _ in range(starts):
            for suffix in ("", ".journal") if results else ():
                try:
                    os.remove(results + suffix)
                except FileNotFoundError:
                    pass
            offset = os.path.getsize(log)
            t0 = time.monotonic()
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60).returncode
            if rc != 0:
                raise SystemExit(f"start-up: send exited {rc}")
            lines = new_lines(log, offset)
            _, settings = first(lines, is_client_settings)
            _, headers = first(lines, is_request_headers)
            ms_settings, ms_headers = (settings + skew - t0) * 1000, (headers + skew - t0) * 1000
            print(f"client SETTINGS at {ms_settings:.1f} ms, first request HEADERS at {ms_headers:.1f} ms", flush=True)
            ff.write(f"{ms_headers:.3f}\n")
            fs.write(f"{ms_settings:.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
