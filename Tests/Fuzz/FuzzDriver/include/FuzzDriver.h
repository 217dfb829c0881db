// Runs libFuzzer from a Swift executable's own main (SwiftPM gives every executable one, so libFuzzer's main
// never links in): parses libFuzzer's arguments and calls `callback` with each input.
#ifndef APNS_BULK_FUZZ_DRIVER_H
#define APNS_BULK_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

int apns_fuzz_driver_run(int argc, char **argv, int (*callback)(const uint8_t *data, size_t size));

#endif
