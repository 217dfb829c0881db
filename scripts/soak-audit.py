#!/usr/bin/env python3
"""Audits a soak: a campaign's result file against the mock's log of accepted notifications.

  scripts/soak-audit.py --campaign c.ndjson --results r.ndjson --accepted accepted.ndjson \
      --counters counters.json --kills K --connections C [--bound 150]

Checks (each failure is printed; the exit status is 1 if any):
  1. exactly one final result line per campaign record (keyed by file and line), none for a line not in it;
  2. every `delivered` token was accepted by the mock (delivered is a subset of accepted);
  3. no token was accepted twice (the campaign's tokens are distinct);
  4. every accepted token ended `delivered` or `in_doubt` (never `retryable`, `not_sent`...: replaying those
     would send a notification twice);
  5. in doubt at most BOUND per lost connection, counting the mock's injected drops and, for each `kill -9`,
     every connection of the killed run.
Prints the figures either way.
"""
import argparse
import collections
import json
import sys


def read_ndjson(path):
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                yield number, json.loads(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaign", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--accepted", required=True)
    parser.add_argument("--counters", required=True)
    parser.add_argument("--kills", type=int, default=0)
    parser.add_argument("--connections", type=int, default=3)
    parser.add_argument("--bound", type=int, default=150, help="in doubt allowed per lost connection")
    args = parser.parse_args()

    failures = []
    campaign = {number: record["token"] for number, record in read_ndjson(args.campaign)}
    if len(set(campaign.values())) != len(campaign):
        failures.append("the campaign's tokens are not distinct: the audit needs them to be")

    results = collections.defaultdict(list)
    for _, result in read_ndjson(args.results):
        results[result["line"]].append(result)
    outcomes = collections.Counter()
    token_outcome = {}
    missing = [n for n in campaign if n not in results]
    doubled = [n for n, lines in results.items() if len(lines) > 1]
    foreign = [n for n in results if n not in campaign]
    for number, lines in results.items():
        final = lines[-1]
        outcomes[final["outcome"]] += 1
        if number in campaign:
            token_outcome[campaign[number]] = final["outcome"]
    if missing:
        failures.append(f"{len(missing)} records without a result line (first: line {missing[0]})")
    if doubled:
        failures.append(f"{len(doubled)} records with several result lines (first: line {doubled[0]})")
    if foreign:
        failures.append(f"{len(foreign)} result lines for lines not in the campaign (first: line {foreign[0]})")

    accepted = collections.Counter(entry["token"] for _, entry in read_ndjson(args.accepted))
    twice = [token for token, count in accepted.items() if count > 1]
    if twice:
        failures.append(f"{len(twice)} tokens accepted more than once (first: {twice[0]})")
    delivered = {token for token, outcome in token_outcome.items() if outcome == "delivered"}
    not_accepted = delivered - set(accepted)
    if not_accepted:
        failures.append(f"{len(not_accepted)} tokens reported delivered that the mock never accepted")
    unfinished = collections.Counter(
        token_outcome.get(token, "no line") for token in accepted
        if token_outcome.get(token) not in ("delivered", "in_doubt"))
    if unfinished:
        failures.append(f"accepted tokens reported as neither delivered nor in doubt: {dict(unfinished)}")

    with open(args.counters, encoding="utf-8") as handle:
        counters = json.load(handle)
    drops = counters.get("drops", 0)
    lost = drops + args.kills * args.connections
    in_doubt = outcomes.get("in_doubt", 0)
    allowed = args.bound * lost
    if in_doubt > allowed:
        failures.append(f"{in_doubt} in doubt, above {args.bound} per lost connection ({lost} lost: {allowed})")

    print(f"soak audit: {len(campaign)} records, {sum(len(v) for v in results.values())} result lines, "
          f"outcomes {dict(sorted(outcomes.items()))}")
    print(f"  mock: {counters.get('requests', 0)} requests, {sum(accepted.values())} accepted, {drops} drops, "
          f"{counters.get('goaways', 0)} GOAWAYs, {counters.get('stream_limit_lowerings', 0)} stream-limit drops, "
          f"{counters.get('fault_answers', 0)} fault answers, {counters.get('connections', 0)} connections")
    per_lost = in_doubt / lost if lost else 0.0
    print(f"  in doubt: {in_doubt} over {lost} lost connections ({drops} dropped by the mock, {args.kills} kills x "
          f"{args.connections}): {per_lost:.1f} per lost connection, bound {args.bound}")
    for failure in failures:
        print(f"  FAIL: {failure}")
    print("soak audit: " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
