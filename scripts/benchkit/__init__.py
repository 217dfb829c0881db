"""The benchmarks of ISSUE-12 (scripts/bench.sh runs `python3 -m benchkit`): options, processes and pinning,
statistics, the printed table and one module a row. Standard library only."""
