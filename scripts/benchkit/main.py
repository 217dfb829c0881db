"""The run: options, what the benchmark needs (installed when missing), the build, the machine, the inputs, each
selected row, the summary; everything it started stopped and its directory removed at the end."""
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from . import options, procs
from .bench import AUTH, PAYLOAD, TOKEN, Bench
from .procs import BenchFailure
from .rows import instructions, mock_nghttpd, mock_send, proxy, rss, rtt, send_nghttpd, startup, validate
from .table import Table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def quiet(argv):
    """Whether argv succeeds (its output dropped)."""
    try:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def missing_packages(opts):
    """The Debian packages of what this run needs and lacks."""
    have = shutil.which
    need = []
    if not have("pkg-config"):
        need.append("pkg-config")
    if not quiet(["pkg-config", "--exists", "libnghttp2"]):
        need.append("libnghttp2-dev")
    if not quiet(["pkg-config", "--exists", "openssl"]):
        need.append("libssl-dev")
    for command, package in (("openssl", "openssl"), ("nghttpd", "nghttp2-server"), ("h2load", "nghttp2-client"),
                             ("python3", "python3")):
        if not have(command):
            need.append(package)
    if not os.access("/usr/bin/time", os.X_OK):
        need.append("time")
    for command, package in (("ps", "procps"), ("taskset", "util-linux")):
        if not have(command):
            need.append(package)
    if opts.row(12) and not have("tinyproxy"):
        need.append("tinyproxy")
    if opts.row(9):
        for command, package in (("valgrind", "valgrind"), ("strip", "binutils")):
            if not have(command):
                need.append(package)
    return need


def install(need):
    print(f"bench: installing {' '.join(need)}", file=sys.stderr, flush=True)
    sudo = [] if os.getuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env, check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *need], env=env,
                   stdout=sys.stderr, check=True)


def first_line(argv):
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    except OSError as e:
        return str(e)
    return out.splitlines()[0] if out else ""


def load_average():
    """uptime's load averages (the text after "load average:")."""
    text = first_line(["uptime"])
    return text.split("load average:", 1)[1] if "load average:" in text else ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(": ", 1)[1].strip()
    except OSError:
        pass
    return ""


def describe_machine(opts, binary, pinning):
    print("== machine")
    print(f"nproc {len(os.sched_getaffinity(0))}; CPU {cpu_model()}; kernel {os.uname().release}")
    print(f"{first_line(['swift', '--version'])}; {first_line(['nghttpd', '--version'])};"
          f" {first_line(['h2load', '--version'])}; {first_line(['python3', '--version'])}")
    commit = first_line(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"binary {binary}; commit {commit}; {now}; load at start:{load_average()}")
    print(f"{pinning.describe()}; rounds {opts.rounds} (interleaved); rows {opts.rows}")
    with open("/proc/loadavg") as f:
        one_minute = f.read().split()[0]
    if float(one_minute) >= 1.5:
        print(f"warning: load {one_minute} (1 min): other processes compete for the cores, figures are noisy")
    print(f"sizes: requests {opts.records}, validate {opts.validate_records}, send RSS {opts.rss_small}/{opts.rss_large},"
          f" filter RSS {opts.dup_small}/{opts.dup_large}, starts {opts.starts}, instructions"
          f" {opts.instr_records}/{2 * opts.instr_records}, RTT rows {opts.rtt_records} at"
          f" {'/'.join(str(r) for r in opts.rtts)} ms", flush=True)


def build(product):
    subprocess.run(["swift", "build", "-c", "release", "--product", product], stdout=sys.stderr, check=True)
    return os.path.join(os.getcwd(), ".build/release", product)


def make_inputs(b):
    """The server's certificate, its document root (a POST on a path that exists gets 200), the payload, the JWT."""
    work = b.work
    rc = b.bounded(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", b.path("key.pem"), "-out", b.path("cert.pem")], stderr=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL)
    if rc != 0:
        raise BenchFailure("openssl could not make the server's certificate")
    os.makedirs(os.path.join(work, "htdocs/3/device"), exist_ok=True)
    open(os.path.join(work, "htdocs/3/device", TOKEN), "w").close()
    with open(b.path("payload.json"), "w") as f:
        f.write(PAYLOAD)
    token = subprocess.run([b.bin, "token", *AUTH], stdout=subprocess.PIPE, text=True,
                           timeout=procs.seconds(b.opts.step_timeout))
    if token.returncode != 0:
        raise BenchFailure(f"apns-bulk token exited {token.returncode}")
    b.jwt = token.stdout.strip()


def run_rows(b):
    o = b.opts
    if o.row(1):
        send_nghttpd.run(b)
    if o.row(2) or o.row(5):
        print(f"== generating {o.validate_records} distinct records", flush=True)
        b.gen_campaign(o.validate_records, b.path("distinct.ndjson"))
    if o.row(2):
        validate.run(b)
    if o.row(3):
        mock_nghttpd.run(b)
    if o.row(4):
        rss.run_send_rss(b)
    if o.row(5):
        rss.run_filter_rss(b)
    if o.row(6):
        startup.run(b)
    if o.row(7) or o.row(8):
        mock_send.run(b)
    if o.row(10) or o.row(11) or o.row(12):
        rtt.prepare(b)
    if o.row(10):
        rtt.run_rtt(b)
    if o.row(11):
        rtt.run_drops(b)
    if o.row(12):
        proxy.run(b)
    if o.row(9):
        instructions.run(b)


def _terminated(signum, _frame):
    raise SystemExit(128 + signum)


def main(argv=None, environ=None):
    argv = sys.argv[1:] if argv is None else argv
    environ = os.environ if environ is None else environ
    try:
        opts = options.parse(argv, environ)
    except options.HelpRequested:
        print(options.USAGE, end="")
        return 0
    except options.UsageError as e:
        print(f"bench: {e}", file=sys.stderr)
        if e.show_usage:
            print(options.USAGE, end="", file=sys.stderr)
        return 64

    os.chdir(ROOT)
    os.environ["LC_ALL"] = "C"
    # The tools (python3 of row 2's loop and of gen-campaign.py included) are found on the caller's PATH, as the
    # old script found them: an interpreter shim (pyenv) may have put its own directory first for this process.
    os.environ["PATH"] = os.environ.get("BENCH_CALLER_PATH") or os.environ.get("PATH", "")
    os.environ["PATH"] += ":/usr/sbin:/sbin"
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGHUP, _terminated)
    processes = procs.Processes()
    work = None
    try:
        need = missing_packages(opts)
        if need:
            install(need)
        if os.environ.get("APNS_BULK_BIN"):
            binary = os.path.realpath(os.environ["APNS_BULK_BIN"])  # built elsewhere (it should be a release build)
        else:
            binary = build("apns-bulk")
        relay = None
        if opts.row(10):  # the relay of row 10: the one next to a binary built elsewhere, else built here
            relay = os.path.join(os.path.dirname(binary), "rtt-relay")
            if not os.environ.get("APNS_BULK_BIN") or not os.access(relay, os.X_OK):
                relay = build("rtt-relay")
        work = tempfile.mkdtemp()
        pinning = procs.Pinning.from_cores(os.sched_getaffinity(0))
        table = Table()
        b = Bench(opts, work, binary, relay, pinning, processes, table)
        describe_machine(opts, binary, pinning)
        make_inputs(b)
        run_rows(b)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M UTC")
        print(f"== summary ({now}, load at the end:{load_average()})")
        for line in table.lines:
            print(line)
        return 0
    except BenchFailure as e:
        print(f"bench: FAIL: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"bench: FAIL: {' '.join(map(str, e.cmd))} exited {e.returncode}", file=sys.stderr)
        return 1
    finally:
        processes.stop_all()
        if work:
            shutil.rmtree(work, ignore_errors=True)
