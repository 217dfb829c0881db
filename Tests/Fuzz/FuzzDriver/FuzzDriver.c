#include "FuzzDriver.h"

// libFuzzer's entry point for programs that have their own main (LLVM 11+, in libclang_rt.fuzzer).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

int apns_fuzz_driver_run(int argc, char **argv, int (*callback)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, callback);
}
