#!/usr/bin/env python3
"""Generates a synthetic NDJSON or CSV campaign for benchmarks and memory checks.

Tokens are unique 32-byte hex strings derived from the record number. A fraction of them end in the mock's
suffix rules ("dead" -> 410 Unregistered, "0bad" -> BadDeviceToken) so prune paths are exercised.

  scripts/gen-campaign.py --records 1000000 --out /tmp/campaign.ndjson [--dead 0.01] [--bad 0.001] [--csv]
"""
import argparse
import hashlib
import sys


RULE_SUFFIXES = ("dead", "0bad", "f0f0")  # the mock's suffix rules


def token(n: int, suffix: str = "") -> str:
    digest = hashlib.sha256(n.to_bytes(8, "big")).hexdigest()
    plain = digest[: 64 - len(suffix)]
    if not suffix and plain.endswith(RULE_SUFFIXES):
        plain = plain[:-1] + ("1" if plain[-1] != "1" else "2")  # never dead by accident
    return plain + suffix


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, required=True)
    parser.add_argument("--out", default="-")
    parser.add_argument("--dead", type=float, default=0.0, help="fraction of tokens the mock answers 410")
    parser.add_argument("--bad", type=float, default=0.0, help="fraction of tokens the mock answers BadDeviceToken")
    parser.add_argument("--csv", action="store_true", help="write CSV (token,name,count) for a template instead")
    args = parser.parse_args()

    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8", newline="")
    dead_every = int(1 / args.dead) if args.dead > 0 else 0
    bad_every = int(1 / args.bad) if args.bad > 0 else 0
    if args.csv:
        out.write("token,name,count\r\n")
    for n in range(1, args.records + 1):
        suffix = ""
        if dead_every and n % dead_every == 0:
            suffix = "dead"
        elif bad_every and n % bad_every == 0:
            suffix = "0bad"
        t = token(n, suffix)
        if args.csv:
            out.write(f'{t},"User {n}",{n % 100}\r\n')
        else:
            out.write('{"token":"%s","payload":{"aps":{"alert":{"title":"Hello","body":"Record %d"},"badge":%d}}}\n'
                      % (t, n, n % 100))
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
