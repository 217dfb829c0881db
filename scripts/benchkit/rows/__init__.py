"""One module a row (or a pair of rows sharing a set-up), each with run(bench)."""
